import { holdLivenessLock } from "../handoff/liveness-lock.js";
import { waitForFile } from "../handoff/wait-for-file.js";
import { onSignal } from "../process/signals.js";
import { openCaptureFiles } from "../run/output-tee.js";
import { handOn } from "./hand-on.js";
import { startStepCommand } from "./start-step-command.js";

// What the step lifecycle (run-step.ts) does to the world, by the real functions' own names: runStep calls
// `world.waitForFile(...)`, and "go to definition" on it reaches waitForFile itself (a shorthand property is its
// value). STEP_WORLD is the real world; the unit tests (test/unit/run-step.test.ts) pass fakes of the same shape, one
// table row per outcome, as Tekton's entrypointer tests pass fakes of its Waiter, Runner and PostWriter.

export const STEP_WORLD = {
  /** The liveness lock beside the post file, from the step's start until it hands on. */
  holdLivenessLock,
  /** The previous step's post file, or the cancel file (postFile: false). */
  waitForFile,
  /** --stdout-path/--stderr-path, opened before the command starts: an unusable path fails the step first. */
  openCaptureFiles,
  startStepCommand,
  /** Writes the outcome (DIR/exitCode, termination message, post file) and returns baton's exit code. */
  handOn,
  /** Routes every forwarded signal to the lifecycle (src/process/signals.ts). */
  onSignal,
};

export type StepWorld = typeof STEP_WORLD;
