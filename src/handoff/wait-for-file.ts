import { holderDied } from "./liveness-lock.js";
import { BatonError, describeSystemError, EXIT_USAGE } from "../base/errors.js";
import { statOrUndefined } from "../base/files.js";
import { waitForHandOff } from "./watch-hand-off.js";

// Waits for a previous step's post file (or any file: a cancel file, a ready file). watch-hand-off.ts says when to
// look: the writer's lock when the writer is a baton, the folder's events (and a safety poll) otherwise; and when its
// writer died (wait-states.ts: the state writer-died).

export const DEFAULT_SAFETY_POLL_MS = 1000;

/**
 * "found": the file is there (non-empty if asked); "failed": the previous step left FILE.err instead; "died": the
 * previous step's baton died without leaving either (its liveness lock, on FILE.baton-live, is free).
 */
export type WaitOutcome = "found" | "failed" | "died";

export interface WaitOptions {
  /** Count the file only once it is non-empty (the downward-API "ready" file exists empty first). */
  content: boolean;
  /** Aborting ends the wait: the promise rejects with signal.reason. */
  signal: AbortSignal;
  /** Interval of the safety-net poll while the writer is not a baton (default DEFAULT_SAFETY_POLL_MS). */
  safetyPollMs?: number;
  warn: (message: string) => void;
  /**
   * A post file (the default): FILE.err counts as the previous step's failure, and FILE.baton-live tells whether its writer
   * still lives. false for a file that has neither (a cancel file).
   */
  postFile?: boolean;
}

export function waitForFile(file: string, options: WaitOptions): Promise<WaitOutcome> {
  const postFile = options.postFile ?? true;
  return waitForHandOff<WaitOutcome>(file, () => lookForFile(file, options.content, postFile), {
    died: "died",
    signal: options.signal,
    followWriter: postFile,
    safetyPollMs: options.safetyPollMs ?? DEFAULT_SAFETY_POLL_MS,
    warn: options.warn,
    refused: (path, error) => new BatonError(`cannot watch ${path} for ${file}: ${describeSystemError(error)}`),
  });
}

/**
 * One look at the file and, for a post file, its .err sibling and its writer's liveness lock. The file itself wins: a
 * step that succeeded is never skipped.
 */
export function lookFor(file: string, content: boolean, postFile = true): WaitOutcome | undefined {
  const seen = lookForFile(file, content, postFile);
  if (seen || !postFile || !holderDied(file)) return seen;
  // The lock was free: look again, as the writer writes its post file before it exits (and so before the lock goes).
  return lookForFile(file, content, postFile) ?? "died";
}

function lookForFile(file: string, content: boolean, errSibling: boolean): WaitOutcome | undefined {
  const stats = statOrUndefined(file);
  if (stats?.isDirectory()) throw new BatonError(`wait file ${file} is a directory`, EXIT_USAGE);
  if (stats && (!content || stats.size > 0)) return "found";
  if (errSibling && statOrUndefined(`${file}.err`)) return "failed";
  return undefined;
}
