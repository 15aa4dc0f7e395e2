import type { StepOptions } from "../cli/step-options.js";
import { emit } from "../report/events.js";
import type { RunningCommand } from "../run/run-command.js";
import { waitForFile } from "../wait/wait-for-file.js";

// What stops a running command on purpose: --timeout expiring, or a non-empty --cancel-file. Both do the same:
// SIGTERM to the command's process group, SIGKILL to the group --grace-period later (RunningCommand.stop).

export const STOP_SIGNAL: NodeJS.Signals = "SIGTERM";

export type StopReason = "TimeoutExceeded" | "Cancelled";

export interface StopConditions {
  /** Why the command was stopped, once it was. */
  readonly reason: StopReason | undefined;
  /** Disarms the timer and the cancel-file watch (the command has ended). */
  clear(): void;
}

export function watchStopConditions(
  command: RunningCommand,
  options: Pick<StepOptions, "timeoutMs" | "gracePeriodMs" | "cancelFile" | "safetyPollMs">,
  warn: (message: string) => void,
): StopConditions {
  let reason: StopReason | undefined;
  const stop = (why: StopReason, message: string, fields: Record<string, unknown> = {}) => {
    if (reason) return;
    reason = why;
    emit("stopping", { reason: why, signal: STOP_SIGNAL, ...fields });
    warn(`${message}: ${STOP_SIGNAL} to its process group, SIGKILL after ${options.gracePeriodMs} ms (--grace-period)`);
    command.stop(STOP_SIGNAL, options.gracePeriodMs);
  };

  const timer =
    options.timeoutMs > 0
      ? setTimeout(() => stop("TimeoutExceeded", `the command ran longer than ${options.timeoutMs} ms (--timeout)`), options.timeoutMs)
      : undefined;

  const cancelWatch = new AbortController();
  const cancelFile = options.cancelFile;
  if (cancelFile !== undefined) {
    waitForFile(cancelFile, { content: true, signal: cancelWatch.signal, safetyPollMs: options.safetyPollMs, warn }).then(
      // "failed" would mean CANCEL.err exists, which means nothing for a cancel file: keep running.
      (outcome) => outcome === "found" && stop("Cancelled", `cancelled by ${cancelFile}`, { file: cancelFile }),
      () => {}, // aborted by clear()
    );
  }

  return {
    get reason() {
      return reason;
    },
    clear() {
      clearTimeout(timer);
      cancelWatch.abort();
    },
  };
}
