import { existsSync, realpathSync, unlinkSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { BatonError, describeSystemError, usageError } from "../base/errors.js";
import { writeFileAtomic } from "../base/atomic-write.js";
import { NAME_MAX } from "../base/files.js";
import type { StepOptions } from "../cli/step-options.js";
import { livenessFileOf, turnLivenessFileInto, wakeFileOf } from "./liveness-lock.js";

// The baton itself: POST on success, POST.err on failure, never both. One line of JSON; readers also accept an
// empty file, as older tools write.

export type Reason =
  | "Completed" | "Error" | "Skipped" | "WaitTimeout" | "Signaled" | "CommandNotFound" | "CommandNotExecutable"
  | "TimeoutExceeded" | "Cancelled" | "ResultsTooLarge" | "PreviousStepDied";

export interface PostRecord {
  exitCode: number;
  reason: Reason;
  startedAt: string;
  finishedAt: string;
}

/**
 * Before anything waits or runs (after src/cli/check-paths.ts made the folders): every name baton derives from POST
 * must be valid, or a step would run its command and then hand on nothing: POST.err, and with the debug breakpoints
 * POST.breakpointexit.err and POST.beforestepexit.err (the liveness file's name and the temporary names are cut to
 * fit). And no output file may be one of them: the command's output written into POST
 * would start the next step while the command still runs. Usage errors.
 */
export function checkPostFileNames(
  options: Pick<StepOptions, "postFile" | "waitFiles" | "breakpointOnFailure" | "debugBeforeStep" | "terminationPath" | "stdoutPath" | "stderrPath">,
): void {
  const postFile = options.postFile;
  if (postFile === undefined) return;
  const post = basename(postFile);
  const derived = [`${post}.err`];
  if (options.breakpointOnFailure) derived.push(`${post}.breakpointexit.err`);
  if (options.debugBeforeStep) derived.push(`${post}.beforestepexit.err`);
  const longest = derived.reduce((a, b) => (Buffer.byteLength(b) > Buffer.byteLength(a) ? b : a));
  if (Buffer.byteLength(longest) > NAME_MAX) {
    throw usageError(`post file name ${post} is too long: ${longest} must fit ${NAME_MAX} bytes`);
  }
  const handOn = [postFile, `${postFile}.err`, livenessFileOf(postFile), wakeFileOf(postFile)].map(samePath);
  const written: [string | undefined, string][] = [
    [options.terminationPath, "--termination-path"],
    [options.stdoutPath, "--stdout-path"],
    [options.stderrPath, "--stderr-path"],
  ];
  for (const [file, option] of written) {
    if (file !== undefined && handOn.includes(samePath(file))) {
      throw usageError(`${option} ${file} is the post file or one of its companions: the next step would start while the command runs`);
    }
  }
  // A step waiting for its own post file would wait for ever: its own lock says its writer lives.
  for (const file of options.waitFiles) {
    if (handOn.includes(samePath(file))) {
      throw usageError(`wait file ${file} is this step's own post file or one of its companions: the step would wait for itself`);
    }
  }
}

/**
 * `file` with its folder's symlinks resolved (the folders exist by now), to compare two paths. A working folder whose
 * path is longer than PATH_MAX has no name getcwd(2) can give (ERANGE): relative paths are then compared as given.
 */
function samePath(file: string): string {
  let folder: string;
  try {
    folder = resolve(dirname(file));
  } catch {
    return join(dirname(file), basename(file));
  }
  try {
    return join(realpathSync(folder), basename(file));
  } catch {
    return join(folder, basename(file));
  }
}

export function postFilePath(postFile: string, success: boolean): string {
  return success ? postFile : `${postFile}.err`;
}

export function writePostFile(postFile: string, success: boolean, record: PostRecord): string {
  const path = postFilePath(postFile, success);
  try {
    // Remove a stale opposite first (a restarted container), so the two never exist at once.
    removeIfPresent(postFilePath(postFile, !success));
    writeFileAtomic(path, `${JSON.stringify(record)}\n`);
  } catch (error) {
    throw new BatonError(`cannot write post file ${path}: ${describeSystemError(error)}`);
  }
  return path;
}

/**
 * A step that holds its liveness lock removes POST and POST.err left by an earlier run: a container Kubernetes
 * restarted, on the same volume. Left there, they would start (or end) a step that begins to wait while this run's
 * command runs. Removed only under the lock, so a waiter that looks after finds a living writer and waits for it. A
 * waiter that already acted on the earlier outcome is not called back: the restart cannot undo that.
 */
export function clearEarlierOutcome(postFile: string): void {
  for (const path of [postFile, postFilePath(postFile, false)]) {
    try {
      removeIfPresent(path);
    } catch {
      // not ours to remove (a read-only file in a writable folder cannot be; a folder at that name): the hand-on says so
    }
  }
}

/**
 * The last resort when writePostFile failed (a full disk): an empty POST.err, which needs an inode but no data block,
 * so the next step still ends instead of waiting forever (readers accept an empty post file). Written as every file is
 * (a new temporary file, then rename), so a symlink planted at POST.err is replaced, not followed. Returns the path, or
 * undefined when even that failed.
 */
export function writeEmptyErrorPostFile(postFile: string): string | undefined {
  const path = postFilePath(postFile, false);
  try {
    writeFileAtomic(path, "");
  } catch {
    // Out of inodes: the liveness file's own inode becomes POST.err.
    if (!turnLivenessFileInto(postFile, path)) return undefined;
  }
  try {
    removeIfPresent(postFile);
  } catch {
    // POST.err is there: a stale POST beside it is for the next run to clear
  }
  return path;
}

/** Not rmSync({ force: true }): that loads fs/rimraf on every step's way to its post file (docs/performance.md, row 1). */
function removeIfPresent(path: string): void {
  if (!existsSync(path)) return;
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}
