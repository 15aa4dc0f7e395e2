import { isUtf8 } from "node:buffer";
import { readFileSync } from "node:fs";
import { dirname } from "node:path";
import { describeSystemError, usageError } from "../base/errors.js";
import { NAME_MAX, PATH_MAX, statOrUndefined } from "../base/files.js";
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
    checkNamesAFile(options.postFile, "post file");
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
    checkNamesAFile(file, option);
    if (statOrUndefined(file)?.isDirectory()) throw usageError(`${option} ${file} is a directory`);
    makeFolder(dirname(file), option);
  }
  if (options.cancelFile !== undefined && statOrUndefined(options.cancelFile)?.isDirectory()) {
    throw usageError(`--cancel-file ${options.cancelFile} is a directory`);
  }
}

/**
 * Refuses a wait file (or a sidecar's stop file) that can never appear: one named with a trailing "/", with a name
 * over NAME_MAX or a path over PATH_MAX (stat(2) would say ENAMETOOLONG for ever), or below something that is a file.
 */
export function checkCanAppear(file: string, what = "wait file"): void {
  checkNamesAFile(file, what);
  const tooLong = file.split("/").find((name) => Buffer.byteLength(name) > NAME_MAX);
  if (tooLong !== undefined) throw usageError(`${what} ${file} can never appear: a name in it is over ${NAME_MAX} bytes`);
  if (Buffer.byteLength(file) >= PATH_MAX) throw usageError(`${what} ${file} can never appear: its path is over ${PATH_MAX - 1} bytes`);
  for (let folder = dirname(file); ; folder = dirname(folder)) {
    const stats = statOrUndefined(folder);
    if (stats && !stats.isDirectory()) throw usageError(`${what} ${file} can never appear: ${folder} is a file`);
    if (stats || folder === dirname(folder)) return;
  }
}

/**
 * A path baton writes or waits for must name a file: "DIR/" would be found wrong only once the command has run. And
 * it must be UTF-8: Node gives baton its arguments decoded, a byte that is not UTF-8 as U+FFFD, so baton would wait
 * for or write another name than the one given, and the step that uses the real name would never meet it.
 */
export function checkNamesAFile(file: string, what: string): void {
  if (file.endsWith("/")) throw usageError(`${what} ${file} ends with "/": name a file`);
  if (namedAsGiven(file) === undefined) {
    const noErr = what === "post file" || what === "ready file" ? ` (nor writes its .err under another name than the one given)` : "";
    throw usageError(`${what} ${JSON.stringify(file)} is not UTF-8: baton takes UTF-8 paths only${noErr}`);
  }
}

/**
 * `file`, or undefined when it is not the name given: decoded from bytes that are not UTF-8 (U+FFFD in their place).
 * The POST.err of a step refused before it starts goes to the post file's name; under the decoded name it would be a
 * file nobody waits for, perhaps another step's. Not written at all then: the usage error says why.
 */
export function namedAsGiven(file: string | undefined): string | undefined {
  return file !== undefined && file.includes("\uFFFD") && !argvWasUtf8() ? undefined : file;
}

/** false when baton's argv held bytes that are not UTF-8; true when it did not, or /proc cannot tell. Rare: read anew. */
function argvWasUtf8(): boolean {
  try {
    return isUtf8(readFileSync("/proc/self/cmdline"));
  } catch {
    return true;
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
