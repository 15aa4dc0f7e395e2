import type { StepOptions } from "../cli/step-options.js";
import { describeSystemError } from "../errors.js";
import { writeFileAtomicOrInPlace } from "./atomic-write.js";
import type { Reason } from "./post-file.js";
import { composeMessage, readExisting, readResults, type TerminationReason } from "./termination-message.js";

/** What the termination message needs to know about how the step ended. */
export interface TerminationOutcome {
  exitCode: number;
  reason: Reason;
  handOn: boolean;
  ranCommand: boolean;
  startedAt: string;
}

const TERMINATION_REASONS: ReadonlySet<Reason> = new Set<TerminationReason>(["TimeoutExceeded", "Cancelled", "Skipped"]);

/**
 * Writes the termination message for `outcome`, merged into the file's existing content. Returns undefined, or,
 * when the results do not fit in 4096 bytes, the reason: the message is then written without them and the step must
 * fail. Throws when a result cannot be read or the message cannot be written.
 */
export function writeTerminationMessage(
  options: Pick<StepOptions, "terminationPath" | "results" | "resultsDir">,
  outcome: TerminationOutcome,
  warn: (message: string) => void,
): string | undefined {
  const path = options.terminationPath!;
  const withResults = outcome.handOn && outcome.ranCommand;
  let existing: string;
  try {
    existing = readExisting(path);
  } catch (error) {
    throw new Error(`cannot read termination message ${path}: ${describeSystemError(error)}`);
  }
  const composed = composeMessage(existing, {
    startedAt: outcome.startedAt,
    ...(outcome.handOn && outcome.exitCode !== 0 ? { continuedExitCode: outcome.exitCode } : {}),
    ...(TERMINATION_REASONS.has(outcome.reason) ? { reason: outcome.reason as TerminationReason } : {}),
    results: withResults ? readResults(options.resultsDir, options.results) : [],
  });
  if (composed.replacedExisting) warn(`${path} did not hold a termination message in Tekton's format; replaced it`);
  try {
    writeFileAtomicOrInPlace(path, composed.text);
  } catch (error) {
    throw new Error(`cannot write termination message ${path}: ${describeSystemError(error)}`);
  }
  return composed.tooLarge;
}
