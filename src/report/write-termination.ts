import type { StepOptions } from "../cli/step-options.js";
import { describeSystemError } from "../base/errors.js";
import { isCharacterDevice, writeFileAtomicOrInPlace } from "../base/atomic-write.js";
import type { Reason } from "../handoff/post-file.js";
import { UnsafeFileError } from "../base/safe-files.js";
import { composeMessage, readExisting, readOptionalFile, readResults, type StepRecord, type TerminationReason } from "./termination-message.js";

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
  options: Pick<StepOptions, "terminationPath" | "results" | "resultsDir" | "stepMetadataDir"> &
    Partial<Pick<StepOptions, "stepResults" | "tektonRoot" | "resultFrom" | "compressTerminationMessage">>,
  outcome: TerminationOutcome,
  warn: (message: string) => void,
): string | undefined {
  const path = options.terminationPath!;
  // Results are read whenever the command ran, whatever became of it (a failure, a timeout, a cancel), as Tekton's
  // entrypoint reads them: a failed task's results reach the pipeline's finally tasks and its own results (Tekton's
  // e2e tests TestTaskResultsFromFailedTasks, TestPipelineResultsFromFailedTasks). A step that ran no command has none.
  const withResults = outcome.ranCommand;
  let existing: string;
  try {
    existing = isCharacterDevice(path) ? "" : readExisting(path); // a device is written through (atomic-write.ts)
  } catch (error) {
    if (!(error instanceof UnsafeFileError)) throw new Error(`cannot read termination message ${path}: ${describeSystemError(error)}`);
    // A symlink, a FIFO, a folder or more than the kubelet keeps: never a message of Tekton's, and renaming the new
    // one into place replaces it without following or opening it.
    warn(`${path} is ${describeSystemError(error)}; replaced it`);
    existing = "";
  }
  // Step results in DIR/results/ (Tekton: results/ of the working folder without a DIR); the step's artifacts in
  // DIR/artifacts/ and the task's, shared by all steps (Tekton reads both whatever its feature flags say). All are
  // read as the results are, also with sidecar-logs: one that cannot be read fails the step either way.
  const metadata = options.stepMetadataDir ?? ".";
  const stepArtifacts = options.stepMetadataDir === undefined ? undefined : `${metadata}/artifacts/provenance.json`;
  const taskArtifacts = options.tektonRoot === undefined ? undefined : `${options.tektonRoot}/artifacts/provenance.json`;
  const stepResults = options.stepResults ?? [];
  const readAll = (): Omit<StepRecord, "startedAt"> => ({
    results: readResults(options.resultsDir, options.results),
    ...(stepResults.length > 0 ? { stepResults: readResults(`${metadata}/results`, stepResults, "step result") } : {}),
    ...(stepArtifacts ? present("stepArtifacts", stepArtifacts) : {}),
    ...(taskArtifacts ? present("taskArtifacts", taskArtifacts) : {}),
  });
  let read: Omit<StepRecord, "startedAt"> = { results: [] };
  try {
    if (withResults) read = readAll();
  } catch (error) {
    // A file that cannot be read fails a step that was about to hand on; a step that failed already still says how
    // it ended, without results.
    if (outcome.handOn) throw error;
    warn(`${error instanceof Error ? error.message : String(error)}; the termination message holds no results`);
  }
  const composed = composeMessage(
    existing,
    {
      startedAt: outcome.startedAt,
      ...(outcome.handOn && outcome.exitCode !== 0 ? { continuedExitCode: outcome.exitCode } : {}),
      ...(TERMINATION_REASONS.has(outcome.reason) ? { reason: outcome.reason as TerminationReason } : {}),
      ...read,
    },
    { withoutResults: options.resultFrom === "sidecar-logs", compressed: options.compressTerminationMessage === true },
  );
  if (composed.replacedExisting) warn(`${path} did not hold a termination message in Tekton's format; replaced it`);
  try {
    writeFileAtomicOrInPlace(path, composed.text);
  } catch (error) {
    throw new Error(`cannot write termination message ${path}: ${describeSystemError(error)}`);
  }
  return composed.tooLarge;
}

function present<K extends string>(key: K, path: string): { [P in K]?: [string, string] } {
  const content = readOptionalFile(path, path);
  return (content === undefined ? {} : { [key]: [path, content] }) as { [P in K]?: [string, string] };
}
