// A killed step cannot hang the chain: each baton holds a write lock (fcntl) on POST.baton-live until it hands on; the
// step (or sidecar) waiting on POST notices a free lock with no POST or POST.err and ends as a failure (reason PreviousStepDied).
// Across two PID namespaces sharing one folder, read-only for the waiter, as Tekton mounts /tekton/run/N.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { BATON, NO_STANDALONE, STANDALONE, cleanEnv, eventSeen, fileAppears, existsSync, join, readEvents, readJson, repetitions, startBaton, tempDir, IS_ROOT } from "./helpers.js";

const skip = !IS_ROOT && "needs root for PID and mount namespaces";

/** Step 0 as PID 1 of its own PID namespace, holding its lock while its command sleeps. */
async function runningStep(dir: string, t: { after(fn: () => void): void }) {
  const post = join(dir, "run/0/out");
  const events = join(dir, "step0.events");
  const step = startBaton(["--post-file", post, "--", "sleep", "1000"], { pid1: true, env: cleanEnv({ BATON_EVENTS: events }) });
  t.after(() => step.kill()); // unshare --kill-child takes the namespace with it, should the test fail
  
  await eventSeen(events, "command");
  await fileAppears(`${post}.baton-live`); // held from the start
  return { step, post };
}

/** `node BATON ARGS` as PID 1 of another PID namespace, in a mount namespace where DIR/run/0 is seen read-only at DIR/ro0. */
function readOnlyWaiter(dir: string, args: string[], events: string) {
  mkdirSync(join(dir, "ro0"), { recursive: true });
  const ro = join(dir, "ro0");
  const script = [
    `mount --bind ${dir}/run/0 ${ro}`,
    `mount -o remount,bind,ro ${ro}`,
    // The folder really is read-only for the waiter.
    `if touch ${ro}/probe 2>/dev/null; then echo writable >&2; exit 99; fi`,
    `exec "$@"`,
  ].join(" && ");
  return startBaton([], {
    baton: ["unshare", "--mount", "--pid", "--fork", "--mount-proc", "--kill-child", "sh", "-c", script, "sh", process.execPath, BATON, ...args],
    env: cleanEnv({ BATON_EVENTS: events }),
  });
}

test("a step whose predecessor is SIGKILLed (another PID namespace, read-only folder) ends within 2 s: POST.err, PreviousStepDied", { skip }, async (t) => {
  const dir = tempDir();
  const { step } = await runningStep(dir, t);
  const events = join(dir, "step1.events");
  const post1 = join(dir, "run/1/out");
  const waiter = readOnlyWaiter(dir, ["--wait-file", join(dir, "ro0/out"), "--post-file", post1, "--", "touch", join(dir, "ran")], events);
  await eventSeen(events, "waiting");
  const killedAt = Date.now();
  process.kill(await step.hostPid(), "SIGKILL"); // the whole container dies with its PID 1
  await step.exited;
  const exit = await waiter.exited;
  const skipped = readEvents(events).find((e) => e.event === "skipped");
  assert.ok(skipped, exit.stderr);
  assert.ok((skipped.t as number) - killedAt < 2000, `noticed ${(skipped.t as number) - killedAt} ms after the kill`);
  assert.equal(exit.code, 1, exit.stderr);
  assert.match(exit.stderr, /^baton: skipping the command: the previous step's baton died before it handed on/m);
  assert.equal(existsSync(join(dir, "ran")), false, "the command did not run");
  assert.equal(readJson(`${post1}.err`).reason, "PreviousStepDied");
});

test("a predecessor that hands on and exits is never taken for dead (its lock goes only after its POST is written)", async () => {
  const dir = tempDir();
  // Rounds of a waiter polling the lock fast (its liveness look runs on every event too) against a predecessor that
  // writes POST and exits at once: the waiter must always see POST.
  for (let round = 0; round < repetitions(8); round++) {
    const post = join(dir, `step${round}/out`);
    const events = join(dir, `waiter${round}.events`);
    const waiter = startBaton(["--wait-file", post, "--", "true"], { env: cleanEnv({ BATON_EVENTS: events }) });
    await eventSeen(events, "waiting");
    const before = startBaton(["--post-file", post, "--", "true"]);
    const [w, b] = await Promise.all([waiter.exited, before.exited]);
    assert.equal(b.code, 0, b.stderr);
    assert.equal(w.code, 0, `round ${round}: ${w.stderr}`);
  }
});

test("a sidecar whose last step is SIGKILLed stops within 2 s, exit 0", { skip }, async (t) => {
  const dir = tempDir();
  const { step, post } = await runningStep(dir, t);
  const events = join(dir, "sidecar.events");
  const sidecar = startBaton(["sidecar", "--stop-file", post, "--", "sleep", "1000"], { pid1: true, env: cleanEnv({ BATON_EVENTS: events }) });
  await eventSeen(events, "command");
  const killedAt = Date.now();
  process.kill(await step.hostPid(), "SIGKILL");
  const exit = await sidecar.exited;
  const stopping = readEvents(events).find((e) => e.event === "stopping");
  assert.ok(stopping, exit.stderr);
  assert.ok((stopping.t as number) - killedAt < 2000, `noticed ${(stopping.t as number) - killedAt} ms after the kill`);
  assert.equal(stopping.file, `${post}.baton-live`);
  assert.equal(exit.code, 0, exit.stderr);
  assert.match(exit.stderr, /died before it handed on: stopping/);
});

test("the first step notices a sidecar baton killed before its ready file", { skip }, async () => {
  const dir = tempDir();
  const ready = join(dir, "ready");
  const sevents = join(dir, "sidecar.events");
  const sidecar = startBaton(["sidecar", "--stop-file", join(dir, "last"), "--ready-probe", `file:${dir}/never`, "--ready-file", ready, "--", "sleep", "1000"], { pid1: true, env: cleanEnv({ BATON_EVENTS: sevents }) });
  await eventSeen(sevents, "command");
  const events = join(dir, "step.events");
  const first = startBaton(["--wait-file", ready, "--wait-file-content", "--post-file", join(dir, "post"), "--", "true"], { env: cleanEnv({ BATON_EVENTS: events }) });
  await eventSeen(events, "waiting");
  process.kill(await sidecar.hostPid(), "SIGKILL");
  const exit = await first.exited;
  assert.equal(exit.code, 1, exit.stderr);
  assert.equal(readJson(join(dir, "post.err")).reason, "PreviousStepDied");
});

test("the standalone build holds and reads the lock too (its addon from lib/)", { skip: skip || NO_STANDALONE }, async (t) => {
  const dir = tempDir();
  const post = join(dir, "run/0/out");
  const events0 = join(dir, "step0.events");
  const step = startBaton(["--post-file", post, "--", "sleep", "1000"], { pid1: true, baton: [STANDALONE], env: cleanEnv({ BATON_EVENTS: events0 }) });
  t.after(() => step.kill());
  await eventSeen(events0, "command");
  await fileAppears(`${post}.baton-live`);
  const events = join(dir, "step1.events");
  const waiter = startBaton(["--wait-file", post, "--post-file", join(dir, "run/1/out"), "--", "true"], { pid1: true, baton: [STANDALONE], env: cleanEnv({ BATON_EVENTS: events }) });
  await eventSeen(events, "waiting");
  process.kill(await step.hostPid(), "SIGKILL");
  const exit = await waiter.exited;
  assert.equal(exit.code, 1, exit.stderr);
  assert.equal(readJson(join(dir, "run/1/out.err")).reason, "PreviousStepDied");
});
