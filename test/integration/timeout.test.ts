// --timeout, --grace-period and --cancel-file: the stop signal to the command's whole process group, SIGKILL to the
// group after the grace period. Not as PID 1: a PID namespace dies with its PID 1, which would hide a missing group kill.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cleanEnv, eventSeen, existsSync, isRunning, join, liveGroupMembers, readJson, startBaton, tempDir, waitFor } from "./helpers.js";

/** Starts a step; returns it and the command's pid, which is also its process group id. */
async function startStep(dir: string, args: string[]) {
  const events = join(dir, "events.jsonl");
  const baton = startBaton(["--post-file", join(dir, "post"), "--step-metadata-dir", join(dir, "meta"), ...args], {
    env: cleanEnv({ BATON_EVENTS: events }),
  });
  const pgid = (await eventSeen(events, "command")).child as number;
  return { baton, pgid, events };
}

/** A grandchild that ignores SIGTERM (its sleeps inherit the ignored disposition) and says where it is. */
const stubbornGrandchild = (dir: string) =>
  `sh -c 'echo $$ > ${dir}/gc.pid; trap "" TERM; while :; do sleep 0.05; done' </dev/null >/dev/null 2>&1 &`;

test("timeout with a command and a grandchild that both ignore SIGTERM: SIGKILL to the group after the grace, nothing left", async () => {
  const dir = tempDir();
  const script = `trap '' TERM; ${stubbornGrandchild(dir)} while :; do sleep 0.05; done`;
  const started = Date.now();
  const { baton, pgid } = await startStep(dir, ["--timeout", "300ms", "--grace-period", "700ms", "--", "sh", "-c", script]);
  const grandchild = await waitFor(() => (existsSync(join(dir, "gc.pid")) ? Number(readFileSync(join(dir, "gc.pid"), "utf8")) : undefined), "the grandchild");
  const exit = await baton.exited;
  const took = Date.now() - started;
  assert.equal(exit.code, 124, exit.stderr);
  assert.match(exit.stderr, /^baton: the command ran longer than 300 ms \(--timeout\): SIGTERM to its process group, SIGKILL after 700 ms \(--grace-period\)$/m);
  assert.ok(took >= 1000, `the grace period was waited out (took ${took} ms)`);
  assert.deepEqual(liveGroupMembers(pgid), [], "nothing of the command's group is left");
  assert.equal(isRunning(grandchild), false, "the grandchild is gone");
  assert.equal(readFileSync(join(dir, "meta/exitCode"), "utf8"), "137", "the command itself died of SIGKILL");
  assert.deepEqual([readJson(join(dir, "post.err")).exitCode, readJson(join(dir, "post.err")).reason], [124, "TimeoutExceeded"]);
});

test("timeout where the command dies of SIGTERM but leaves a grandchild that ignores it: the grandchild is killed too", async () => {
  const dir = tempDir();
  const script = `${stubbornGrandchild(dir)} while :; do sleep 0.05; done`;
  const { baton, pgid } = await startStep(dir, ["--timeout", "300ms", "--grace-period", "500ms", "--", "sh", "-c", script]);
  const grandchild = await waitFor(() => (existsSync(join(dir, "gc.pid")) ? Number(readFileSync(join(dir, "gc.pid"), "utf8")) : undefined), "the grandchild");
  const exit = await baton.exited;
  assert.equal(exit.code, 124, exit.stderr);
  assert.deepEqual(liveGroupMembers(pgid), []);
  assert.equal(isRunning(grandchild), false, "Tekton's entrypoint would leave this one running");
  assert.equal(readFileSync(join(dir, "meta/exitCode"), "utf8"), "143", "the command itself died of SIGTERM");
});

test("timeout of a command that stops on SIGTERM does not wait out the grace period", async () => {
  const dir = tempDir();
  const started = Date.now();
  const { baton } = await startStep(dir, ["--timeout", "200ms", "--", "sleep", "100"]); // default grace: 10s
  const exit = await baton.exited;
  assert.equal(exit.code, 124);
  assert.ok(Date.now() - started < 8000, "finished well before the 10 s grace period");
});

test("a command that ends before its timeout is not touched", async () => {
  const dir = tempDir();
  const { baton } = await startStep(dir, ["--timeout", "1m", "--", "sh", "-c", "exit 4"]);
  const exit = await baton.exited;
  assert.equal(exit.code, 4);
  assert.equal(exit.stderr, "");
});

test("--timeout 0 means no timeout: a command that outlives a moment is not stopped", async () => {
  const dir = tempDir();
  writeFileSync(join(dir, "go"), "");
  // The command waits for the test to delete "go", so it is surely still running when a zero timeout would fire.
  const { baton } = await startStep(dir, ["--timeout", "0", "--grace-period", "0", "--", "sh", "-c", `while [ -e ${dir}/go ]; do sleep 0.02; done; exit 5`]);
  await new Promise((r) => setTimeout(r, 300)); // not a synchronisation: a correct baton passes however long this is
  rmSync(join(dir, "go"));
  const exit = await baton.exited;
  assert.equal(exit.code, 5, exit.stderr);
  assert.equal(exit.stderr, "");
});

test("--cancel-file: an empty file does not cancel; content does, like a timeout (group, grace), Reason Cancelled", async () => {
  const dir = tempDir();
  const cancel = join(dir, "downward/cancel");
  const script = `trap '' TERM; ${stubbornGrandchild(dir)} while :; do sleep 0.05; done`;
  const { baton, pgid } = await startStep(dir, ["--cancel-file", cancel, "--grace-period", "300ms", "--", "sh", "-c", script]);
  await waitFor(() => (existsSync(join(dir, "gc.pid")) ? true : undefined), "the grandchild");
  // The downward-API file exists empty before the controller sets the annotation.
  mkdirSync(join(dir, "downward"));
  writeFileSync(cancel, "");
  await new Promise((r) => setTimeout(r, 300)); // a broken baton would cancel on the empty file now
  assert.equal(baton.child.exitCode, null, "still running");
  writeFileSync(cancel, "CANCEL");
  const exit = await baton.exited;
  assert.equal(exit.code, 143, exit.stderr);
  assert.match(exit.stderr, new RegExp(`^baton: cancelled by ${cancel}: SIGTERM to its process group, SIGKILL after 300 ms`, "m"));
  assert.deepEqual(liveGroupMembers(pgid), []);
  assert.deepEqual([readJson(join(dir, "post.err")).exitCode, readJson(join(dir, "post.err")).reason], [143, "Cancelled"]);
});

test("--on-error continue does not cover a timeout: the step still fails", async () => {
  const dir = tempDir();
  const { baton } = await startStep(dir, ["--timeout", "200ms", "--on-error", "continue", "--", "sleep", "100"]);
  assert.equal((await baton.exited).code, 124);
  assert.equal(existsSync(join(dir, "post.err")), true);
});
