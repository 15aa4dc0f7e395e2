import type { StepOptions } from "../cli/step-options.js";
import { after } from "../base/clock.js";
import { BatonError, EXIT_FAILURE } from "../base/errors.js";
import { livenessFileOf, PostFileTaken } from "../handoff/liveness-lock.js";
import { emit } from "../report/events.js";
import { EXIT_TIMEOUT, signalNumber } from "../run/exit-code.js";
import { startThreadPool } from "../run/output-tee.js";
import type { RunningCommand } from "../run/run-command.js";
import { prepareToSpawn } from "../run/start-process.js";
import { describeInternalError } from "../process/internal-error.js";
import { endsWait } from "../process/signals.js";
import { prepareToStepAside } from "../process/step-aside.js";
import { stopBaselineCompiler } from "../process/baseline-compiler.js";
import { trimWhileWaiting } from "../process/trim-memory.js";
import { traceCommand } from "../trace/load.js";
import { loadTektonChunk } from "../tekton/load.js";
import { decideCommand, needsFeatures, preloadFeatures } from "./features.js";
import { handOn } from "./hand-on.js";
import { decideOutcome, EXIT_CANCELLED, type Happened, type Outcome } from "./outcome.js";
import { STEP_WORLD, type StepWorld } from "./step-world.js";
import { watchStopConditions, type StopConditions } from "./stop-conditions.js";

// The step lifecycle, top to bottom: wait for the previous step, run the command, hand the baton on.
// Each phase says what happened (a Happened); outcome.ts turns that into the outcome, and hand-on.ts writes it
// (exitCode file, termination message, POST or POST.err). Whatever throws on the way, a Happened still comes out and
// the post file is still written: runStep never throws. What it does to the world goes through `world`, the real
// functions by their own names (step-world.ts), which the unit tests replace.

export interface StepIO {
  warn(message: string): void;
}

/** Why a wait ended early; used as an AbortSignal reason. */
class WaitEnded {
  constructor(readonly happened: Happened & { kind: "not-started" }, readonly message?: string) {}
}

/** What the phases share: when the step started (the wait, then the command's start), and the command once running. */
interface StepState {
  world: StepWorld;
  startedAt: string;
  command: RunningCommand | undefined;
  /** Set while a failed step waits at Tekton's onFailure breakpoint: a terminating signal ends that wait. */
  pause?: AbortController;
  /** The user chose fail-continue at Tekton's before-step breakpoint. */
  skippedAtBreakpoint?: boolean;
}

export async function runStep(options: StepOptions, io: StepIO, world: StepWorld = STEP_WORLD): Promise<number> {
  const step: StepState = { world, startedAt: now(), command: undefined };
  if (options.stdoutPath !== undefined || options.stderrPath !== undefined) startThreadPool();
  // Held from here until the post file is written: the next step notices if this one dies on the way, whether it
  // waits, evaluates `when` or runs its command (src/handoff/liveness-lock.ts). A folder that can take no file ends the step here.
  let cannotHandOn: Happened | undefined;
  try {
    if (options.postFile !== undefined) world.holdLivenessLock(options.postFile, io.warn);
  } catch (error) {
    // Another step's post file: nothing of this step may be handed on through it.
    if (error instanceof PostFileTaken) {
      io.warn(error.message);
      return error.exitCode;
    }
    cannotHandOn = await batonFailed(error, false, io);
  }
  const waitAbort = new AbortController();
  const endWait = (ended: WaitEnded) => waitAbort.signal.aborted || waitAbort.abort(ended);

  // Before the command runs, a terminating signal ends the wait; once it runs, every signal goes to its group.
  world.onSignal((signal) => {
    emit("signal", { signal, to: step.command?.pid ?? null });
    if (step.pause) {
      if (endsWait(signal) && !step.pause.signal.aborted) step.pause.abort(128 + signalNumber(signal));
    } else if (step.command) step.command.signal(signal);
    else if (endsWait(signal)) {
      const exitCode = 128 + signalNumber(signal);
      endWait(new WaitEnded({ kind: "not-started", reason: "Signaled", exitCode }, `stopped by ${typeof signal === "number" ? `signal ${signal}` : signal} while waiting`));
    }
  });
  // --cancel-file is watched from the start: a step cancelled while it waits does not start its command.
  const stopping = watchStopConditions(options, io.warn, world.waitForFile, (reason) => {
    const exitCode = reason === "Cancelled" ? EXIT_CANCELLED : EXIT_TIMEOUT;
    endWait(new WaitEnded({ kind: "not-started", reason, exitCode }));
  });

  let happened: Happened;
  try {
    happened = cannotHandOn ?? (await waitForPreviousSteps(options, step, waitAbort, io)) ?? (await runCommand(options, step, stopping, waitAbort.signal, io));
  } catch (error) {
    happened = await batonFailed(error, step.command !== undefined, io);
  } finally {
    stopping.clear();
  }

  const outcome = decideOutcome(happened, options.onError === "continue");
  if (options.breakpointOnFailure && options.postFile !== undefined && stopsAtBreakpoint(happened, step)) {
    try {
      return await pauseAtBreakpoint(options, options.postFile, outcome, step, io);
    } catch (error) {
      // The breakpoint cannot be held (its code did not load): hand on as without it, never leave the chain waiting.
      await batonFailed(error, true, io);
      return world.handOn(options, outcome, step.startedAt, io.warn);
    }
  }
  if (outcome.handOn && outcome.exitCode !== 0) {
    io.warn(`the command failed with exit code ${outcome.exitCode}; continuing (--on-error continue)`);
  }
  // The line that found the folder taking no new file has said that nothing can be handed on: the post file's own
  // failure there (the same cause) is not said a second time.
  const handOnWarn = cannotHandOn === undefined ? io.warn : (message: string) => {
    if (!message.startsWith("cannot write post file ")) io.warn(message);
  };
  return world.handOn(options, outcome, step.startedAt, handOnWarn);
}

