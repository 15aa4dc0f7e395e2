import { EXIT_FAILURE } from "../base/errors.js";
import type { Reason } from "../handoff/post-file.js";
import { EXIT_NOT_FOUND, EXIT_TIMEOUT } from "../run/exit-code.js";

// The step's outcome table, in one place and without side effects: what happened (the lifecycle's answer) -> the
// reason, the exit code, and which post file hands the baton on. hand-on.ts writes it; run-step.ts only says what
// happened. The unit test drives these two functions as one table.

/** What the lifecycle saw. Every path of run-step.ts ends in exactly one of these. */
export type Happened =
  /** The previous step failed (its POST.err): the command is not run. */
  | { kind: "skipped" }
  /** The step's `when` is false (Tekton): the command is not run, and the baton is handed on. */
  | { kind: "when-false" }
  /** The previous step's baton died before it handed on (its liveness lock is free, no post file). */
  | { kind: "previous-died" }
  /** A signal or --wait-timeout ended the wait, or a signal, --cancel-file or --timeout came before the command started. */
  | { kind: "not-started"; reason: "Signaled" | "WaitTimeout" | "Cancelled" | "TimeoutExceeded"; exitCode: number }
  /** The command could not be started: 127 not found, 126 not executable (the command's fault). */
  | { kind: "spawn-failed"; exitCode: number }
  /** baton itself failed (an unreadable wait folder, no process or descriptor left, a bug): never the command's fault. */
  | { kind: "baton-failed"; exitCode: number; ranCommand: boolean }
  /** The command ran and exited with exitCode (128+N for signal N); `stopped` when baton stopped it on purpose. */
  | { kind: "ran"; exitCode: number; stopped?: "TimeoutExceeded" | "Cancelled" };

/** How a step ends. baton exits 0 when it hands on POST, and `exitCode` otherwise. */
export interface Outcome {
  /** In the post record and the exitCode file: the command's code, or baton's own when the command did not end. */
  exitCode: number;
  reason: Reason;
  /** POST (true) or POST.err. */
  handOn: boolean;
  /** Whether the command ran: only then is DIR/exitCode written and are results read. */
  ranCommand: boolean;
  /** The command's own code where it differs from exitCode (a timeout gives 124): DIR/exitCode holds it. */
  commandExitCode?: number;
  /** DIR/exitCode is written although the command did not run: 0 for a step skipped by `when`, as Tekton writes. */
  recordsExitCode?: boolean;
}

/** The exit code of a step stopped by --cancel-file: 128 + SIGTERM, what a shell reports for the stop signal. */
export const EXIT_CANCELLED = 143;

export function decideOutcome(happened: Happened, continueOnError: boolean): Outcome {
  switch (happened.kind) {
    case "skipped":
      return failed(EXIT_FAILURE, "Skipped", false);
    case "when-false":
      return { exitCode: 0, reason: "Skipped", handOn: true, ranCommand: false, recordsExitCode: true };
    case "previous-died":
      return failed(EXIT_FAILURE, "PreviousStepDied", false);
    case "not-started":
      return failed(happened.exitCode, happened.reason, false);
    case "spawn-failed":
      // ranCommand: DIR/exitCode gets 126/127, as a shell's $? would.
      return failed(happened.exitCode, happened.exitCode === EXIT_NOT_FOUND ? "CommandNotFound" : "CommandNotExecutable", true);
    case "baton-failed":
      return failed(happened.exitCode, "Error", happened.ranCommand);
    case "ran": {
      // Stopped on purpose: the step failed whatever the command made of the signal (it may trap it and exit 0).
      // --on-error continue does not cover it, as in Tekton: a timeout or a cancel is not the command's own failure.
      if (happened.stopped) {
        const exitCode = happened.stopped === "TimeoutExceeded" ? EXIT_TIMEOUT : EXIT_CANCELLED;
        return { ...failed(exitCode, happened.stopped, true), commandExitCode: happened.exitCode };
      }
      if (happened.exitCode === 0) return { exitCode: 0, reason: "Completed", handOn: true, ranCommand: true };
      if (continueOnError) return { exitCode: happened.exitCode, reason: "Error", handOn: true, ranCommand: true };
      return failed(happened.exitCode, "Error", true);
    }
  }
}

/** What went wrong while reporting (hand-on.ts), each of which fails a step that was about to hand on POST. */
export interface ReportProblems {
  /** The results do not fit in the termination message. */
  resultsTooLarge?: boolean;
  /** DIR/exitCode or the termination message could not be written, or a result could not be read. */
  writeFailed?: boolean;
}

/** The outcome after reporting: a step whose report failed does not hand on POST; a failure keeps its own reason. */
export function settleOutcome(outcome: Outcome, problems: ReportProblems): Outcome {
  if (problems.resultsTooLarge && outcome.handOn) return failed(EXIT_FAILURE, "ResultsTooLarge", outcome.ranCommand);
  if (problems.writeFailed && outcome.handOn) return failed(EXIT_FAILURE, "Error", outcome.ranCommand);
  return outcome;
}

/** baton's exit code for an outcome: 0 when it handed on POST. */
export function batonExitCode(outcome: Outcome): number {
  return outcome.handOn ? 0 : outcome.exitCode;
}

function failed(exitCode: number, reason: Reason, ranCommand: boolean): Outcome {
  return { exitCode, reason, handOn: false, ranCommand };
}
