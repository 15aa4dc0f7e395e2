// The hand-off channel's threads and descriptors under attack (src/addon/wait-events.c, src/handoff/liveness-lock.ts;
// docs/design.md "Waiting"): a signal, a cancel file or a wait timeout while the thread is blocked on the writer's lock;
// several waits in one process (a sidecar's stop files); no thread to be had (the pod's PID limit full); no command,
// the writer's or a waiter's, ever holding a liveness file (inherited, it would keep a dead baton's lock) or a wake
// FIFO; and the wake FIFO (POST.baton-wake) planted, swapped or fed by a neighbour.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, closeSync, constants, mkdirSync, openSync, readdirSync, readFileSync, renameSync, symlinkSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import { execFileSync, spawnSync } from "node:child_process";
import {
  BATON, NO_STANDALONE, STANDALONE, IS_ROOT, cleanEnv, eventSeen, existsSync, fileAppears, holdsWakeFile, join, pidsCgroup, readEvents, readJson, shellWaitFor, sleepingIn,
  startBaton, tempDir, waitFor, readOnlyNeighbour,
  type Exit, type StartOptions,
} from "./helpers.js";
import { inotifyInstances, openDescriptors } from "../../scripts/bench/inotify.mjs";

/** What the descriptors of `pid` point at (`PATH (deleted)` for a file no longer at its name); none once it ended. */
function openFiles(pid: number): string[] {
  return openDescriptors(pid).map((d) => d.target);
}

/**
 * The liveness files of `posts` that a process holds open: a waiting baton holds its predecessor's while a thread of
 * its own is blocked on that lock (and its own post file's all along: not counted here).
 */
function livenessFilesOpen(pid: number, ...posts: string[]): string[] {
  const wanted = new Set(posts.map((post) => `${post}.baton-live`));
  return openFiles(pid).filter((file) => wanted.has(file)).sort();
}

/** The descriptors of `pid` that it polls: those registered in its epoll instances (their fdinfo's `tfd:` lines). */
function polledDescriptors(pid: number): Set<string> {
  const polled = new Set<string>();
  for (const { fd, target } of openDescriptors(pid)) {
    if (target !== "anon_inode:[eventpoll]") continue;
    let info = "";
    try {
      info = readFileSync(`/proc/${pid}/fdinfo/${fd}`, "utf8");
    } catch {
      continue; // closed while we looked
    }
    for (const match of info.matchAll(/^tfd:\s+(\d+)/gm)) polled.add(match[1]!);
  }
  return polled;
}

/** The descriptors of `pid` open on `post`'s wake FIFO. */
function wakeDescriptors(pid: number, post: string): string[] {
  return openDescriptors(pid).filter((d) => d.target === `${post}.baton-wake`).map((d) => d.fd);
}

/** Whether `pid`'s main thread sleeps in epoll_wait: its event loop is between turns. */
function inEventLoopWait(pid: number): boolean {
  return /epoll/.test(sleepingIn(pid));
}

/** A FIFO at PATH with a byte in it, kept there by a descriptor of this process (closed after the test). */
function fedFifo(path: string): number {
  execFileSync("mkfifo", [path]);
  const fd = openSync(path, constants.O_RDWR | constants.O_NONBLOCK);
  writeSync(fd, "x");
  return fd;
}

/** The threads of `pid` blocked on a writer's lock, or on their way out: the addon names them baton-wait. */
function waitThreads(pid: number): number {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return 0;
  }
  return tasks.filter((task) => {
    try {
      return readFileSync(`/proc/${pid}/task/${task}/comm`, "utf8") === "baton-wait\n";
    } catch {
      return false; // ended meanwhile
    }
  }).length;
}

/** `exited`, or a failure naming `what` if the process is still there after `ms` (generous: the machine is shared). */
async function endsWithin(exited: Promise<Exit>, ms: number, what: string): Promise<Exit> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still running after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([exited, late]);
  } finally {
    clearTimeout(timer);
  }
}

