// The step's outcome table: what happened x --on-error x what reporting hit -> reason, exit code, which post file.
// One row per case; src/step/outcome.ts is the one place that decides it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { decideOutcome, batonExitCode, settleOutcome, type Happened, type ReportProblems } from "../../src/step/outcome.js";

type Row = [name: string, happened: Happened, continueOnError: boolean, problems: ReportProblems,
  expected: { reason: string; post: "POST" | "POST.err"; recorded: number; exit: number; exitCodeFile?: number | null }];

const ok: ReportProblems = {};
const tooLarge: ReportProblems = { resultsTooLarge: true };
const writeFailed: ReportProblems = { writeFailed: true };

const rows: Row[] = [
  ["success", { kind: "ran", exitCode: 0 }, false, ok, { reason: "Completed", post: "POST", recorded: 0, exit: 0, exitCodeFile: 0 }],
  ["success, results too large", { kind: "ran", exitCode: 0 }, false, tooLarge, { reason: "ResultsTooLarge", post: "POST.err", recorded: 1, exit: 1, exitCodeFile: 0 }],
  ["success, a report write failed (disk full)", { kind: "ran", exitCode: 0 }, false, writeFailed, { reason: "Error", post: "POST.err", recorded: 1, exit: 1, exitCodeFile: 0 }],
  ["failure", { kind: "ran", exitCode: 7 }, false, ok, { reason: "Error", post: "POST.err", recorded: 7, exit: 7, exitCodeFile: 7 }],
  ["failure, results too large: keeps its own reason and code", { kind: "ran", exitCode: 7 }, false, tooLarge, { reason: "Error", post: "POST.err", recorded: 7, exit: 7, exitCodeFile: 7 }],
  ["failure, a report write failed", { kind: "ran", exitCode: 7 }, false, writeFailed, { reason: "Error", post: "POST.err", recorded: 7, exit: 7, exitCodeFile: 7 }],
  ["failure under --on-error continue", { kind: "ran", exitCode: 7 }, true, ok, { reason: "Error", post: "POST", recorded: 7, exit: 0, exitCodeFile: 7 }],
  ["continue, results too large", { kind: "ran", exitCode: 7 }, true, tooLarge, { reason: "ResultsTooLarge", post: "POST.err", recorded: 1, exit: 1, exitCodeFile: 7 }],
  ["continue, a report write failed", { kind: "ran", exitCode: 7 }, true, writeFailed, { reason: "Error", post: "POST.err", recorded: 1, exit: 1, exitCodeFile: 7 }],
  ["killed by SIGKILL", { kind: "ran", exitCode: 137 }, false, ok, { reason: "Error", post: "POST.err", recorded: 137, exit: 137, exitCodeFile: 137 }],
  ["timeout, command trapped the signal and exited 0", { kind: "ran", exitCode: 0, stopped: "TimeoutExceeded" }, false, ok, { reason: "TimeoutExceeded", post: "POST.err", recorded: 124, exit: 124, exitCodeFile: 0 }],
  ["timeout under continue: still a failure", { kind: "ran", exitCode: 143, stopped: "TimeoutExceeded" }, true, ok, { reason: "TimeoutExceeded", post: "POST.err", recorded: 124, exit: 124, exitCodeFile: 143 }],
  ["cancelled while running", { kind: "ran", exitCode: 143, stopped: "Cancelled" }, true, ok, { reason: "Cancelled", post: "POST.err", recorded: 143, exit: 143, exitCodeFile: 143 }],
  ["cancelled before it started", { kind: "not-started", reason: "Cancelled", exitCode: 143 }, false, ok, { reason: "Cancelled", post: "POST.err", recorded: 143, exit: 143, exitCodeFile: null }],
  ["previous step failed", { kind: "skipped" }, true, ok, { reason: "Skipped", post: "POST.err", recorded: 1, exit: 1, exitCodeFile: null }],
  ["previous step's baton died", { kind: "previous-died" }, true, ok, { reason: "PreviousStepDied", post: "POST.err", recorded: 1, exit: 1, exitCodeFile: null }],
  ["signal while waiting", { kind: "not-started", reason: "Signaled", exitCode: 143 }, false, ok, { reason: "Signaled", post: "POST.err", recorded: 143, exit: 143, exitCodeFile: null }],
  ["--wait-timeout", { kind: "not-started", reason: "WaitTimeout", exitCode: 124 }, true, ok, { reason: "WaitTimeout", post: "POST.err", recorded: 124, exit: 124, exitCodeFile: null }],
  ["command not found", { kind: "spawn-failed", exitCode: 127 }, true, ok, { reason: "CommandNotFound", post: "POST.err", recorded: 127, exit: 127, exitCodeFile: 127 }],
  ["command not executable", { kind: "spawn-failed", exitCode: 126 }, false, ok, { reason: "CommandNotExecutable", post: "POST.err", recorded: 126, exit: 126, exitCodeFile: 126 }],
  ["baton failed before the command (no process left)", { kind: "baton-failed", exitCode: 1, ranCommand: false }, true, ok, { reason: "Error", post: "POST.err", recorded: 1, exit: 1, exitCodeFile: null }],
  ["baton failed after the command ran", { kind: "baton-failed", exitCode: 1, ranCommand: true }, false, writeFailed, { reason: "Error", post: "POST.err", recorded: 1, exit: 1, exitCodeFile: 1 }],
  ["usage error", { kind: "baton-failed", exitCode: 2, ranCommand: false }, false, ok, { reason: "Error", post: "POST.err", recorded: 2, exit: 2, exitCodeFile: null }],
];

for (const [name, happened, continueOnError, problems, expected] of rows) {
  test(`outcome: ${name}${continueOnError ? " (--on-error continue)" : ""}`, () => {
    const decided = decideOutcome(happened, continueOnError);
    const final = settleOutcome(decided, problems);
    assert.equal(final.reason, expected.reason);
    assert.equal(final.handOn ? "POST" : "POST.err", expected.post);
    assert.equal(final.exitCode, expected.recorded, "exitCode in the post record");
    assert.equal(batonExitCode(final), expected.exit, "baton's exit code");
    // DIR/exitCode is written from the decided outcome, before reporting can fail the step.
    const exitCodeFile = decided.ranCommand ? (decided.commandExitCode ?? decided.exitCode) : null;
    assert.equal(exitCodeFile, expected.exitCodeFile, "DIR/exitCode");
  });
}
