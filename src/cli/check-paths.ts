import { dirname } from "node:path";
import { describeSystemError, usageError } from "../base/errors.js";
import { statOrUndefined } from "../base/files.js";
import { makeFolders } from "../base/safe-files.js";
import type { StepOptions } from "./step-options.js";

// Checks what can be checked before anything waits or runs, so a misconfigured step fails at once instead of after
// its command ran. Creates the folders baton will write into (Tekton does too): that is also the only sure test.

export function checkStepPaths(options: StepOptions): void {
  for (const file of options.waitFiles) {
    if (statOrUndefined(file)?.isDirectory()) throw usageError(`wait file ${file} is a directory`);
    checkCanAppear(file);
  }
  if (options.postFile !== undefined) {
    if (statOrUndefined(options.postFile)?.isDirectory()) throw usageError(`post file ${options.postFile} is a directory`);
    makeFolder(dirname(options.postFile), "--post-file");
  }
  if (options.stepMetadataDir !== undefined) {
    // Where the step writes $(step.results.<name>.path) and $(step.artifacts.path): they must exist before it runs.
    makeFolder(`${options.stepMetadataDir}/results`, "--step-metadata-dir");
    makeFolder(`${options.stepMetadataDir}/artifacts`, "--step-metadata-dir");
  }
  const written: [string | undefined, string][] = [
    [options.terminationPath, "--termination-path"],
    [options.stdoutPath, "--stdout-path"],
    [options.stderrPath, "--stderr-path"],
  ];
  for (const [file, option] of written) {
    if (file === undefined) continue;
    if (statOrUndefined(file)?.isDirectory()) throw usageError(`${option} ${file} is a directory`);
    makeFolder(dirname(file), option);
  }
  if (options.cancelFile !== undefined && statOrUndefined(options.cancelFile)?.isDirectory()) {
    throw usageError(`--cancel-file ${options.cancelFile} is a directory`);
  }
}

/** Refuses a wait file that can never appear: one named with a trailing "/", or below something that is a file. */
function checkCanAppear(file: string): void {
  if (file.endsWith("/")) throw usageError(`wait file ${file} ends with "/": name a file`);
  for (let folder = dirname(file); ; folder = dirname(folder)) {
    const stats = statOrUndefined(folder);
    if (stats && !stats.isDirectory()) throw usageError(`wait file ${file} can never appear: ${folder} is a file`);
    if (stats || folder === dirname(folder)) return;
  }
}

export function makeFolder(folder: string, option: string): void {
  try {
    makeFolders(folder);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === "EEXIST" || code === "ENOTDIR" ? "a part of that path is a file" : describeSystemError(error);
    throw usageError(`cannot create folder ${folder} for ${option}: ${why}`);
  }
}
