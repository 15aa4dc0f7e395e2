import type { StepOptions } from "../cli/step-options.js";
import { BatonError, EXIT_FAILURE } from "../errors.js";
import { emit } from "../report/events.js";
import { writePostFile, type Reason } from "../report/post-file.js";
import { writeExitCodeFile } from "../report/step-metadata.js";
import { writeTerminationMessage, type TerminationOutcome } from "../report/write-termination.js";
import { EXIT_NOT_FOUND, EXIT_TIMEOUT, signalNumber } from "../run/exit-code.js";
import { isTrackedChild } from "../run/children.js";
import { openCaptureFiles, teeOutput } from "../run/output-tee.js";
import { shouldBecomeSubreaper, startReaping } from "../run/reaper.js";
import { startCommand, type CommandResult, type RunningCommand } from "../run/run-command.js";
import { endsWait, onSignal } from "../signals.js";
import { waitForFile } from "../wait/wait-for-file.js";
import { STOP_SIGNAL, watchStopConditions, type StopReason } from "./stop-conditions.js";

// The step lifecycle, top to bottom: wait for the previous step, run the command, hand the baton on.
// Every outcome that baton survives ends in report(): the termination message first (it may still fail the step:
// results too large), then the post file (or .err), which is always written.

/** Why a wait ended early; used as an AbortSignal reason. */
class WaitEnded {
  constructor(readonly reason: Reason, readonly exitCode: number, readonly message?: string) {}
}

export interface StepIO {
  warn(message: string): void;
}

/** How a step ended. baton exits 0 when it hands the baton on, and `exitCode` otherwise. */
interface Outcome extends TerminationOutcome {
  /** The command's code (or baton's, when the command never ran): exitCode file, post record, ExitCode entry. */
  exitCode: number;
  reason: Reason;
  /** POST (true) or POST.err. */
  handOn: boolean;
  ranCommand: boolean;
  startedAt: string;
  /** The command's own code, for DIR/exitCode, where it differs from exitCode (a timeout gives 124). */
  commandExitCode?: number;
}

function failed(exitCode: number, reason: Reason, startedAt: string, ranCommand: boolean): Outcome {
  return { exitCode, reason, handOn: false, ranCommand, startedAt };
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

  const report = (outcome: Outcome): number => {
    if (outcome.ranCommand && options.stepMetadataDir) {
      writeExitCodeFile(options.stepMetadataDir, outcome.commandExitCode ?? outcome.exitCode);
    }
    let final = outcome;
    let problem: BatonError | undefined;
    if (options.terminationPath) {
      try {
        const tooLarge = writeTerminationMessage(options, outcome, io.warn);
        if (tooLarge) {
          io.warn(tooLarge);
          final = failed(EXIT_FAILURE, "ResultsTooLarge", outcome.startedAt, outcome.ranCommand);
        }
      } catch (error) {
        // The step cannot report its outcome: it fails, and the chain still ends (POST.err below).
        problem = new BatonError(error instanceof Error ? error.message : String(error));
        final = failed(EXIT_FAILURE, "Error", outcome.startedAt, outcome.ranCommand);
      }
    }
    if (options.postFile) {
      const record = { exitCode: final.exitCode, reason: final.reason, startedAt: final.startedAt, finishedAt: now() };
      emit("post", { file: writePostFile(options.postFile, final.handOn, record) });
    }
    const exitCode = final.handOn ? 0 : final.exitCode;
    emit("done", { exitCode });
    if (problem) throw problem;
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
        return report(failed(EXIT_FAILURE, "Skipped", waitStarted, false));
      }
      emit("ready", { file });
    }
  } catch (error) {
    if (!(error instanceof WaitEnded)) {
      report(failed(error instanceof BatonError ? error.exitCode : EXIT_FAILURE, "Error", waitStarted, false));
      throw error;
    }
    if (error.message) io.warn(error.message);
    return report(failed(error.exitCode, error.reason, waitStarted, false));
  } finally {
    stopWaiting();
  }
  // A signal that arrived in the same turn as the last file: the wait was over, but the step was still told to stop.
  if (waitAbort.signal.aborted) {
    const ended = waitAbort.signal.reason as WaitEnded;
    if (ended.message) io.warn(ended.message);
    return report(failed(ended.exitCode, ended.reason, waitStarted, false));
  }

  // 2. Run the command: its output copied to files if asked, stopped by --timeout or --cancel-file.
  const capture = options.stdoutPath !== undefined || options.stderrPath !== undefined;
  let files;
  try {
    files = capture ? openCaptureFiles(options) : undefined;
  } catch (error) {
    report(failed(EXIT_FAILURE, "Error", now(), false));
    throw new BatonError(error instanceof Error ? error.message : String(error));
  }
  // As PID 1 (or a subreaper) baton also inherits every orphan the command leaves: reap them.
  startReaping({ isOurChild: isTrackedChild, warn: io.warn, subreaper: shouldBecomeSubreaper() });
  const startedAt = now();
  command = startCommand(
    options.command,
    // Pipes only when asked: inherited stdio costs nothing and keeps the command's output unbuffered.
    capture ? { stdio: ["inherit", options.stdoutPath ? "pipe" : "inherit", options.stderrPath ? "pipe" : "inherit"] } : {},
  );
  if (command.pid !== undefined) emit("command", { argv: options.command, child: command.pid });
  const tee = files ? teeOutput(command, options, files, io.warn) : undefined;
  const stopping = watchStopConditions(command, options, io.warn);
  const result = await command.done;
  stopping.clear();
  emit("exited", { exitCode: result.exitCode, signal: result.signal });
  await tee?.finish();

  // 3. Hand the baton on.
  return report(commandOutcome(result, stopping.reason, options.onError === "continue", startedAt, io));
}

function commandOutcome(result: CommandResult, stopped: StopReason | undefined, continueOnError: boolean, startedAt: string, io: StepIO): Outcome {
  if (result.spawnError) {
    io.warn(result.spawnError);
    const reason = result.exitCode === EXIT_NOT_FOUND ? "CommandNotFound" : "CommandNotExecutable";
    return failed(result.exitCode, reason, startedAt, true);
  }
  // Stopped on purpose: the step failed whatever the command made of the signal (it may trap it and exit 0).
  // --on-error continue does not cover it, as in Tekton: a timeout or a cancel is not the command's own failure.
  if (stopped) {
    const exitCode = stopped === "TimeoutExceeded" ? EXIT_TIMEOUT : 128 + signalNumber(STOP_SIGNAL);
    return { ...failed(exitCode, stopped, startedAt, true), commandExitCode: result.exitCode };
  }
  if (result.exitCode === 0) return { exitCode: 0, reason: "Completed", handOn: true, ranCommand: true, startedAt };
  if (continueOnError) {
    io.warn(`the command failed with exit code ${result.exitCode}; continuing (--on-error continue)`);
    return { exitCode: result.exitCode, reason: "Error", handOn: true, ranCommand: true, startedAt };
  }
  return failed(result.exitCode, "Error", startedAt, true);
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
