// A container set as Argo's controller builds it: one baton emissary per container, started together, ordered only
// by the exitcode files in the shared folder. Also the sidecar that stops itself, and the debug pause markers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, rmSync, watch, writeFileSync } from "node:fs";
import { fileAppears, handlersInstalled, join, readOr, repetitions, tempDir, waitFor } from "./helpers.js";
import { argoPod, writeSignal } from "./argo-helpers.js";

const SET = { containerSet: { containers: [{ name: "a" }, { name: "b", dependencies: ["a"] }, { name: "c", dependencies: ["b"] }] } };

test("a container set of three, the middle one failing: c never runs, its exitcode holds b's code, it exits 64", async () => {
  const pod = argoPod();
  const log = join(tempDir(), "ran");
  pod.template(SET);
  const c = pod.start("c", ["sh", "-c", `echo c >> ${log}`]);
  const b = pod.start("b", ["sh", "-c", `echo b >> ${log}; exit 5`]);
  const a = pod.start("a", ["sh", "-c", `echo a >> ${log}`]);
  const [ra, rb, rc] = await Promise.all([a.exited, b.exited, c.exited]);
  assert.deepEqual([ra.code, rb.code, rc.code], [0, 5, 64], rc.stderr);
  assert.equal(readFileSync(log, "utf8"), "a\nb\n", "in order, and c did not run");
  assert.deepEqual(["a", "b", "c"].map((n) => pod.read(n, "exitcode")), ["0", "5", "5"]);
  assert.equal(rc.stderr, 'baton: dependency "b" exited with non-zero code: 5\n');
});

test("a container set that succeeds runs in order, each after the one it depends on", async () => {
  const pod = argoPod();
  const log = join(tempDir(), "ran");
  pod.template(SET);
  const runs = ["c", "b", "a"].map((n) => pod.start(n, ["sh", "-c", `echo ${n} >> ${log}`]));
  const codes = (await Promise.all(runs.map((r) => r.exited))).map((r) => r.code);
  assert.deepEqual(codes, [0, 0, 0]);
  assert.equal(readFileSync(log, "utf8"), "a\nb\nc\n");
});

test("a dependency whose baton is killed (SIGKILL, no exitcode): the dependent ends with 64 instead of hanging", async () => {
  const pod = argoPod();
  const work = tempDir();
  pod.template(SET);
  const c = pod.start("c", ["sh", "-c", `touch ${work}/c-ran`]);
  const b = pod.start("b", ["sh", "-c", `echo $$ > ${work}/b.pid; exec sleep 30`]);
  assert.equal((await pod.start("a", ["true"]).exited).code, 0);
  await fileAppears(join(work, "b.pid"));
  b.kill();
  process.kill(Number(readFileSync(join(work, "b.pid"), "utf8")), "SIGKILL"); // it holds b's stdout: b.exited waits for it
  await b.exited;
  const rc = await c.exited;
  assert.equal(rc.code, 64);
  assert.equal(pod.read("b", "exitcode"), undefined, "b's baton died without writing one");
  assert.equal(pod.read("c", "exitcode"), "64");
  assert.match(rc.stderr, /dependency "b" died without writing its exit code/);
  assert.ok(!existsSync(join(work, "c-ran")));
});

test("a container waiting on a dependency: SIGTERM ends the wait (143, exitcode 64); so does 15 in its signal file", async () => {
  for (const how of ["signal", "file"] as const) {
    const pod = argoPod();
    pod.template(SET);
    const b = pod.start("b", ["true"]);
    await fileAppears(join(pod.dir("b"), "exitcode.baton-live"));
    if (how === "signal") {
      await handlersInstalled(await b.hostPid());
      b.child.kill("SIGTERM");
    } else writeSignal(pod, "b", 15);
    const rb = await b.exited;
    assert.equal(rb.code, 143, `${how}: ${rb.stderr}`);
    assert.equal(pod.read("b", "exitcode"), "64");
  }
});

test("a sidecar stops itself once the main containers have ended: SIGTERM, then SIGKILL after the grace period", async () => {
  const pod = argoPod();
  const work = tempDir();
  pod.template({ sidecars: [{ name: "polite" }, { name: "stubborn" }] });
  const polite = pod.start("polite", ["sh", "-c", `trap 'echo term > ${work}/polite; exit 0' TERM; while :; do sleep 0.05; done`]);
  const stubborn = pod.start("stubborn", ["sh", "-c", `trap '' TERM; touch ${work}/stubborn; while :; do sleep 0.05; done`], {
    ARGO_TERMINATION_GRACE_PERIOD_SECONDS: "1",
  });
  await fileAppears(join(work, "stubborn"));
  const main = await pod.start("main", ["true"]).exited;
  assert.equal(main.code, 0);
  const [rp, rs] = await Promise.all([polite.exited, stubborn.exited]);
  assert.equal(rp.code, 0, rp.stderr);
  assert.equal(readOr(join(work, "polite"), ""), "term\n");
  assert.equal(rs.code, 137, "killed after the grace period");
  assert.equal(pod.read("stubborn", "exitcode"), "137");
});

