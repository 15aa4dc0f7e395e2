// The sidecar's outcome table: what ended its baton -> the exit code and the line on stderr. One row per case;
// src/sidecar/outcome.ts is the one place that decides it (the lifecycle, on the bundle: test/integration/sidecar.test.ts).
import assert from "node:assert/strict";
import { test } from "node:test";
import { decideSidecarOutcome, type SidecarEnded } from "../../src/sidecar/outcome.js";

type Row = [name: string, ended: SidecarEnded, expected: { exit: number; line?: string }];

const exited = (exitCode: number, more: Partial<Extract<SidecarEnded, { kind: "exited" }>> = {}): SidecarEnded => ({
  kind: "exited",
  exitCode,
  stopFileThere: false,
  ...more,
});

const rows: Row[] = [
  ["stopped by a stop file (or its writer's death): 0, whatever the sidecar made of the stop", { kind: "stopped" }, { exit: 0 }],
  ["ended on its own before any stop file: its own code", exited(3), { exit: 3, line: "the sidecar exited (code 3) before any stop file appeared" }],
  ["ended on its own with 0 before any stop file: 0, and still said", exited(0), { exit: 0, line: "the sidecar exited (code 0) before any stop file appeared" }],
  ["killed by a signal baton forwarded (pod deletion): 128+N", exited(143), { exit: 143, line: "the sidecar exited (code 143) before any stop file appeared" }],
  ["ended as the stop file appeared: a stop on purpose, 0", exited(143, { stopFileThere: true }), { exit: 0 }],
  ["ended before its ready probe succeeded", exited(1, { neverReady: "tcp:127.0.0.1:9" }),
    { exit: 1, line: "the sidecar exited (code 1) before it was ready (--ready-probe tcp:127.0.0.1:9)" }],
  ["ended as the stop file appeared, never ready: still 0", exited(1, { neverReady: "file:/x", stopFileThere: true }), { exit: 0 }],
  ["could not start (not found): 127 and the spawn error's one line", exited(127, { spawnError: "cannot run nope: not found" }),
    { exit: 127, line: "cannot run nope: not found" }],
  ["could not start, with a ready probe: the spawn error only", exited(126, { spawnError: "cannot run x: EACCES", neverReady: "file:/x" }),
    { exit: 126, line: "cannot run x: EACCES" }],
  ["a signal ends the wait of a sidecar-less baton: 128+N", { kind: "signaled", signal: "SIGTERM" }, { exit: 143, line: "stopped by SIGTERM while waiting" }],
  ["SIGINT ends it too", { kind: "signaled", signal: "SIGINT" }, { exit: 130, line: "stopped by SIGINT while waiting" }],
];

for (const [name, ended, expected] of rows) {
  test(`sidecar outcome: ${name}`, () => {
    const outcome = decideSidecarOutcome(ended);
    assert.equal(outcome.exitCode, expected.exit);
    assert.equal(outcome.warning, expected.line);
  });
}
