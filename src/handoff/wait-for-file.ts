import { every } from "../base/clock.js";
import { holderDied, LIVENESS_POLL_MS } from "./liveness-lock.js";
import { BatonError, describeSystemError, EXIT_USAGE } from "../base/errors.js";
import { statOrUndefined } from "../base/files.js";
import { watchFolderOf } from "./watch-folder.js";

// Waits for a previous step's post file. Events do the work; the safety poll only catches what inotify cannot see
// (a write to a symlink target outside the watched folder, filesystems without events).

export const DEFAULT_SAFETY_POLL_MS = 1000;

/**
 * "found": the file is there (non-empty if asked); "failed": the previous step left FILE.err instead; "died": the
 * previous step's baton died without leaving either (its liveness lock, FILE.lock, is free).
 */
export type WaitOutcome = "found" | "failed" | "died";

export interface WaitOptions {
  /** Count the file only once it is non-empty (the downward-API "ready" file exists empty first). */
  content: boolean;
  /** Aborting ends the wait: the promise rejects with signal.reason. */
  signal: AbortSignal;
  /** Interval of the safety-net poll (default DEFAULT_SAFETY_POLL_MS). */
  safetyPollMs?: number;
  warn: (message: string) => void;
  /**
   * A post file (the default): FILE.err counts as the previous step's failure, and FILE.lock tells whether its writer
   * still lives. false for a file that has neither (a cancel file).
   */
  postFile?: boolean;
}

export function waitForFile(file: string, options: WaitOptions): Promise<WaitOutcome> {
  const postFile = options.postFile ?? true;
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (settle: () => void) => {
      if (done) return;
      done = true;
      settle();
      // Tidy up once the caller has moved on: its command is already starting. This is ~1 ms of code run for the
      // first time, which would otherwise sit between the post file and the next command (make bench, row 1).
      setImmediate(() => {
        watch.close();
        clearInterval(poll);
        clearInterval(liveness);
        options.signal.removeEventListener("abort", onAbort);
      });
    };
    const look = () => {
      try {
        const outcome = lookFor(file, options.content, postFile);
        if (outcome) finish(() => resolve(outcome));
      } catch (error) {
        finish(() => reject(error));
      }
    };
    const onAbort = () => finish(() => reject(options.signal.reason));

    // Arm the watch first, then look: a file made in between is then seen by one or the other.
    const watch = watchFolderOf(file, look, options.warn, (path, error) =>
      finish(() => reject(new BatonError(`cannot watch ${path} for ${file}: ${describeSystemError(error)}`))),
    );
    const poll = every(options.safetyPollMs ?? DEFAULT_SAFETY_POLL_MS, look);
    // A death gives no file event: look at the previous step's liveness lock on a clock of its own.
    const liveness = postFile ? every(LIVENESS_POLL_MS, look) : undefined;
    options.signal.addEventListener("abort", onAbort);
    if (options.signal.aborted) onAbort();
    else look();
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
