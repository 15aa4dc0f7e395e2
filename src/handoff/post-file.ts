import { closeSync, existsSync, openSync, unlinkSync } from "node:fs";
import { BatonError, describeSystemError } from "../base/errors.js";
import { writeFileAtomic } from "../base/atomic-write.js";

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
 * The last resort when writePostFile failed (a full disk): an empty POST.err, which needs an inode but no data block,
 * so the next step still ends instead of waiting forever (readers accept an empty post file). Created in place: an
 * empty file has no half-written state to hide. Returns the path, or undefined when even that failed.
 */
export function writeEmptyErrorPostFile(postFile: string): string | undefined {
  const path = postFilePath(postFile, false);
  try {
    closeSync(openSync(path, "w"));
    removeIfPresent(postFile);
    return path;
  } catch {
    return undefined;
  }
}

/** Not rmSync({ force: true }): that loads fs/rimraf, ~0.5 ms on every step's way to its post file (make bench). */
function removeIfPresent(path: string): void {
  if (!existsSync(path)) return;
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}