const BUILDS = [
  { build: "bundle", words: [process.execPath, BATON] },
  { build: "standalone", words: [STANDALONE] },
];
const cgroup = pidsCgroup();
/** A python3 that another uid may run too (not a shim under root's home). */
const PYTHON = existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
const NO_PYTHON = spawnSync(PYTHON, ["-c", "pass"]).status !== 0 && "needs python3";


for (const { build, words } of BUILDS) {
  if (build === "standalone" && NO_STANDALONE) {
    test(`${build}: every test of this file`, { skip: NO_STANDALONE }, () => {});
    continue;
  }
  const start = (args: string[], options: StartOptions = {}) => startBaton(args, { baton: words, ...options });

  /** A step that runs until DIR/go-NAME exists, then hands on POST; resolves once its liveness file is there. */
  async function predecessor(dir: string, post: string, name = "go", command = "true") {
    const step = start(["--post-file", post, "--", "sh", "-c", `${command}; ${shellWaitFor(join(dir, name))}`]);
    await fileAppears(`${post}.baton-live`);
    return step;
  }

  /** A step waiting on `post` whose command touches DIR/ran; resolves once it said "waiting". */
  async function waiting(dir: string, post: string, t: { after(fn: () => void): void }) {
    const events = join(dir, "waiter.events");
    const waiter = start(["--wait-file", post, "--post-file", join(dir, "next"), "--", "touch", join(dir, "ran")], { env: cleanEnv({ BATON_EVENTS: events }) });
    t.after(() => waiter.kill());
    await eventSeen(events, "waiting");
    return { waiter, pid: waiter.child.pid! };
  }

  /** A waiter on `post` whose thread is blocked on the predecessor's lock (it holds the liveness file open). */
  async function blockedWaiter(dir: string, post: string, extra: string[], options: StartOptions = {}) {
    const events = join(dir, "waiter.events");
    const waiter = start(["--wait-file", post, "--post-file", join(dir, "next"), ...extra, "--", "touch", join(dir, "ran")], {
      ...options,
      env: cleanEnv({ BATON_EVENTS: events }),
    });
    await eventSeen(events, "waiting");
    const pid = await waiter.hostPid();
    // The main thread opens the file and hands it to the thread, which names itself once it runs.
    await waitFor(() => (livenessFilesOpen(pid, post).length === 1 && waitThreads(pid) === 1 ? true : undefined), "the waiter's thread to block on the lock");
    return { waiter, pid };
  }

  for (const [name, number] of [["SIGTERM", 15], ["SIGINT", 2]] as const) {
    test(`${build}: as PID 1, ${name} while the thread is blocked on the writer's lock ends the wait at once: POST.err, exit ${128 + number}`, { skip: !IS_ROOT && "needs root for a PID namespace" }, async (t) => {
      const dir = tempDir();
      const post = join(dir, "prev");
      const first = await predecessor(dir, post);
      t.after(() => first.kill());
      const { waiter, pid } = await blockedWaiter(dir, post, [], { pid1: true });
      process.kill(pid, name);
      const exit = await endsWithin(waiter.exited, 20_000, "the waiter after its signal");
      assert.equal(exit.code, 128 + number, exit.stderr);
      assert.match(exit.stderr, new RegExp(`^baton: stopped by ${name} while waiting$`, "m"));
      assert.equal(readJson(join(dir, "next.err")).reason, "Signaled");
      assert.equal(existsSync(join(dir, "ran")), false);
      // The writer is none the worse: it still hands on.
      writeFileSync(join(dir, "go"), "");
      assert.equal((await first.exited).code, 0);
    });
  }

  test(`${build}: --wait-timeout and --cancel-file end a wait whose thread is blocked on the writer's lock`, async (t) => {
    for (const [how, extra, code, reason] of [
      // Long enough for the test to see the thread blocked first, on a loaded machine and the standalone build.
      ["wait timeout", ["--wait-timeout", "10s"], 124, "WaitTimeout"],
      ["cancel file", ["--cancel-file", "CANCEL"], 143, "Cancelled"],
    ] as const) {
      const dir = tempDir();
      const post = join(dir, "prev");
      const first = await predecessor(dir, post);
      t.after(() => first.kill());
      const { waiter } = await blockedWaiter(dir, post, extra.map((word) => word.replace("CANCEL", join(dir, "cancel"))));
      if (how === "cancel file") writeFileSync(join(dir, "cancel"), "cancel");
      const exit = await endsWithin(waiter.exited, 30_000, `the waiter after its ${how}`);
      assert.equal(exit.code, code, `${how}: ${exit.stderr}`);
      assert.equal(readJson(join(dir, "next.err")).reason, reason, how);
      assert.equal(existsSync(join(dir, "ran")), false, how);
    }
  });

  test(`${build}: a sidecar waiting on two batons' stop files blocks a thread on each; the first hand-on stops it, the other thread does not keep it`, async (t) => {
    const dir = tempDir();
    const [a, b] = [join(dir, "a/out"), join(dir, "b/out")];
    const first = await predecessor(dir, a, "go-a");
    const second = await predecessor(dir, b, "go-b");
    t.after(() => first.kill());
    t.after(() => second.kill());
    const events = join(dir, "sidecar.events");
    const sidecar = start(["sidecar", "--stop-file", a, "--stop-file", b, "--", "sh", "-c", `ls -l /proc/self/fd/ > ${dir}/sidecar-fds; exec sleep 1000`], {
      env: cleanEnv({ BATON_EVENTS: events }),
    });
    t.after(() => sidecar.kill());
    await eventSeen(events, "command");
    const pid = sidecar.child.pid!;
    await waitFor(() => (livenessFilesOpen(pid, a, b).length === 2 && waitThreads(pid) === 2 ? true : undefined), "a thread blocked on each stop file's lock");
    assert.deepEqual(livenessFilesOpen(pid, a, b), [`${a}.baton-live`, `${b}.baton-live`]);
    assert.equal(inotifyInstances(pid), 0);
    writeFileSync(join(dir, "go-a"), "");
    const exit = await endsWithin(sidecar.exited, 30_000, "the sidecar after its first stop file");
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(readEvents(events).find((e) => e.event === "stopping")?.file, a);
    // The sidecar's command ran while both threads held a liveness file: it inherited neither.
    await fileAppears(join(dir, "sidecar-fds"));
    assert.doesNotMatch(readFileSync(join(dir, "sidecar-fds"), "utf8"), /baton-live/);
  });

  test(`${build}: no command inherits a liveness file: the writer's (a killed baton's command would keep its lock) and its waiter's`, async (t) => {
    const dir = tempDir();
    const post = join(dir, "prev");
    // The writer's command, started from UTF-8 words and from a byte that is not (0xff: the addon's spawnBytes).
    for (const [how, prefix] of [["UTF-8", []], ["not UTF-8", ["sh", "-c", `exec "$@" "$(printf '\\377')"`, "sh"]]] as const) {
      const fds = join(dir, `writer-fds-${how}`);
      const args = ["--post-file", join(dir, `solo-${how}`), "--", "sh", "-c", `ls -l /proc/self/fd/ > '${fds}'`, "sh"];
      const exit = await endsWithin(start(args, { prefix: [...prefix] }).exited, 30_000, "a writer");
      assert.equal(exit.code, 0, exit.stderr);
      assert.doesNotMatch(readFileSync(fds, "utf8"), /baton-live|baton-wake/, `the command of a writer started from ${how} words`);
    }
    const first = await predecessor(dir, post, "go", `ls -l /proc/self/fd/ > ${dir}/writer-fds`);
    t.after(() => first.kill());
    const events = join(dir, "waiter.events");
    // --cancel-file: the waiter holds an inotify instance of its own while its command starts, too.
    const command = `ls -l /proc/self/fd/ > ${dir}/fds-tmp && mv ${dir}/fds-tmp ${dir}/waiter-fds; ${shellWaitFor(join(dir, "end"))}`;
    const waiter = start(["--wait-file", post, "--post-file", join(dir, "next"), "--cancel-file", join(dir, "cancel"), "--", "sh", "-c", command], {
      env: cleanEnv({ BATON_EVENTS: events }),
    });
    t.after(() => waiter.kill());
    await eventSeen(events, "waiting");
    const pid = waiter.child.pid!;
    await waitFor(() => (livenessFilesOpen(pid, post).length === 1 ? true : undefined), "the waiter's thread to hold the liveness file");
    writeFileSync(join(dir, "go"), "");
    // Its command runs: the wait's thread has let go of the writer's file and ended, and its poll of the wake FIFO is
    // closed.
    await fileAppears(join(dir, "waiter-fds"));
    await waitFor(() => (waitThreads(pid) === 0 ? true : undefined), "the wait's thread to end");
    assert.deepEqual(livenessFilesOpen(pid, post), []);
    assert.equal(holdsWakeFile(pid, post), false, "the waiter still holds its predecessor's wake FIFO");
    writeFileSync(join(dir, "end"), "");
    const exit = await endsWithin(waiter.exited, 30_000, "the waiter");
    assert.equal(exit.code, 0, exit.stderr);
    assert.doesNotMatch(readFileSync(join(dir, "writer-fds"), "utf8"), /baton-live|baton-wake/);
    assert.doesNotMatch(readFileSync(join(dir, "waiter-fds"), "utf8"), /baton-live|baton-wake|inotify/);
  });

  test(`${build}: the liveness file renamed over or removed while the thread is blocked on it: the living writer is still followed`, async (t) => {
    const dir = tempDir();
    // A dead baton's liveness file (marked, unlocked): what a neighbour who may write the folder could rename in.
    const dead = join(dir, "dead");
    assert.equal((await endsWithin(start(["--post-file", dead, "--", "true"]).exited, 30_000, "a writer")).code, 0);
    for (const [how, ending] of [["renamed over", "hands on"], ["renamed over", "dies"], ["removed", "hands on"], ["removed", "dies"]] as const) {
      const sub = join(dir, `${how.replace(" ", "-")}-${ending.replace(" ", "-")}`);
      mkdirSync(sub);
      const post = join(sub, "prev");
      const first = await predecessor(sub, post);
      t.after(() => first.kill());
      const { waiter, pid } = await blockedWaiter(sub, post, []);
      if (how === "renamed over") {
        writeFileSync(join(sub, "fake"), readFileSync(`${dead}.baton-live`));
        renameSync(join(sub, "fake"), `${post}.baton-live`);
      } else unlinkSync(`${post}.baton-live`);
      // Its thread is still blocked on the writer's lock, through the file that is no longer at that name.
      await new Promise((r) => setTimeout(r, 1000)); // time enough to take the change for a death, were it taken so
      assert.ok(openFiles(pid).includes(`${post}.baton-live (deleted)`), `${how}, ${ending}: the thread let go of the writer's file`);
      assert.deepEqual(livenessFilesOpen(pid, post), [], `${how}, ${ending}: the waiter follows the file now at that name`);
      assert.equal(waiter.child.exitCode, null, `${how}, ${ending}: the waiter ended while its writer lives`);
      if (ending === "hands on") writeFileSync(join(sub, "go"), "");
      else first.kill();
      const exit = await endsWithin(waiter.exited, 30_000, `the waiter (${how}, the writer ${ending})`);
      if (ending === "hands on") assert.equal(exit.code, 0, `${how}, ${ending}: ${exit.stderr}`);
      else assert.equal(readJson(join(sub, "next.err")).reason, "PreviousStepDied", `${how}, ${ending}: ${exit.stderr}`);
    }
  });

  test(`${build}: a post file written by a script while its baton still lives (Tekton's debug-continue at the onFailure breakpoint) starts the next step`, async (t) => {
    const dir = tempDir();
    const post = join(dir, "prev");
    const events = join(dir, "first.events");
    const first = start(["--post-file", post, "--breakpoint-on-failure", "--", "sh", "-c", "exit 3"], { env: cleanEnv({ BATON_EVENTS: events }) });
    t.after(() => first.kill());
    const { waiter } = await blockedWaiter(dir, post, []);
    await eventSeen(events, "done"); // its outcome is written (no post file: the breakpoint's), it holds its lock and waits
    assert.equal(waiter.child.exitCode, null);
    // What /tekton/debug/scripts/debug-continue does: the post file, then the breakpoint's exit code.
    writeFileSync(post, "");
    writeFileSync(`${post}.breakpointexit`, "0\n");
    const [a, b] = await Promise.all([endsWithin(first.exited, 30_000, "the step at its breakpoint"), endsWithin(waiter.exited, 30_000, "the waiter")]);
    assert.equal(a.code, 0, a.stderr);
    assert.equal(b.code, 0, b.stderr);
    assert.equal(existsSync(join(dir, "ran")), true);
  });

  test(`${build}: with the PID limit full (no thread to block on the lock), a waiter still notices its predecessor's death`, { skip: !cgroup && "needs root and a pids cgroup" }, async (t) => {
    const dir = tempDir();
    const post = join(dir, "run/0/out");
    mkdirSync(join(dir, "run/0"), { recursive: true });
    const events = join(dir, "waiter.events");
    const enter = ["sh", "-c", `echo $$ > ${cgroup}/cgroup.procs && exec "$@"`, "sh"];
    // Started first, so it watches the folder until the predecessor's baton is there; no safety poll to lean on.
    const waiter = start(["--wait-file", post, "--post-file", join(dir, "run/1/out"), "--", "touch", join(dir, "ran")], {
      prefix: enter,
      env: cleanEnv({ BATON_EVENTS: events, BATON_SAFETY_POLL: "1h" }),
    });
    t.after(() => waiter.kill());
    await eventSeen(events, "waiting");
    const pid = waiter.child.pid!; // sh execs baton
    await waitFor(() => (inotifyInstances(pid) === 1 ? true : undefined), "the waiter to watch the folder");
    const limit = join(cgroup!, "pids.max");
    const refusals = () => Number(/^max (\d+)$/m.exec(readFileSync(join(cgroup!, "pids.events"), "utf8"))?.[1] ?? 0);
    const refusedBefore = refusals();
    // Under what is running already: no new thread at all (one that ended meanwhile must not make room for ours).
    writeFileSync(limit, "1");
    t.after(() => writeFileSync(limit, "max"));
    const first = await predecessor(dir, post);
    t.after(() => first.kill());
    // The waiter saw the liveness file and could not start its thread.
    await waitFor(() => (refusals() > refusedBefore ? true : undefined), "the waiter's thread to be refused");
    // Each look opens the liveness file for a moment: a thread would hold it for good.
    await waitFor(() => (livenessFilesOpen(pid, post).length === 0 ? true : undefined), "no thread of the waiter to hold the liveness file");
    assert.equal(waitThreads(pid), 0);
    first.kill();
    const exit = await endsWithin(waiter.exited, 30_000, "the waiter after its predecessor's death");
    assert.equal(exit.code, 1, exit.stderr);
    assert.equal(readJson(join(dir, "run/1/out.err")).reason, "PreviousStepDied");
    assert.equal(existsSync(join(dir, "ran")), false);
  });

  test(`${build}: a neighbour's byte in POST.baton-wake wakes a waiter once: it looks, stops polling the FIFO, and waits on`, async (t) => {
    const dir = tempDir();
    const post = join(dir, "prev");
    const first = await predecessor(dir, post);
    t.after(() => first.kill());
    const { waiter, pid } = await waiting(dir, post, t);
    const polled = () => wakeDescriptors(pid, post).filter((fd) => polledDescriptors(pid).has(fd));
    await waitFor(() => (livenessFilesOpen(pid, post).length === 1 && polled().length === 1 ? true : undefined), "the waiter to poll the wake FIFO");
    // Anyone who can open the FIFO for writing can put a byte in it (the folder is shared).
    const fd = openSync(`${post}.baton-wake`, constants.O_WRONLY | constants.O_NONBLOCK);
    t.after(() => closeSync(fd));
    writeSync(fd, "x");
    // Woken, it looked, found no post file and stopped polling the FIFO: a level-triggered poll left on would spin on
    // the byte. It still holds the FIFO open, for its writer to see (docs/design.md "Stepping aside").
    await waitFor(() => (polled().length === 0 ? true : undefined), "the waiter to stop polling the FIFO after one look");
    assert.equal(wakeDescriptors(pid, post).length, 1, "the waiter let go of its writer's FIFO before its command started");
    assert.equal(existsSync(join(dir, "ran")), false, "the command ran on a neighbour's byte");
    assert.deepEqual(livenessFilesOpen(pid, post), [`${post}.baton-live`], "the lock thread stopped waiting");
    writeFileSync(join(dir, "go"), "");
    const exit = await endsWithin(waiter.exited, 30_000, "the waiter");
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(existsSync(join(dir, "ran")), true);
  });

  for (const planted of ["folder", "regular file", "symlink to a fed FIFO"] as const) {
    test(`${build}: a ${planted} at POST.baton-wake: the waiter holds none of it open and hands on through the lock`, async (t) => {
      const dir = tempDir();
      const post = join(dir, "prev");
      const first = await predecessor(dir, post);
      t.after(() => first.kill());
      const wake = `${post}.baton-wake`;
      unlinkSync(wake);
      if (planted === "folder") mkdirSync(wake);
      else if (planted === "regular file") writeFileSync(wake, "x");
      else {
        const fd = fedFifo(join(dir, "elsewhere"));
        t.after(() => closeSync(fd));
        symlinkSync(join(dir, "elsewhere"), wake);
      }
      const { waiter, pid } = await waiting(dir, post, t);
      // The liveness file is opened in the same synchronous turn as the wake file is opened, checked and closed again:
      // once the main thread is back in epoll_wait with the liveness file open, that turn is over.
      await waitFor(() => (livenessFilesOpen(pid, post).length === 1 && inEventLoopWait(pid) ? true : undefined), "the waiter to be waiting, its liveness file held");
      assert.equal(holdsWakeFile(pid, post), false, `the waiter holds the ${planted}`);
      assert.equal(openFiles(pid).some((file) => file.endsWith("elsewhere")), false, "the symlink was followed");
      writeFileSync(join(dir, "go"), "");
      const exit = await endsWithin(waiter.exited, 30_000, "the waiter");
      assert.equal(exit.code, 0, exit.stderr);
      assert.equal(existsSync(join(dir, "ran")), true);
    });
  }

  test(`${build}: a folder planted at POST.baton-wake before the writer starts: it hands on through the lock, and leaves no temporary FIFO`, async (t) => {
    const dir = tempDir();
    const post = join(dir, "prev");
    mkdirSync(`${post}.baton-wake/inside`, { recursive: true });
    const first = await predecessor(dir, post);
    t.after(() => first.kill());
    const { waiter } = await waiting(dir, post, t);
    writeFileSync(join(dir, "go"), "");
    const [a, b] = await Promise.all([endsWithin(first.exited, 30_000, "the writer"), endsWithin(waiter.exited, 30_000, "the waiter")]);
    assert.equal(a.code, 0, a.stderr);
    assert.equal(b.code, 0, b.stderr);
    assert.equal(existsSync(join(dir, "ran")), true);
    assert.deepEqual(readdirSync(dir).filter((name) => name.startsWith(".")), [], "a temporary FIFO was left behind");
  });

  test(`${build}: a writer whose container restarts: the waiter lets the dead baton's wake FIFO go and polls the new one's`, async (t) => {
    const dir = tempDir();
    const post = join(dir, "prev");
    const before = await predecessor(dir, post);
    t.after(() => before.kill());
    const { waiter, pid } = await waiting(dir, post, t);
    await waitFor(() => (holdsWakeFile(pid, post) ? true : undefined), "the waiter to poll the first writer's FIFO");
    // A neighbour holds the first FIFO open for writing: its baton's death then ends no poll by POLLHUP (the last
    // writer going), so only the end of the wait can let that poll go.
    const neighbour = openSync(`${post}.baton-wake`, constants.O_WRONLY | constants.O_NONBLOCK);
    t.after(() => closeSync(neighbour));
    // The waiter is stopped while the old baton dies and the new one (the container restarted: only once the old one is
    // gone) renames its own liveness file and FIFO into place: woken, it finds a new writer, not a death.
    process.kill(pid, "SIGSTOP");
    let after: ReturnType<typeof start> | undefined;
    try {
      before.kill();
      await endsWithin(before.exited, 30_000, "the old writer");
      after = start(["--post-file", post, "--", "sh", "-c", shellWaitFor(join(dir, "go"))]);
      t.after(() => after!.kill());
      await waitFor(() => (after!.child.pid !== undefined && openFiles(after!.child.pid).includes(`${post}.baton-wake`) ? true : undefined), "the new writer to hold its FIFO");
      await waitFor(() => (readdirSync(dir).filter((name) => name.startsWith(".prev.")).length === 0 ? true : undefined), "the new writer's files in place");
    } finally {
      process.kill(pid, "SIGCONT");
    }
    const polled = () => openFiles(pid).filter((file) => file.startsWith(`${post}.baton-wake`));
    await waitFor(() => (polled().length === 1 && polled()[0] === `${post}.baton-wake` ? true : undefined), "the waiter to poll the new FIFO only");
    assert.equal(existsSync(join(dir, "ran")), false);
    writeFileSync(join(dir, "go"), "");
    const exit = await endsWithin(waiter.exited, 30_000, "the waiter");
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(existsSync(join(dir, "ran")), true);
  });

  test(`${build}: a waiter out of descriptors (EMFILE: no liveness file held, no inotify, polling) still notices its writer's death`, async (t) => {
    const dir = tempDir();
    const post = join(dir, "prev");
    const writer = await predecessor(dir, post);
    t.after(() => writer.kill());
    // The lowest descriptor limit at which baton's code runs and starts to wait depends on the runtime (19-24 here):
    // the first limit at which the waiter says it polls. Below it, Node or the lock fails before any wait.
    let found: { exited: Promise<Exit>; limit: number } | undefined;
    for (let limit = 19; limit <= 40 && found === undefined; limit++) {
      const next = join(dir, `next-${limit}`);
      const waiter = start(["--wait-file", post, "--post-file", next, "--", "touch", join(dir, "ran")], { baton: ["prlimit", `--nofile=${limit}`, ...words] });
      t.after(() => waiter.kill());
      let said = "";
      let ended = false;
      waiter.child.stderr!.on("data", (chunk: Buffer | string) => (said += chunk.toString()));
      void waiter.exited.then(() => (ended = true));
      // Polling for want of descriptors; or not: ended (Node or the lock failed), or following the writer's lock as
      // usual (it holds the liveness file open: enough descriptors at this limit). A limit that left baton's code no
      // descriptor at all, not even its spare (the addon could not load: DLOPEN), is below what anything can do.
      const polling = await waitFor(() => {
        if (/; polling every/.test(said)) return !/DLOPEN/.test(said);
        if (ended || livenessFilesOpen(waiter.child.pid!, post).length > 0) return false;
        return undefined;
      }, `the waiter at ${limit} descriptors to poll, follow or end`);
      if (polling) found = { exited: waiter.exited, limit };
    }
    assert.ok(found, "some limit left the waiter polling for want of descriptors");
    writer.kill();
    const exit = await endsWithin(found.exited, 20_000, `the waiter (${found.limit} descriptors)`);
    assert.equal(exit.code, 1, exit.stderr);
    assert.match(exit.stderr, /the previous step's baton died before it handed on/);
    assert.doesNotMatch(exit.stderr, /DLOPEN/, "the addon loads in the spare descriptor's slot");
    assert.equal(readJson(join(dir, `next-${found.limit}.err`)).reason, "PreviousStepDied");
    assert.equal(existsSync(join(dir, "ran")), false);
  });

  test(`${build}: a neighbour that may only read, holding locks on a dead writer's liveness file (flock LOCK_EX, an fcntl read lock), hides the death from no waiter, early or late`, { skip: (!IS_ROOT && "needs root (another uid, a mount namespace)") || NO_PYTHON }, async (t) => {
    const dir = tempDir();
    chmodSync(dir, 0o777);
    const post = join(dir, "prev");
    const writer = await predecessor(dir, post);
    t.after(() => writer.kill());
    const early = start(["--wait-file", post, "--post-file", join(dir, "early"), "--", "touch", join(dir, "ran")], { env: cleanEnv({ BATON_EVENTS: join(dir, "early.events") }) });
    t.after(() => early.kill());
    await eventSeen(join(dir, "early.events"), "waiting");
    // Every lock a reader can take, each as soon as the writer lets go, and kept: flock needs only read access, and so
    // does an fcntl read lock.
    const hold = `
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.flock(fd, fcntl.LOCK_EX)
fcntl.lockf(fd, fcntl.LOCK_SH)
print("locked", flush=True)
time.sleep(1000)
`;
    const neighbour = startBaton([], { baton: [...readOnlyNeighbour(dir), PYTHON, "-c", hold, `${post}.baton-live`] });
    t.after(() => neighbour.kill());
    const locked = new Promise<void>((resolve) => neighbour.child.stdout!.on("data", (chunk: Buffer) => chunk.toString().includes("locked") && resolve()));
    writer.kill();
    await locked;
    // A waiter that starts now never saw the writer alive: no hang-up of its FIFO can tell it anything.
    const late = start(["--wait-file", post, "--post-file", join(dir, "late"), "--", "touch", join(dir, "ran")]);
    t.after(() => late.kill());
    for (const [name, waiter] of [["late", late], ["early", early]] as const) {
      const exit = await endsWithin(waiter.exited, 10_000, `the ${name} waiter`);
      assert.equal(exit.code, 1, `${name}: ${exit.stderr}`);
      assert.match(exit.stderr, /the previous step's baton died before it handed on/, name);
      assert.equal(readJson(join(dir, `${name}.err`)).reason, "PreviousStepDied", name);
    }
    assert.equal(existsSync(join(dir, "ran")), false);
  });

  test(`${build}: once a step has handed on and exited, reading every file of its folder (cat DIR/*) ends: its wake FIFO went with it, and a waiter that comes later still hands on`, async (t) => {
    const dir = tempDir();
    const post = join(dir, "prev");
    const waiter = start(["--wait-file", post, "--post-file", join(dir, "next"), "--", "touch", join(dir, "ran")], { env: cleanEnv({ BATON_EVENTS: join(dir, "waiter.events") }) });
    t.after(() => waiter.kill());
    await eventSeen(join(dir, "waiter.events"), "waiting");
    const first = await endsWithin(start(["--post-file", post, "--", "true"]).exited, 30_000, "the writer");
    assert.equal(first.code, 0, first.stderr);
    assert.equal((await endsWithin(waiter.exited, 30_000, "the waiter")).code, 0);
    // Both batons are gone: no FIFO of theirs is left for a reader to wait on for ever.
    const cat = await endsWithin(startBaton([], { baton: ["sh", "-c", `cat ${dir}/* > /dev/null`] }).exited, 10_000, "cat of every file of the folder");
    assert.equal(cat.code, 0, cat.stderr);
    assert.deepEqual(readdirSync(dir).filter((name) => name.endsWith(".baton-wake")), []);
    // A step that begins to wait now follows the lock alone (free), and finds the post file.
    const late = await endsWithin(start(["--wait-file", post, "--post-file", join(dir, "late"), "--", "touch", join(dir, "late-ran")]).exited, 30_000, "a late waiter");
    assert.equal(late.code, 0, late.stderr);
    assert.equal(existsSync(join(dir, "late-ran")), true);
  });
}
