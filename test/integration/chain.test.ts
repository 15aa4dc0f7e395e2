// Three steps of one pod: all started at once, each as PID 1 of its own PID namespace, chained by post files.
import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, readFileSync, statSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { BATON, cleanEnv, existsSync, join, startBaton, tempDir, IS_ROOT } from "./helpers.js";

function step(dir: string, name: string, previous: string | undefined, command: string) {
  const wait = previous ? ["--wait-file", join(dir, previous)] : [];
  return startBaton([...wait, "--post-file", join(dir, name), "--", "sh", "-c", command], { pid1: IS_ROOT });
}

test("three steps started at once run in order", async () => {
  const dir = tempDir();
  const log = join(dir, "log");
  // Started in reverse order, so the order of the log can only come from the post files.
  const third = step(dir, "3", "2", `echo third >> ${log}`);
  const second = step(dir, "2", "1", `echo second >> ${log}`);
  const first = step(dir, "1", undefined, `echo first >> ${log}`);
  const exits = await Promise.all([first.exited, second.exited, third.exited]);
  assert.deepEqual(exits.map((e) => e.code), [0, 0, 0], exits.map((e) => e.stderr).join(""));
  assert.equal(readFileSync(log, "utf8"), "first\nsecond\nthird\n");
});

test("a failing middle step skips the last one: the failure travels down the chain", async () => {
  const dir = tempDir();
  const log = join(dir, "log");
  const third = step(dir, "3", "2", `echo third >> ${log}`);
  const second = step(dir, "2", "1", `echo second >> ${log}; exit 3`);
  const first = step(dir, "1", undefined, `echo first >> ${log}`);
  const exits = await Promise.all([first.exited, second.exited, third.exited]);
  assert.deepEqual(exits.map((e) => e.code), [0, 3, 1]);
  assert.equal(readFileSync(log, "utf8"), "first\nsecond\n");
  assert.deepEqual([existsSync(join(dir, "2.err")), existsSync(join(dir, "3.err")), existsSync(join(dir, "3"))], [true, true, false]);
});

test("the bundle is self-contained: copied alone into an empty folder, it runs (shebang, mode 0755)", () => {
  const dir = tempDir();
  const copy = join(dir, "baton");
  copyFileSync(BATON, copy);
  assert.equal(statSync(BATON).mode & 0o777, 0o755);
  assert.ok(readFileSync(BATON, "utf8").startsWith("#!/usr/bin/env node\n"));
  execFileSync("chmod", ["755", copy]);
  const out = execFileSync(copy, ["--post-file", join(dir, "post"), "--", "echo", "alone"], { cwd: dir, env: cleanEnv() });
  assert.equal(out.toString(), "alone\n");
  assert.equal(existsSync(join(dir, "post")), true);
  assert.match(execFileSync(copy, ["--version"], { cwd: dir, env: cleanEnv() }).toString(), /^baton /);
});
