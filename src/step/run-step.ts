import type { StepOptions } from "../cli/step-options.js";
import { BatonError, EXIT_FAILURE } from "../errors.js";
import { emit } from "../report/events.js";
import { writePostFile, type Reason } from "../report/post-file.js";
import { writeExitCodeFile } from "../report/step-metadata.js";
import { EXIT_NOT_FOUND, EXIT_TIMEOUT, signalNumber } from "../run/exit-code.js";
import { isTrackedChild } from "../run/children.js";
import { shouldBecomeSubreaper, startReaping } from "../run/reaper.js";
import { startCommand, type RunningCommand } from "../run/run-command.js";
import { endsWait, onSignal } from "../signals.js";
import { waitForFile } from "../wait/wait-for-file.js";

// The step lifecycle, top to bottom: wait for the previous step, run the command, hand the baton on.
// Every outcome that baton survives ends in report(): a post file (or .err) is always written.

/** Why a wait ended early; used as an AbortSignal reason. */
class WaitEnded {
  constructor(readonly reason: Reason, readonly exitCode: number, readonly message?: string) {}
}

export interface StepIO {
  warn(message: string): void;
}

export async function runStep(options: StepOptions, io: StepIO): Promise<number> {
  const waitStarted = now();
  let command: RunningCommand | undefined;
  const waitAbort = new AbortController();

  // Before the command runs, a terminating signal ends the wait; once it runs, every signal goes to its group.
  onSignal((signal) => {
    emit("signal", { signal, to: command?.pid ?? null });
    if (command) command.signal(signal);
    else if (endsWait(signal) && !waitAbort.signal.aborted) {
      waitAbort.abort(new WaitEnded("Signaled", 128 + signalNumber(signal), `stopped by ${signal} while waiting`));
    }
  });

  const report = (exitCode: number, reason: Reason, startedAt: string, ranCommand: boolean): number => {
    if (ranCommand && options.stepMetadataDir) writeExitCodeFile(options.stepMetadataDir, exitCode);
    if (options.postFile) {
      const file = writePostFile(options.postFile, exitCode === 0, { exitCode, reason, startedAt, finishedAt: now() });
      emit("post", { file });
    }
    emit("done", { exitCode });
    return exitCode;
  };

  // 1. Wait for each file in order.
  const stopWaiting = waitTimer(options.waitTimeoutMs, waitAbort);
  try {
    for (const file of options.waitFiles) {
      emit("waiting", { file });
      const outcome = await waitForFile(file, {
        content: options.waitFileContent,
        signal: waitAbort.signal,
        safetyPollMs: options.safetyPollMs,
        warn: io.warn,
      });
      if (outcome === "failed") {
        emit("skipped", { file });
        io.warn(`skipping the command: the previous step failed (${file}.err)`);
        return report(EXIT_FAILURE, "Skipped", waitStarted, false);
      }
      emit("ready", { file });
    }
  } catch (error) {
    if (!(error instanceof WaitEnded)) {
      report(error instanceof BatonError ? error.exitCode : EXIT_FAILURE, "Error", waitStarted, false);
      throw error;
    }
    if (error.message) io.warn(error.message);
    return report(error.exitCode, error.reason, waitStarted, false);
  } finally {
    stopWaiting();
  }
  // A signal that arrived in the same turn as the last file: the wait was over, but the step was still told to stop.
  if (waitAbort.signal.aborted) {
    const ended = waitAbort.signal.reason as WaitEnded;
    if (ended.message) io.warn(ended.message);
    return report(ended.exitCode, ended.reason, waitStarted, false);
  }

  // 2. Run the command. As PID 1 (or a subreaper) baton also inherits every orphan it leaves: reap them.
  startReaping({ isOurChild: isTrackedChild, warn: io.warn, subreaper: shouldBecomeSubreaper() });
  const startedAt = now();
  command = startCommand(options.command);
  if (command.pid !== undefined) emit("command", { argv: options.command, child: command.pid });
  const result = await command.done;
  emit("exited", { exitCode: result.exitCode, signal: result.signal });

  // 3. Hand the baton on.
  if (result.spawnError) {
    io.warn(result.spawnError);
    const reason = result.exitCode === EXIT_NOT_FOUND ? "CommandNotFound" : "CommandNotExecutable";
    return report(result.exitCode, reason, startedAt, true);
  }
  return report(result.exitCode, result.exitCode === 0 ? "Completed" : "Error", startedAt, true);
}

/** Best effort for a step that fails before it waits (bad options): hand on POST.err so the chain ends. */
export function reportEarlyFailure(postFile: string | undefined, exitCode: number): void {
  if (!postFile) return;
  const at = now();
  try {
    writePostFile(postFile, false, { exitCode, reason: "Error", startedAt: at, finishedAt: at });
  } catch {
    // The location itself may be what was wrong; the usage error is what the user must see.
  }
}

function waitTimer(timeoutMs: number, abort: AbortController): () => void {
  if (timeoutMs <= 0) return () => {};
  const timer = setTimeout(() => {
    abort.abort(new WaitEnded("WaitTimeout", EXIT_TIMEOUT, `gave up waiting after ${timeoutMs} ms (--wait-timeout)`));
  }, timeoutMs);
  return () => clearTimeout(timer);
}

function now(): string {
  return new Date().toISOString();
}
