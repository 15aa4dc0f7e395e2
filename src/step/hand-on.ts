import type { StepOptions } from "../cli/step-options.js";
import { describeSystemError } from "../base/errors.js";
import { releaseLivenessLock } from "../handoff/liveness-lock.js";
import { releaseDescriptor } from "../base/spare-descriptor.js";
import { emit } from "../report/events.js";
import { mark } from "../base/trace-marks.js";
import { stepAside } from "../process/step-aside.js";
import { writeEmptyErrorPostFile, writePostFile } from "../handoff/post-file.js";
import { writeExitCodeFile } from "../report/step-metadata.js";
import { writeTerminationMessage } from "../report/write-termination.js";
import { batonExitCode, settleOutcome, type Outcome } from "./outcome.js";

// The one place a step reports its outcome, reached from every end of the lifecycle: DIR/exitCode, then the
// termination message (either may still fail the step: a full disk, results too large), then the post file, which is
// always attempted, whatever failed before it, so the next step never waits forever. Never throws: each failure is one
// line on stderr and a failed outcome.

export type HandOnOptions = Pick<StepOptions, "postFile" | "stepMetadataDir" | "terminationPath" | "results" | "resultsDir"> &
  Partial<Pick<StepOptions, "stepResults" | "tektonRoot" | "resultFrom" | "compressTerminationMessage">>;

/**
 * Writes what `outcome` says and returns baton's exit code. `atBreakpoint`: a failed step stopped at Tekton's
 * onFailure breakpoint writes neither DIR/exitCode nor a post file (the user's debug script writes the post file).
 */
export function handOn(options: HandOnOptions, outcome: Outcome, startedAt: string, warn: (message: string) => void, atBreakpoint = false): number {
  releaseDescriptor();
  mark("hand-on");
  let final = outcome;
  if ((final.ranCommand || final.recordsExitCode) && options.stepMetadataDir !== undefined && !atBreakpoint) {
    const file = `${options.stepMetadataDir}/exitCode`;
    try {
      writeExitCodeFile(options.stepMetadataDir, final.commandExitCode ?? final.exitCode);
    } catch (error) {
      warn(`cannot write ${file}: ${describeSystemError(error)}`);
      final = settleOutcome(final, { writeFailed: true });
    }
  }
  if (options.terminationPath !== undefined) {
    try {
      const tooLarge = writeTerminationMessage(options, { ...final, startedAt }, warn);
      if (tooLarge) {
        warn(tooLarge);
        final = settleOutcome(final, { resultsTooLarge: true });
      }
    } catch (error) {
      warn(error instanceof Error ? error.message : String(error));
      final = settleOutcome(final, { writeFailed: true });
    }
  }
  let exitCode = batonExitCode(final);
  if (options.postFile !== undefined && !atBreakpoint) {
    const record = { exitCode: final.exitCode, reason: final.reason, startedAt, finishedAt: new Date().toISOString() };
    let posted: string | undefined;
    try {
      posted = writePostFile(options.postFile, final.handOn, record);
    } catch (error) {
      warn(error instanceof Error ? error.message : String(error));
      posted = writeEmptyErrorPostFile(options.postFile);
      if (posted) warn(`wrote an empty ${posted} instead, so the next step ends`);
      if (exitCode === 0) exitCode = settleOutcome(final, { writeFailed: true }).exitCode;
    }
    // The hand-on span ends here, with the post file in place (docs/tracing.md), before this step steps aside.
    mark("posted");
    // Whatever is there now is all this step will hand on: a waiter blocked on the lock wakes and looks. At once, before
    // the events line (a slow --events pipe must not hold the next step back), and with this step's threads already
    // behind the next step's on the node's CPUs.
    stepAside();
    releaseLivenessLock(options.postFile);
    if (posted) emit("post", { file: posted });
  }
  mark("outcome", { reason: final.reason, exitCode: final.exitCode });
  emit("done", { exitCode });
  return exitCode;
}