test("a sidecar stops when the main container's baton died without an exitcode (Argo waits for the deadline)", async () => {
  const pod = argoPod();
  const work = tempDir();
  pod.template({ sidecars: [{ name: "side" }] });
  // The sidecar says when its trap is set: a SIGTERM before that ends sh with 143, which is not what is tested here.
  const side = pod.start("side", ["sh", "-c", `trap 'exit 0' TERM; touch ${work}/side; while :; do sleep 0.05; done`]);
  const main = pod.start("main", ["sh", "-c", `echo $$ > ${work}/main.pid; exec sleep 30`]);
  await fileAppears(join(work, "side"));
  await fileAppears(join(work, "main.pid"));
  await fileAppears(join(pod.dir("main"), "exitcode.baton-live"));
  main.kill();
  process.kill(Number(readFileSync(join(work, "main.pid"), "utf8")), "SIGKILL");
  await main.exited;
  assert.equal((await side.exited).code, 0);
});

test("ARGO_DEBUG_PAUSE_BEFORE and _AFTER: the command waits for ctr/NAME/before, baton's exit for ctr/NAME/after", async () => {
  const pod = argoPod();
  const work = tempDir();
  pod.template({});
  const run = pod.start("main", ["sh", "-c", `touch ${work}/ran`], { ARGO_DEBUG_PAUSE_BEFORE: "true", ARGO_DEBUG_PAUSE_AFTER: "true" });
  await fileAppears(join(pod.dir("main"), "exitcode.baton-live"));
  await new Promise((r) => setTimeout(r, 300));
  assert.ok(!existsSync(join(work, "ran")), "paused before the command");
  writeFileSync(join(pod.dir("main"), "before"), "");
  await fileAppears(join(work, "ran"));
  assert.equal(pod.read("main", "exitcode"), undefined, "paused after the command");
  writeFileSync(join(pod.dir("main"), "after"), "");
  assert.equal((await run.exited).code, 0);
  assert.equal(pod.read("main", "exitcode"), "0");
});

test("retryStrategy: the pause between attempts is `duration`; a signal during it ends the attempts", async () => {
  const pod = argoPod();
  const work = tempDir();
  pod.template({ containerSet: { containers: [{ name: "main" }], retryStrategy: { retries: "3", duration: "300ms" } } });
  const started = Date.now();
  const run = await pod.start("main", ["sh", "-c", `echo x >> ${work}/attempts; exit 2`]).exited;
  assert.equal(run.code, 2);
  assert.equal(readFileSync(join(work, "attempts"), "utf8"), "x\nx\nx\n", "three attempts in all");
  assert.ok(Date.now() - started >= 600, "two pauses of 300 ms");
  pod.template({ containerSet: { containers: [{ name: "main" }], retryStrategy: { retries: 5, duration: "1h" } } });
  const long = pod.start("main", ["sh", "-c", `echo y >> ${work}/long; exit 2`]);
  await waitFor(() => (readOr(join(work, "long"), "") === "y\n" && existsSync(join(pod.dir("main"), "exitcode.baton-live")) ? true : undefined), "the first attempt");
  const pid = await long.hostPid();
  await handlersInstalled(pid);
  // In the pause: the first attempt's command has exited, and baton has no child.
  await waitFor(() => (readOr(`/proc/${pid}/task/${pid}/children`, "x").trim() === "" ? true : undefined), "the pause between attempts");
  long.child.kill("SIGTERM");
  const ended = await long.exited;
  assert.equal(ended.code, 2, "the last attempt's code");
  assert.equal(readFileSync(join(work, "long"), "utf8"), "y\n");
});

test("exitcode is never seen empty: a reader woken by each event in ctr/NAME/ always reads a whole code (Argo #11490)", async () => {
  const pod = argoPod();
  pod.template({});
  mkdirSync(pod.dir("main"), { recursive: true });
  const seen: string[] = [];
  const runs = repetitions(10);
  const watcher = watch(pod.dir("main"), () => {
    try {
      seen.push(readFileSync(join(pod.dir("main"), "exitcode"), "utf8"));
    } catch {
      // not there yet
    }
  });
  try {
    for (let i = 0; i < runs; i++) {
      rmSync(join(pod.dir("main"), "exitcode"), { force: true });
      assert.equal((await pod.start("main", ["sh", "-c", "exit 3"]).exited).code, 3);
      await new Promise((r) => setTimeout(r, 20)); // the last events
    }
  } finally {
    watcher.close();
  }
  assert.ok(seen.length >= runs, `read ${seen.length} times`);
  assert.deepEqual([...new Set(seen)], ["3"]);
});
