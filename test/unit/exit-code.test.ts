import { test } from "node:test";
import assert from "node:assert/strict";
import { exitCodeOf, spawnErrorExitCode } from "../../src/run/exit-code.js";
import { endsWait, FORWARDED_SIGNALS } from "../../src/process/signals.js";

test("a command's own code passes through; death by signal N gives 128+N", () => {
  assert.equal(exitCodeOf(0, null), 0);
  assert.equal(exitCodeOf(42, null), 42);
  assert.equal(exitCodeOf(null, "SIGTERM"), 143);
  assert.equal(exitCodeOf(null, "SIGKILL"), 137);
  assert.equal(exitCodeOf(null, "SIGINT"), 130);
});

test("a command that cannot start gives 127 (not found) or 126 (not executable)", () => {
  assert.equal(spawnErrorExitCode("ENOENT"), 127);
  assert.equal(spawnErrorExitCode("EACCES"), 126);
  assert.equal(spawnErrorExitCode("ENOEXEC"), 126);
});

test("forwards every catchable signal but SIGCHLD, faults and SIGPROF; only harmless ones leave a wait alone", () => {
  for (const kept of ["SIGCHLD", "SIGKILL", "SIGSTOP", "SIGSEGV", "SIGPROF", "SIGPIPE", "SIGXFSZ"]) assert.ok(!FORWARDED_SIGNALS.includes(kept as NodeJS.Signals), kept);
  for (const forwarded of ["SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGWINCH"]) {
    assert.ok(FORWARDED_SIGNALS.includes(forwarded as NodeJS.Signals), forwarded);
  }
  assert.equal(FORWARDED_SIGNALS.at(-1), "SIGHUP", "tests rely on SIGHUP being installed last");
  assert.equal(endsWait("SIGTERM"), true);
  assert.equal(endsWait("SIGWINCH"), false);
});

test("system errors read as their text and code, without Node's syscall and path", async () => {
  const { describeSystemError } = await import("../../src/base/errors.js");
  const error = (message: string, code: string) => Object.assign(new Error(message), { code });
  assert.equal(describeSystemError(error("ENOSPC: no space left on device, write", "ENOSPC")), "no space left on device (ENOSPC)");
  assert.equal(describeSystemError(error("EACCES: permission denied, open '/x'", "EACCES")), "permission denied (EACCES)");
});
