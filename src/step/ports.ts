import type { WriteStream } from "node:fs";
import type { StepOptions } from "../cli/step-options.js";
import { holdLivenessLock } from "../handoff/liveness-lock.js";
import { waitForFile, type WaitOptions, type WaitOutcome } from "../handoff/wait-for-file.js";
import { onSignal } from "../process/signals.js";
import { isTrackedChild } from "../run/children.js";
import { openCaptureFiles, teeOutput } from "../run/output-tee.js";
import { shouldBecomeSubreaper, startReaping } from "../run/reaper.js";
import { startCommand, type RunningCommand } from "../run/run-command.js";
import { handOn, type HandOnOptions } from "./hand-on.js";
import type { Outcome } from "./outcome.js";

// The world around the step lifecycle (run-step.ts), behind three small ports, as Tekton's entrypointer has its
// Waiter, Runner and PostWriter: runStep decides, these act. STEP_WORLD is the real one; the unit tests
// (test/unit/run-step.test.ts) drive runStep with fakes, one table row per outcome.

/** Waits for one file: the previous step's post file, or the cancel file (postFile: false). */
export interface Waiter {
  wait(file: string, options: WaitOptions): Promise<WaitOutcome>;
}

/** The command, once started: its process, and the copy of its output to the capture files, if any. */
export interface StartedCommand {
  command: RunningCommand;
  /** Settles once the copy has finished (at once without capture). */
  copied(): Promise<void>;
}

export interface Runner {
  /** Opens --stdout-path/--stderr-path (before the command starts: an unusable path fails the step first). */
  openCapture(options: StepOptions): Map<string, WriteStream>;
  /** Starts the command, reaping the orphans it leaves, its output copied to `files` when given. */
  start(argv: readonly string[], options: StepOptions, files: Map<string, WriteStream> | undefined, warn: (message: string) => void): StartedCommand;
}

/** The hand-off's writes: the liveness lock and the report itself. */
export interface Writer {
  holdLock(postFile: string, warn: (message: string) => void): void;
  /** Writes the outcome (DIR/exitCode, termination message, post file) and returns baton's exit code. */
  handOn(options: HandOnOptions, outcome: Outcome, startedAt: string, warn: (message: string) => void, atBreakpoint?: boolean): number;
}

export interface StepPorts {
  waiter: Waiter;
  runner: Runner;
  writer: Writer;
  /** Routes every forwarded signal to the lifecycle (src/process/signals.ts). */
  onSignal(listener: (signal: NodeJS.Signals | number) => void): void;
}

export const STEP_WORLD: StepPorts = {
  waiter: { wait: waitForFile },
  runner: {
    openCapture: openCaptureFiles,
    // Eager: on the wake-up path (docs/design.md#eager-functions).
    start: (function start(argv: readonly string[], options: StepOptions, files: Map<string, WriteStream> | undefined, warn: (message: string) => void): StartedCommand {
      // As PID 1 (or a subreaper) baton also inherits every orphan the command leaves: reap them.
      startReaping({ isOurChild: isTrackedChild, warn, subreaper: shouldBecomeSubreaper() });
      const command = startCommand(
        argv,
        // Pipes only when asked: inherited stdio costs nothing and keeps the command's output unbuffered.
        {
          stdio: files ? ["inherit", options.stdoutPath ? "pipe" : "inherit", options.stderrPath ? "pipe" : "inherit"] : "inherit",
          shellForScripts: options.shellForScripts,
        },
      );
      const tee = files ? teeOutput(command, options, files, warn) : undefined;
      // Eager: on the hand-on path (docs/design.md#eager-functions).
      return { command, copied: (function copied() {
        return tee?.finish() ?? Promise.resolve();
      }) };
    }),
  },
  writer: { holdLock: holdLivenessLock, handOn },
  onSignal,
};
