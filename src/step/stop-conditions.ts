import type { StepOptions } from "../cli/step-options.js";
import { after, type Deadline } from "../base/clock.js";
import { emit } from "../report/events.js";
import type { RunningCommand } from "../run/run-command.js";
import type { waitForFile } from "../handoff/wait-for-file.js";

// What stops a step on purpose: --timeout expiring, or a non-empty --cancel-file. On a running command both do the
// same: SIGTERM to its process group, SIGKILL to the group --grace-period later (RunningCommand.stop). The cancel file
// is watched from the step's start: a step cancelled while it still waits never starts its command. --timeout counts
// from the end of the wait, as Tekton's does: the work before the command (a `when`'s CEL) is inside it.

export const STOP_SIGNAL: NodeJS.Signals = "SIGTERM";

export type StopReason = "TimeoutExceeded" | "Cancelled";

export interface StopConditions {
  /** Why the step was stopped, once it was. */
  reason(): StopReason | undefined;
  /** The wait is over: arm --timeout. */
  waitOver(): void;
  /** The command has started: stop it at once if the step was stopped in between. */
  started(command: RunningCommand): void;
  /** Disarms the timer and the cancel-file watch (the command has ended, or never will start). */
  clear(): void;
}

export function watchStopConditions(
  options: Pick<StepOptions, "timeoutMs" | "gracePeriodMs" | "cancelFile" | "safetyPollMs">,
  warn: (message: string) => void,
  wait: typeof waitForFile,
  /** Called when the step is stopped before its command started (it ends the wait, or the work before the command). */
  stoppedBeforeStart: (reason: StopReason) => void,
): StopConditions {
  let reason: StopReason | undefined;
  let command: RunningCommand | undefined;
  let timer: Deadline | undefined;
  const stop = (why: StopReason, message: string, fields: Record<string, unknown> = {}) => {
    if (reason) return;
    reason = why;
    emit("stopping", { reason: why, signal: STOP_SIGNAL, ...fields });
    if (command) {
      // The signal first: the line may wait for a slow log reader (src/base/warn.ts).
      command.stop(STOP_SIGNAL, options.gracePeriodMs);
      warn(`${message}: ${STOP_SIGNAL} to its process group, SIGKILL after ${options.gracePeriodMs} ms (--grace-period)`);
    } else {
      warn(`${message} before the command started: it will not start`);
      stoppedBeforeStart(why);
    }
  };

  // Only with a cancel file: a first abort() compiles Node's AbortController and DOMException code, which
  // would sit between the command's exit and the post file of every step that has none (docs/design.md#eager-functions).
  const cancelFile = options.cancelFile;
  let cancelWatch: AbortController | undefined;
  if (cancelFile !== undefined) {
    cancelWatch = new AbortController();
    // Not a post file: CANCEL.err means nothing for a cancel file, and must not end its watch.
    wait(cancelFile, { content: true, postFile: false, signal: cancelWatch.signal, safetyPollMs: options.safetyPollMs, warn }).then(
      () => stop("Cancelled", `cancelled by ${cancelFile}`, { file: cancelFile }),
      () => {}, // aborted by clear()
    );
  }

  return {
    reason: function stoppedFor() {
      return reason;
    },
    waitOver: function waitOver() {
      if (options.timeoutMs > 0) {
        timer = after(options.timeoutMs, () => {
          const what = command ? "the command ran" : "the step took";
          stop("TimeoutExceeded", `${what} longer than ${options.timeoutMs} ms (--timeout)`);
        });
      }
    },
    started: function started(running: RunningCommand) {
      command = running;
      if (reason) running.stop(STOP_SIGNAL, options.gracePeriodMs); // stopped as it started
    },
    clear: function clear() {
      timer?.clear();
      cancelWatch?.abort();
    },
  };
}