/** Tekton's onFailure breakpoint: a failure of the command or of baton, not a timeout, a cancel or a skip. */
function stopsAtBreakpoint(happened: Happened, step: StepState): boolean {
  if (happened.kind === "ran") return happened.exitCode !== 0 && happened.stopped === undefined;
  return happened.kind === "spawn-failed" || (happened.kind === "baton-failed" && !step.skippedAtBreakpoint);
}

/**
 * -breakpoint_on_failure: the termination message as usual, but no post file and no DIR/exitCode (the user's
 * debug-continue or debug-fail-continue script writes the post file); then wait for the user and exit with the code
 * the script wrote (0 when none).
 */
async function pauseAtBreakpoint(options: StepOptions, postFile: string, outcome: Outcome, step: StepState, io: StepIO): Promise<number> {
  step.world.handOn(options, outcome, step.startedAt, io.warn, true);
  const { waitForBreakpointExit } = await loadTektonChunk();
  const pause = new AbortController();
  step.pause = pause;
  try {
    const code = await waitForBreakpointExit(postFile, { signal: pause.signal, safetyPollMs: options.safetyPollMs, warn: io.warn });
    emit("done", { exitCode: code });
    return code;
  } catch (error) {
    if (typeof error !== "number") throw error;
    io.warn(`stopped by a signal at the onFailure breakpoint`);
    return error;
  }
}

/**
 * A step that has waited TRIM_AFTER_MS is past start-up: it gives back the memory start-up freed and, unless its hand-on
 * path loads a Node built-in module (the Tekton chunk's features, zlib for a compressed termination message), turns V8's
 * baseline compiler off (src/process/baseline-compiler.ts).
 */
function settle(options: StepOptions, released: boolean): void {
  const compilerOff = !needsFeatures(options) && !options.compressTerminationMessage && stopBaselineCompiler();
  emit("trimmed", { released, compilerOff });
}

/** 1. Waits for each file in order. undefined: go on and run the command; otherwise why the step ends here. */
async function waitForPreviousSteps(options: StepOptions, step: StepState, waitAbort: AbortController, io: StepIO): Promise<Happened | undefined> {
  if (options.waitFiles.length > 0) {
    // Once the watch below is armed (the next turn), load what starting the command needs, while there is time.
    setImmediate(() => {
      prepareToSpawn(options.stdoutPath !== undefined || options.stderrPath !== undefined);
      preloadFeatures(options);
      if (options.postFile !== undefined) prepareToStepAside();
    });
  }
  const trimming = options.waitFiles.length > 0 ? trimWhileWaiting((released) => settle(options, released)) : undefined;
  const timer =
    options.waitTimeoutMs > 0
      ? after(options.waitTimeoutMs, () => {
          if (waitAbort.signal.aborted) return;
          const happened = { kind: "not-started", reason: "WaitTimeout", exitCode: EXIT_TIMEOUT } as const;
          waitAbort.abort(new WaitEnded(happened, `gave up waiting after ${options.waitTimeoutMs} ms (--wait-timeout)`));
        })
      : undefined;
  try {
    for (const file of options.waitFiles) {
      emit("waiting", { file });
      const found = await step.world.waitForFile(file, {
        content: options.waitFileContent,
        signal: waitAbort.signal,
        safetyPollMs: options.safetyPollMs,
        warn: io.warn,
      });
      if (found === "died") {
        emit("skipped", { file, died: true });
        io.warn(`skipping the command: the previous step's baton died before it handed on (${livenessFileOf(file)} is free, no ${file} or ${file}.err)`);
        return { kind: "previous-died" };
      }
      if (found === "failed" && options.breakpointOnFailure) {
        // Tekton: with the onFailure breakpoint every step runs, so that the user can debug each one in turn.
        io.warn(`the previous step failed (${file}.err); running the command anyway (--breakpoint-on-failure)`);
      } else if (found === "failed") {
        emit("skipped", { file });
        io.warn(`skipping the command: the previous step failed (${file}.err)`);
        return { kind: "skipped" };
      }
      emit("ready", { file });
    }
    if (options.debugBeforeStep && options.postFile !== undefined) {
      const { waitBeforeStep } = await loadTektonChunk();
      const wait = { signal: waitAbort.signal, safetyPollMs: options.safetyPollMs, warn: io.warn };
      if (!(await waitBeforeStep(options.postFile, wait))) {
        io.warn("skipping the command: fail-continue was chosen at the before-step breakpoint");
        step.skippedAtBreakpoint = true;
        return { kind: "baton-failed", exitCode: EXIT_FAILURE, ranCommand: false };
      }
    }
  } catch (error) {
    if (!(error instanceof WaitEnded)) throw error;
    return ended(error, io);
  } finally {
    trimming?.clear();
    timer?.clear();
  }
  // A signal or a cancel that came in the same turn as the last file: the wait was over, but the step was told to stop.
  if (waitAbort.signal.aborted) return ended(waitAbort.signal.reason as WaitEnded, io);
  return undefined;
}

