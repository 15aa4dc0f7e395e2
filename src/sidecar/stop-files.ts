import { setMaxListeners } from "node:events";
import { livenessFileOf } from "../handoff/liveness-lock.js";
import { lookFor, waitForFile, type WaitOutcome } from "../handoff/wait-for-file.js";

// A sidecar stops when the steps are over: when any of its stop files appears, or the .err a failed step leaves
// instead (a failed pipeline must end too).

export interface StopWaitOptions {
  /** Aborting ends the wait: the promise rejects with signal.reason. */
  signal: AbortSignal;
  safetyPollMs: number | undefined;
  warn: (message: string) => void;
}

/** What stopped the sidecar, as told in its events and messages. */
function stopFileName(file: string, outcome: WaitOutcome): string {
  if (outcome === "failed") return `${file}.err`;
  // The step that would write it was killed (its liveness lock is free): it never will; the steps are over.
  if (outcome === "died") return livenessFileOf(file);
  return file;
}

/** What ended the wait: the path to name (a stop file, its .err, or its liveness file), and whether its writer died. */
export interface StopFound {
  name: string;
  /** The stop file itself. */
  file: string;
  writerDied: boolean;
}

/** Resolves with the stop file that appeared first, or the first one whose writer died without writing it. */
export async function waitForAnyStopFile(files: readonly string[], options: StopWaitOptions): Promise<StopFound> {
  // One controller for all the waits: the first file found, or the caller's abort, ends every one of them.
  const waits = new AbortController();
  // Each wait listens on it: more than 10 stop files must not print Node's MaxListenersExceededWarning.
  setMaxListeners(files.length + 1, waits.signal);
  const endAll = () => waits.abort(options.signal.reason);
  options.signal.addEventListener("abort", endAll);
  if (options.signal.aborted) endAll();
  try {
    return await Promise.race(
      files.map(async (file) => {
        const outcome = await waitForFile(file, {
          content: false,
          signal: waits.signal,
          safetyPollMs: options.safetyPollMs,
          warn: options.warn,
        });
        return { name: stopFileName(file, outcome), file, writerDied: outcome === "died" };
      }),
    );
  } finally {
    options.signal.removeEventListener("abort", endAll);
    if (!waits.signal.aborted) waits.abort();
  }
}

/** One look, without waiting: the stop file (or .err) that is already there, if any. */
export function stopFileThere(files: readonly string[]): string | undefined {
  for (const file of files) {
    const outcome = lookFor(file, false);
    if (outcome) return stopFileName(file, outcome);
  }
  return undefined;
}
