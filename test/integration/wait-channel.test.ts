// The hand-off channel between two batons (docs/design.md "Waiting"): a waiter whose predecessor is a baton blocks on
// the predecessor's liveness lock (POST.baton-live), is woken by its wake FIFO (POST.baton-wake) and holds no inotify
// instance; one that starts first watches the folder only until the predecessor's baton appears. Its failure modes: a waiter started before its predecessor, with
// and without inotify; two waiters on one post file; a restarted waiter; a waiter that comes after its predecessor
// died; files planted at the channel's path. A writer that has handed on exits once its waiters have started their
// commands (they let go of its wake FIFO), and a stopped waiter or a neighbour holding the FIFO delays that exit by
// WAITERS_START_MS at most. Killed predecessors across PID namespaces and read-only folders:
// liveness.test.ts; other uids, umask 077, FIFOs: liveness-attacks.test.ts.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { closeSync, constants, copyFileSync, mkdirSync, openSync, readFileSync, renameSync, statSync, symlinkSync, writeFileSync, writeSync } from "node:fs";
import { createServer } from "node:net";
import {
  BATON, NO_STANDALONE, STANDALONE, cleanEnv, eventSeen, existsSync, fileAppears, holdsWakeFile, join, readJson, shellWaitFor, sleepingIn, startBaton, tempDir, waitFor,
  IS_ROOT, type StartOptions,
} from "./helpers.js";
import { inotifyInstances, openDescriptors } from "../../scripts/bench/inotify.mjs";
import { withInotifyLimit } from "../../scripts/bench/namespaces.mjs";

/** How long a writer that has handed on waits at most for its waiters to let go of its wake FIFO (src/handoff/liveness-lock.ts). */
const WAITERS_START_MS = 250;

/** The pids of `pid`'s children ("" when it has none). */
function childrenOf(pid: number): string {
  return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim();
}

/** SIGCONT to `pid`, if it is still there. */
function resume(pid: number): void {
  try {
    process.kill(pid, "SIGCONT");
  } catch {
    // ended
  }
}

/** Whether `pid`'s main thread sleeps in poll(2): a baton that has handed on, waiting for its waiters to let go. */
function blockedInPoll(pid: number): boolean {
  return /^poll_schedule_timeout/.test(sleepingIn(pid));
}

/** Milliseconds from `file`'s last write to now (the wall clock, as the file system stamps it). */
function msSinceWritten(file: string): number {
  return Date.now() - statSync(file).mtimeMs;
}

const BUILDS = [
  { build: "bundle", words: [process.execPath, BATON] },
  { build: "standalone", words: [STANDALONE] },
];

