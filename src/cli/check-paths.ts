import { realpathSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { describeSystemError, usageError } from "../errors.js";
import { lockFileOf } from "../liveness-lock.js";
import { makeFolders, NAME_MAX } from "../safe-files.js";
import { statOrUndefined } from "../wait/watch-folder.js";
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
    checkDerivedNames(options);
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
  if (options.postFile !== undefined) {
    // The command's output written into POST would start the next step while the command still runs.
    const handOn = [options.postFile, `${options.postFile}.err`, lockFileOf(options.postFile)].map(samePath);
    for (const [file, option] of written) {
      if (file !== undefined && handOn.includes(samePath(file))) {
        throw usageError(`${option} ${file} is the post file or one of its companions: the next step would start while the command runs`);
      }
    }
  }
  if (options.cancelFile !== undefined && statOrUndefined(options.cancelFile)?.isDirectory()) {
    throw usageError(`--cancel-file ${options.cancelFile} is a directory`);
  }
}

/**
 * Every name baton derives from POST must be valid, or a step would run its command and then hand on nothing, or run
 * unwatched: POST.err, the liveness lock, and with the debug breakpoints POST.breakpointexit.err and
 * POST.beforestepexit.err (the temporary names are cut to fit: src/safe-files.ts).
 */
function checkDerivedNames(options: StepOptions): void {
  const post = basename(options.postFile!);
  const derived = [`${post}.err`, basename(lockFileOf(options.postFile!))];
  if (options.breakpointOnFailure) derived.push(`${post}.breakpointexit.err`);
  if (options.debugBeforeStep) derived.push(`${post}.beforestepexit.err`);
  const longest = derived.reduce((a, b) => (Buffer.byteLength(b) > Buffer.byteLength(a) ? b : a));
  if (Buffer.byteLength(longest) > NAME_MAX) {
    throw usageError(`post file name ${post} is too long: ${longest} must fit ${NAME_MAX} bytes`);
  }
}

/** `file` with its folder's symlinks resolved (the folders exist by now), to compare two paths. */
function samePath(file: string): string {
  const folder = resolve(dirname(file));
  try {
    return join(realpathSync(folder), basename(file));
  } catch {
    return join(folder, basename(file));
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