function ended(wait: WaitEnded, io: StepIO): Happened {
  if (wait.message) io.warn(wait.message);
  return wait.happened;
}

/**
 * 2. Runs the command: its output copied to files if asked, stopped by --timeout or --cancel-file. Until it starts,
 * `notStarted` aborts on what ends a wait (a signal, --timeout, --cancel-file): the command then never starts.
 */
async function runCommand(options: StepOptions, step: StepState, stopping: StopConditions, notStarted: AbortSignal, io: StepIO): Promise<Happened> {
  stopping.waitOver();
  // Tekton's runtime $(steps...) substitution and `when`, once the previous steps are done.
  let decision;
  try {
    decision = await decideCommand(options, notStarted);
  } catch (error) {
    if (error instanceof WaitEnded) return ended(error, io);
    throw error;
  }
  if ("skip" in decision) {
    io.warn("skipping the command: its when expressions are false");
    return { kind: "when-false" };
  }
  if ("error" in decision) throw new BatonError(decision.error);
  const argv = decision.run;
  const capture = options.stdoutPath !== undefined || options.stderrPath !== undefined;
  let files;
  try {
    files = capture ? step.world.openCaptureFiles(options) : undefined;
  } catch (error) {
    throw new BatonError(error instanceof Error ? error.message : String(error));
  }
  // A signal, a cancel or the timeout that came before this turn: the step was told to stop, so nothing starts.
  if (notStarted.aborted) return ended(notStarted.reason as WaitEnded, io);
  step.startedAt = now();
  // Its TRACEPARENT: the context of its command span (docs/tracing.md); nothing unless this baton traces.
  traceCommand();
  const { command, copied } = step.world.startStepCommand(argv, options, files, io.warn);
  if (command.pid !== undefined) {
    step.command = command;
    emit("command", { argv, child: command.pid });
  }
  stopping.started(command);
  // A step that did not wait (the first) has not yet readied stepAside: it does so while its command runs.
  if (options.postFile !== undefined) setImmediate(prepareToStepAside);
  const result = await command.done;
  stopping.clear();
  emit("exited", { exitCode: result.exitCode, signal: result.signal });
  await copied();

  if (result.spawnError) {
    io.warn(result.spawnError);
    // No process or descriptor left is baton's failure (and the pod's), not the command's: not 126.
    if (result.batonFault) return { kind: "baton-failed", exitCode: EXIT_FAILURE, ranCommand: false };
    return { kind: "spawn-failed", exitCode: result.exitCode };
  }
  return { kind: "ran", exitCode: result.exitCode, ...(stopping.reason() ? { stopped: stopping.reason() } : {}) };
}

/** Anything that threw: one line, and a failed step (POST.err) instead of a hang. */
async function batonFailed(error: unknown, ranCommand: boolean, io: StepIO): Promise<Happened> {
  if (error instanceof BatonError) {
    io.warn(error.message);
    return { kind: "baton-failed", exitCode: error.exitCode, ranCommand };
  }
  // A bug of ours: still one line (BATON_DEBUG=1: and its stack), and the step fails instead of hanging.
  io.warn(await describeInternalError(error));
  return { kind: "baton-failed", exitCode: EXIT_FAILURE, ranCommand };
}

/** A step that fails before it waits (bad options): hand on POST.err so the chain ends. */
export function reportEarlyFailure(postFile: string | undefined, exitCode: number): void {
  if (!postFile) return;
  const outcome = decideOutcome({ kind: "baton-failed", exitCode, ranCommand: false }, false);
  // Quiet: the location itself may be what was wrong; the usage error is what the user must see.
  handOn({ postFile, stepMetadataDir: undefined, terminationPath: undefined, results: [], resultsDir: "" }, outcome, now(), () => {});
}

function now(): string {
  return new Date().toISOString();
}
