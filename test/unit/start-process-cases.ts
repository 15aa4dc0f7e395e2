// What starting a command must do, whichever way it goes: the unit tests run these on child_process (no addon is built
// beside the sources); the integration tests run the same behaviour through the bundle, whose addon starts the command.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

type Module = typeof import("../../src/run/start-process.js");

interface Outcome {
  pid: number | undefined;
  code?: number | null;
  signal?: NodeJS.Signals | null;
  error?: NodeJS.ErrnoException;
}

export function spawnProcessCases(label: string, load: () => Promise<Module>): void {
  const run = async (program: string, args: string[]): Promise<Outcome> => {
    const { spawnProcess } = await load();
    const child = spawnProcess(program, args);
    return new Promise((resolve) => {
      child.once("exit", (code, signal) => resolve({ pid: child.pid, code, signal }));
      child.once("error", (error) => resolve({ pid: child.pid, error }));
    });
  };

  test(`${label}: gives the command's exit code, or the signal that killed it`, async () => {
    assert.equal((await run("sh", ["-c", "exit 3"])).code, 3);
    const killed = await run("sh", ["-c", "kill -TERM $$"]);
    assert.equal(killed.code, null);
    assert.equal(killed.signal, "SIGTERM");
  });

  test(`${label}: runs the command in its own process group, with baton's environment and argv as given`, async () => {
    const dir = mkdtempSync(join(tmpdir(), "baton-spawn-"));
    process.env.BATON_TEST_VALUE = "passed through";
    const outcome = await run("sh", ["-c", 'echo "$$ $(cut -d" " -f5 /proc/$$/stat) $BATON_TEST_VALUE $0" > "$1"', "zero", join(dir, "out")]);
    delete process.env.BATON_TEST_VALUE;
    const [pid, pgrp, ...rest] = readFileSync(join(dir, "out"), "utf8").trim().split(" ");
    assert.equal(Number(pid), outcome.pid);
    assert.equal(pgrp, pid, "the command leads its own process group");
    assert.deepEqual(rest, ["passed", "through", "zero"]);
  });

  test(`${label}: emits 'error' with ENOENT for a missing program and EACCES for one without the x bit`, async () => {
    const missing = await run("no-such-program-anywhere", []);
    assert.equal(missing.pid, undefined);
    assert.equal(missing.error?.code, "ENOENT");
    const dir = mkdtempSync(join(tmpdir(), "baton-spawn-"));
    writeFileSync(join(dir, "script"), "#!/bin/sh\n");
    chmodSync(join(dir, "script"), 0o644);
    assert.equal((await run(join(dir, "script"), [])).error?.code, "EACCES");
  });
}