for (const { build, words } of BUILDS) {
  if (build === "standalone" && NO_STANDALONE) {
    test(`${build}: every test of this file`, { skip: NO_STANDALONE }, () => {});
    continue;
  }
  const start = (args: string[], options: StartOptions = {}) => startBaton(args, { baton: words, ...options });
  /** baton's own pid: the standalone launcher execs, so the child is baton in both builds. */
  const pidOf = (step: ReturnType<typeof start>) => step.child.pid!;

  /**
   * A step that runs until DIR/go exists, then hands on POST. Its command also ends once its baton is gone: the tests
   * kill that baton to make a dead predecessor, and an orphaned loop would poll for the rest of the machine's life.
   */
  function predecessor(dir: string, post: string, options: StartOptions = {}) {
    return start(["--post-file", post, "--", "sh", "-c", shellWaitFor(join(dir, "go"))], options);
  }

  /** A new folder and a predecessor in it that hands on DIR/run/0/out once DIR/go exists; its liveness file is there. */
  async function folderWithPredecessor(t: { after(fn: () => void): void }) {
    const dir = tempDir();
    const post0 = join(dir, "run/0/out");
    const first = predecessor(dir, post0);
    t.after(() => first.kill());
    await fileAppears(`${post0}.baton-live`);
    return { dir, post0, first };
  }

  test(`${build}: a waiter whose predecessor is a baton holds no inotify instance and hands on when it does`, async (t) => {
    const { dir, post0, first } = await folderWithPredecessor(t);
    const events = join(dir, "step1.events");
    const next = start(["--wait-file", post0, "--post-file", join(dir, "run/1/out"), "--", "touch", join(dir, "ran")], { env: cleanEnv({ BATON_EVENTS: events }) });
    await eventSeen(events, "waiting");
    assert.equal(inotifyInstances(pidOf(next)), 0, "the waiter holds an inotify instance");
    writeFileSync(join(dir, "go"), "");
    const [a, b] = await Promise.all([first.exited, next.exited]);
    assert.equal(a.code, 0, a.stderr);
    assert.equal(b.code, 0, b.stderr);
    assert.equal(existsSync(join(dir, "ran")), true);
  });

  test(`${build}: the writer's wake FIFO wakes a waiter at once, before its lock is let go`, async (t) => {
    // A writer that is not a baton but plays one: its liveness file write-locked (fcntl, by python3), a FIFO beside it.
    // The waiter has no other way to notice the post file (no inotify while it follows a lock, no safety poll): only the
    // FIFO's byte.
    const dir = tempDir();
    const post0 = join(dir, "run/0/out");
    mkdirSync(join(dir, "run/0"), { recursive: true });
    writeFileSync(`${post0}.baton-live`, "baton liveness lock\nlock: fcntl F_WRLCK\n");
    execFileSync("mkfifo", ["-m", "644", `${post0}.baton-wake`]);
    const lock = "import fcntl, os, sys, time\nfd = os.open(sys.argv[1], os.O_RDWR)\nfcntl.lockf(fd, fcntl.LOCK_EX)\nprint('held', flush=True)\ntime.sleep(1000)\n";
    const holder = spawn("python3", ["-c", lock, `${post0}.baton-live`], { stdio: ["ignore", "pipe", "ignore"] });
    t.after(() => holder.kill("SIGKILL"));
    await new Promise<void>((resolve) => holder.stdout!.on("data", (chunk: Buffer) => chunk.toString().includes("held") && resolve()));
    const events = join(dir, "step1.events");
    const next = start(["--wait-file", post0, "--post-file", join(dir, "run/1/out"), "--", "touch", join(dir, "ran")], {
      env: cleanEnv({ BATON_EVENTS: events, BATON_SAFETY_POLL: "1h" }),
    });
    t.after(() => next.kill());
    await eventSeen(events, "waiting");
    await waitFor(() => (openDescriptors(pidOf(next)).some((d) => d.target === `${post0}.baton-wake`) ? true : undefined), "the waiter to poll the FIFO");
    writeFileSync(join(dir, "run/0/.out.tmp"), '{"exitCode":0}\n');
    renameSync(join(dir, "run/0/.out.tmp"), post0);
    const fd = openSync(`${post0}.baton-wake`, constants.O_WRONLY | constants.O_NONBLOCK);
    t.after(() => closeSync(fd));
    writeSync(fd, "w");
    const exit = await next.exited;
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(existsSync(join(dir, "ran")), true);
    assert.equal(holder.exitCode, null, "the lock was let go: the FIFO was not what woke the waiter");
  });

  test(`${build}: a waiter started before its predecessor lets its inotify instance go once the predecessor's baton is there`, async (t) => {
    const dir = tempDir();
    const post0 = join(dir, "run/0/out");
    mkdirSync(join(dir, "run/0"), { recursive: true });
    const events = join(dir, "step1.events");
    const next = start(["--wait-file", post0, "--post-file", join(dir, "run/1/out"), "--", "touch", join(dir, "ran")], {
      env: cleanEnv({ BATON_EVENTS: events, BATON_SAFETY_POLL: "1h" }),
    });
    t.after(() => next.kill());
    await eventSeen(events, "waiting");
    await waitFor(() => (inotifyInstances(pidOf(next)) === 1 ? true : undefined), "the waiter to watch the folder");
    const first = predecessor(dir, post0);
    t.after(() => first.kill());
    await fileAppears(`${post0}.baton-live`);
    await waitFor(() => (inotifyInstances(pidOf(next)) === 0 ? true : undefined), "the waiter to close its inotify instance");
    writeFileSync(join(dir, "go"), "");
    const exit = await next.exited;
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(existsSync(join(dir, "ran")), true);
  });

  test(`${build}: with no inotify instance at all, a waiter started first finds its predecessor's baton by polling, then notices its death`, { skip: !IS_ROOT && "needs root for a user namespace" }, async (t) => {
    const dir = tempDir();
    const post0 = join(dir, "run/0/out");
    mkdirSync(join(dir, "run/0"), { recursive: true });
    const events = join(dir, "step1.events");
    // In a user namespace of its own, max_inotify_instances can be 0: every inotify_init1 fails (EMFILE).
    const next = start(["--wait-file", post0, "--post-file", join(dir, "run/1/out"), "--", "touch", join(dir, "ran")], {
      prefix: withInotifyLimit(0),
      env: cleanEnv({ BATON_EVENTS: events, BATON_SAFETY_POLL: "1h" }),
    });
    t.after(() => next.kill());
    await eventSeen(events, "waiting");
    const first = predecessor(dir, post0, { pid1: true });
    t.after(() => first.kill());
    await fileAppears(`${post0}.baton-live`);
    // Killed before or after the poll found its liveness file: either way its lock is free when the waiter takes it.
    process.kill(await first.hostPid(), "SIGKILL");
    const exit = await next.exited;
    assert.equal(exit.code, 1, exit.stderr);
    assert.equal(readJson(join(dir, "run/1/out.err")).reason, "PreviousStepDied");
    assert.match(exit.stderr, /cannot watch .*EMFILE.*polling every 100 ms/);
  });

  test(`${build}: two waiters on one post file both hand on, and both notice a death`, async (t) => {
    for (const ending of ["hands on", "dies"]) {
      const dir = tempDir();
      const post0 = join(dir, "last");
      const first = predecessor(dir, post0);
      t.after(() => first.kill());
      await fileAppears(`${post0}.baton-live`);
      const waiters = [1, 2].map((n) => {
        const events = join(dir, `step${n}.events`);
        const step = start(["--wait-file", post0, "--post-file", join(dir, `out${n}`), "--", "true"], { env: cleanEnv({ BATON_EVENTS: events }) });
        return { step, events };
      });
      for (const { events } of waiters) await eventSeen(events, "waiting");
      if (ending === "hands on") writeFileSync(join(dir, "go"), "");
      else first.kill();
      const exits = await Promise.all(waiters.map(({ step }) => step.exited));
      for (const [n, exit] of exits.entries()) {
        if (ending === "hands on") assert.equal(exit.code, 0, `${ending}: waiter ${n + 1}: ${exit.stderr}`);
        else assert.equal(readJson(join(dir, `out${n + 1}.err`)).reason, "PreviousStepDied", `${ending}: waiter ${n + 1}: ${exit.stderr}`);
      }
    }
  });

  test(`${build}: a restarted waiter follows the same predecessor; one that comes after its death ends at once`, async (t) => {
    const { dir, post0, first } = await folderWithPredecessor(t);
    const args = ["--wait-file", post0, "--post-file", join(dir, "run/1/out"), "--", "true"];
    const events = join(dir, "step1.events");
    const before = start(args, { env: cleanEnv({ BATON_EVENTS: events }) });
    await eventSeen(events, "waiting");
    before.kill(); // its container restarts
    await before.exited;
    const restarted = start(args, { env: cleanEnv({ BATON_EVENTS: join(dir, "step1b.events") }) });
    await eventSeen(join(dir, "step1b.events"), "waiting");
    first.kill();
    const exit = await restarted.exited;
    assert.equal(exit.code, 1, exit.stderr);
    assert.equal(readJson(join(dir, "run/1/out.err")).reason, "PreviousStepDied");
    // A waiter that starts after the predecessor died: its liveness file is there, unlocked.
    const late = await start(["--wait-file", post0, "--post-file", join(dir, "run/2/out"), "--", "true"]).exited;
    assert.equal(late.code, 1, late.stderr);
    assert.equal(readJson(join(dir, "run/2/out.err")).reason, "PreviousStepDied");
  });

  test(`${build}: a waiter lets go of its writer's wake FIFO once its command has started: the writer exits then, while that command runs`, async (t) => {
    const { dir, post0, first } = await folderWithPredecessor(t);
    const events = join(dir, "step1.events");
    const next = start(["--wait-file", post0, "--post-file", join(dir, "run/1/out"), "--", "sh", "-c", shellWaitFor(join(dir, "end"))], {
      env: cleanEnv({ BATON_EVENTS: events }),
    });
    t.after(() => next.kill());
    await eventSeen(events, "waiting");
    writeFileSync(join(dir, "go"), "");
    const a = await first.exited;
    assert.equal(a.code, 0, a.stderr);
    assert.notEqual(childrenOf(pidOf(next)), "", "the writer exited before its waiter's command had started");
    assert.equal(holdsWakeFile(pidOf(next), post0), false, "the waiter still holds its writer's wake FIFO while its command runs");
    writeFileSync(join(dir, "end"), "");
    const b = await next.exited;
    assert.equal(b.code, 0, b.stderr);
  });

  for (const holder of ["a stopped waiter", "a neighbour"] as const) {
    test(`${build}: ${holder} holding the wake FIFO delays the writer's exit by ${WAITERS_START_MS} ms, never its post file or for longer`, async (t) => {
      const { dir, post0, first } = await folderWithPredecessor(t);
      let waiter: ReturnType<typeof start> | undefined;
      if (holder === "a stopped waiter") {
        const events = join(dir, "step1.events");
        waiter = start(["--wait-file", post0, "--post-file", join(dir, "run/1/out"), "--", "touch", join(dir, "ran")], { env: cleanEnv({ BATON_EVENTS: events }) });
        t.after(() => waiter!.kill());
        await eventSeen(events, "waiting");
        await waitFor(() => (holdsWakeFile(pidOf(waiter!), post0) ? true : undefined), "the waiter to poll the wake FIFO");
        process.kill(pidOf(waiter), "SIGSTOP");
        t.after(() => resume(pidOf(waiter!)));
      } else {
        // The folder is shared: anyone may open the FIFO for reading, and never close it.
        const fd = openSync(`${post0}.baton-wake`, constants.O_RDONLY | constants.O_NONBLOCK);
        t.after(() => closeSync(fd));
      }
      writeFileSync(join(dir, "go"), "");
      const a = await first.exited;
      const waited = msSinceWritten(post0);
      assert.equal(a.code, 0, a.stderr);
      assert.ok(waited >= WAITERS_START_MS - 5, `the writer exited ${waited.toFixed(0)} ms after its post file: it did not wait`);
      assert.ok(waited < 20 * WAITERS_START_MS, `the writer exited ${waited.toFixed(0)} ms after its post file`);
      if (waiter !== undefined) {
        process.kill(pidOf(waiter), "SIGCONT");
        const b = await waiter.exited;
        assert.equal(b.code, 0, b.stderr);
        assert.equal(existsSync(join(dir, "ran")), true);
      }
    });
  }

  test(`${build}: a waiter that runs no command (its predecessor failed) lets its writer go before it waits for its own waiter`, async (t) => {
    // A fails; B hands the failure on without running its command; C, waiting on B, is stopped, so B's exit waits for
    // it (WAITERS_START_MS). All that time B must hold nothing of A's, or A would wait along.
    const dir = tempDir();
    const [post0, post1] = [join(dir, "run/0/out"), join(dir, "run/1/out")];
    const first = start(["--post-file", post0, "--", "sh", "-c", `${shellWaitFor(join(dir, "go"))}; exit 3`]);
    t.after(() => first.kill());
    await fileAppears(`${post0}.baton-live`);
    const second = start(["--wait-file", post0, "--post-file", post1, "--", "touch", join(dir, "ran")], { env: cleanEnv({ BATON_EVENTS: join(dir, "b.events") }) });
    t.after(() => second.kill());
    const third = start(["--wait-file", post1, "--post-file", join(dir, "run/2/out"), "--", "true"], { env: cleanEnv({ BATON_EVENTS: join(dir, "c.events") }) });
    t.after(() => third.kill());
    await eventSeen(join(dir, "b.events"), "waiting");
    await eventSeen(join(dir, "c.events"), "waiting");
    await waitFor(() => (holdsWakeFile(pidOf(second), post0) && holdsWakeFile(pidOf(third), post1) ? true : undefined), "both waiters to poll their wake FIFOs");
    process.kill(pidOf(third), "SIGSTOP");
    t.after(() => resume(pidOf(third)));
    writeFileSync(join(dir, "go"), "");
    await waitFor(() => (existsSync(`${post1}.err`) && blockedInPoll(pidOf(second)) ? true : undefined), "the middle step to wait for its stopped waiter");
    assert.equal(holdsWakeFile(pidOf(second), post0), false, "the middle step holds its writer's FIFO while it waits for its own waiter");
    const a = await first.exited;
    assert.equal(a.code, 3, a.stderr);
    const b = await second.exited;
    assert.equal(b.code, 1, b.stderr);
    assert.equal(existsSync(join(dir, "ran")), false);
    process.kill(pidOf(third), "SIGCONT");
    await third.exited;
  });

  test(`${build}: a symlink or a socket planted at the channel's path is not believed: the waiter waits for the post file`, async (t) => {
    const dir = tempDir();
    // A dead baton's liveness file (marked, unlocked), as a hostile neighbour could copy one.
    const dead = join(dir, "dead/out");
    const died = await start(["--post-file", dead, "--", "true"]).exited;
    assert.equal(died.code, 0, died.stderr);
    for (const planted of ["symlink", "socket"]) {
      const post = join(dir, `${planted}/out`);
      mkdirSync(join(dir, planted));
      let server: ReturnType<typeof createServer> | undefined;
      if (planted === "symlink") symlinkSync(`${dead}.baton-live`, `${post}.baton-live`);
      else {
        server = createServer();
        await new Promise<void>((r) => server!.listen(`${post}.baton-live`, r));
        t.after(() => server!.close());
      }
      const events = join(dir, `${planted}.events`);
      const step = start(["--wait-file", post, "--post-file", join(dir, `${planted}.next`), "--", "true"], { env: cleanEnv({ BATON_EVENTS: events }) });
      t.after(() => step.kill());
      await eventSeen(events, "waiting");
      await new Promise((r) => setTimeout(r, 1000)); // time enough to take the planted file for a dead writer's
      copyFileSync(join(dir, "dead/out"), post);
      const exit = await step.exited;
      assert.equal(exit.code, 0, `${planted}: ${exit.stderr}`);
    }
  });
}
