import { rmSync } from "node:fs";
import { BatonError, describeSystemError } from "../errors.js";
import { writeFileAtomic } from "./atomic-write.js";

// The baton itself: POST on success, POST.err on failure, never both. One line of JSON; readers also accept an
// empty file, as older tools write.

export type Reason =
  | "Completed" | "Error" | "Skipped" | "WaitTimeout" | "Signaled" | "CommandNotFound" | "CommandNotExecutable"
  | "TimeoutExceeded" | "Cancelled" | "ResultsTooLarge";

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
    rmSync(postFilePath(postFile, !success), { force: true });
    writeFileAtomic(path, `${JSON.stringify(record)}\n`);
  } catch (error) {
    throw new BatonError(`cannot write post file ${path}: ${describeSystemError(error)}`);
  }
  return path;
}
