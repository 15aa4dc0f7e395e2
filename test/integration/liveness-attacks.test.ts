// The liveness lock against a hostile or odd run folder (issue 20: items 1, 2, 3, 8, 12): files at the lock's name that
// are not baton's, a FIFO there, a step killed before its command, other uids and umasks, a folder that takes no file,
// a folder made again with the same inode number. And (a hostile neighbour, round three: items 3, 9, 11) two steps
// given one post file, an earlier run's post file, a reader of another uid racing the writer for its lock, and a
// descriptor limit that left a step without its lock. Each of these failed on the bundle before the fix.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, readdirSync, rmdirSync, statSync, writeFileSync } from "node:fs";
import { execFileSync, spawnSync, type ChildProcess } from "node:child_process";
import {
  BATON, NO_STANDALONE, STANDALONE, cleanEnv, eventSeen, existsSync, fileAppears, join, readEvents, readJson, runBaton, shellWaitFor, sleepingIn, startBaton, tempDir,
  waitFor, IS_ROOT, AS_NOBODY, readOnlyNeighbour,
  type Exit, type StartOptions,
} from "./helpers.js";
import { inMountNamespace, readOnlyFolder } from "../../scripts/bench/namespaces.mjs";

const skipRoot = !IS_ROOT && "needs root (other uids, mount namespaces)";
/** Run as nobody: another uid than the predecessor's, with no right to read 0600 files of root's. */

/** Resolves once the process has written a line matching `pattern` on stderr. */
function stderrSays(child: ChildProcess, pattern: RegExp): Promise<void> {
  let text = "";
  return new Promise((resolve) => {
    child.stderr!.on("data", (chunk: Buffer) => {
      text += chunk.toString();
      if (pattern.test(text)) resolve();
    });
  });
}

const NO_STRACE = spawnSync("strace", ["-V"]).status !== 0 && "needs strace";
/** A python3 that another uid may run too (not a shim under root's home). */
const PYTHON = existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
const NO_PYTHON = spawnSync(PYTHON, ["-c", "pass"]).status !== 0 && "needs python3";
const NO_CC = spawnSync("cc", ["--version"]).status !== 0 && "needs a C compiler";


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

/** A preload library with which open(2) refuses O_TMPFILE, as an older overlayfs does; every other open as usual. */
function noTmpfileShim(dir: string): string {
  const shim = join(dir, "no-tmpfile.so");
  execFileSync("cc", ["-shared", "-fPIC", "-o", shim, "-x", "c", "-", "-ldl"], {
    input: `#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
static int refused(const char *name, const char *path, int flags, va_list more) {
  mode_t mode = va_arg(more, mode_t);
  if ((flags & O_TMPFILE) == O_TMPFILE) return errno = EOPNOTSUPP, -1;
  int (*real)(const char *, int, ...) = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, name);
  return real(path, flags, mode);
}
int open(const char *path, int flags, ...) { va_list more; va_start(more, flags); int fd = refused("open", path, flags, more); va_end(more); return fd; }
int open64(const char *path, int flags, ...) { va_list more; va_start(more, flags); int fd = refused("open64", path, flags, more); va_end(more); return fd; }
`,
  });
  return shim;
}

/**
 * A neighbour (python3) that opens every new file beside the post file `out` as soon as it sees it, takes a shared
 * flock and an fcntl read lock on it, and keeps them: the first `most` files, or all. Resolves once it watches, with
 * what it has said so far.
 */
async function lockGrabber(dir: string, prefix: string[], t: { after(fn: () => void): void }, most = 1_000_000) {
  const grab = `
import fcntl, os, sys, time
folder, most = sys.argv[1], int(sys.argv[2])
held = []
print("ready", flush=True)
while True:
    for name in os.listdir(folder):
        if not name.startswith(".out.baton-live.") or name in held or len(held) >= most:
            continue
        try:
            fd = os.open(os.path.join(folder, name), os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            continue
        for lock in (fcntl.flock, fcntl.lockf):
            try:
                lock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                print("locked", name, lock.__name__, flush=True)
            except OSError:
                pass
        held.append(name)
    time.sleep(0.0005)
`;
  const neighbour = startBaton([], { baton: [...prefix, PYTHON, "-c", grab, dir, String(most)] });
  t.after(() => neighbour.kill());
  const said = { text: "" };
  await new Promise<void>((resolve) => neighbour.child.stdout!.on("data", (chunk: Buffer) => ((said.text += chunk.toString()), said.text.includes("ready") && resolve())));
  return said;
}

/** A folder every uid may enter and write, as a shared volume is. */
function sharedDir(): string {
  const dir = tempDir();
  chmodSync(dir, 0o777);
  return dir;
}

/** Every attack runs on the bundle and on the standalone build (`make sea`). */
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
  const run = (args: string[], options: StartOptions = {}) => runBaton(args, { baton: words, ...options });

  test(`${build}: a Gemfile.lock beside an awaited Gemfile is not a lock of baton's: the step waits for the Gemfile`, async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "Gemfile.lock"), "GEM\n  remote: https://rubygems.org/\n");
    const events = join(dir, "events");
    const step = start(["--wait-file", join(dir, "Gemfile"), "--post-file", join(dir, "post"), "--", "touch", join(dir, "ran")], {
      env: cleanEnv({ BATON_EVENTS: events }),
    });
    await eventSeen(events, "waiting");
    // Long enough for the old liveness look (every 500 ms) to have taken Gemfile.lock for a dead step's lock.
    await new Promise((r) => setTimeout(r, 1500));
    writeFileSync(join(dir, "Gemfile"), "source 'https://rubygems.org'\n");
    const exit = await step.exited;
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(existsSync(join(dir, "ran")), true);
  });

  test(`${build}: a sidecar whose stop file has an unrelated .lock beside it does not stop at start`, async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "last.lock"), "");
    const events = join(dir, "events");
    const sidecar = start(["sidecar", "--stop-file", join(dir, "last"), "--", "sleep", "1000"], { env: cleanEnv({ BATON_EVENTS: events }) });
    await eventSeen(events, "command");
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(readEvents(events).some((e) => e.event === "stopping"), false, "stopped on a .lock that is not baton's");
    writeFileSync(join(dir, "last"), "");
    const exit = await sidecar.exited;
    assert.equal(exit.code, 0, exit.stderr);
    assert.deepEqual(readEvents(events).filter((e) => e.event === "stopping").map((e) => e.file), [join(dir, "last")]);
  });

  test(`${build}: a folder at the liveness file's name does not make a living predecessor dead`, async (t) => {
    const dir = tempDir();
    const post = join(dir, "prev");
    for (const name of ["prev.lock", "prev.baton-live"]) mkdirSync(join(dir, name));
    const events = join(dir, "events");
    const step = start(["--wait-file", post, "--post-file", join(dir, "post"), "--", "touch", join(dir, "ran")], { env: cleanEnv({ BATON_EVENTS: events }) });
    t.after(() => step.kill());
    await eventSeen(events, "waiting");
    await new Promise((r) => setTimeout(r, 1500));
    writeFileSync(post, "");
    const exit = await step.exited;
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(existsSync(join(dir, "ran")), true);
  });

  test(`${build}: a FIFO at the predecessor's liveness file does not block the waiter: --wait-timeout still ends it`, async (t) => {
    const dir = tempDir();
    const post = join(dir, "prev");
    for (const name of ["prev.lock", "prev.baton-live"]) execFileSync("mkfifo", [join(dir, name)]);
    const step = start(["--wait-file", post, "--wait-timeout", "1s", "--post-file", join(dir, "post"), "--", "touch", join(dir, "ran")]);
    t.after(() => step.kill());
    const exit = await Promise.race([step.exited, new Promise<undefined>((r) => setTimeout(() => r(undefined), 20_000))]);
    assert.ok(exit, "baton hung in open(2) on the FIFO");
    assert.equal(exit.code, 124, exit.stderr);
    assert.equal(readJson(join(dir, "post.err")).reason, "WaitTimeout");
  });

  test(`${build}: a first step killed before its command starts (at the before-step breakpoint) is noticed by the next step`, async (t) => {
    const dir = tempDir();
    const post0 = join(dir, "run/0/out");
    const first = start(["--post-file", post0, "--debug-before-step", "--", "true"]);
    t.after(() => first.kill());
    await stderrSays(first.child, /debug before step breakpoint has taken effect/); // the command not started
    const events1 = join(dir, "step1.events");
    const next = start(["--wait-file", post0, "--wait-timeout", "30s", "--post-file", join(dir, "run/1/out"), "--", "touch", join(dir, "ran")], {
      env: cleanEnv({ BATON_EVENTS: events1 }),
    });
    await eventSeen(events1, "waiting");
    first.kill();
    const exit = await next.exited;
    assert.equal(exit.code, 1, exit.stderr);
    assert.equal(readJson(join(dir, "run/1/out.err")).reason, "PreviousStepDied");
    assert.equal(existsSync(join(dir, "ran")), false);
  });

  test(`${build}: a predecessor under umask 077, a waiter of another uid: its death is still noticed`, { skip: skipRoot }, async (t) => {
    const dir = sharedDir();
    const post0 = join(dir, "out0");
    const events0 = join(dir, "step0.events");
    const first = start([], {
      baton: ["sh", "-c", 'umask 077 && exec "$@"', "sh", ...words, "--post-file", post0, "--", "sleep", "1000"],
      env: cleanEnv({ BATON_EVENTS: events0 }),
    });
    t.after(() => first.kill());
    await eventSeen(events0, "command");
    const events1 = join(dir, "step1.events");
    const next = start(["--wait-file", post0, "--wait-timeout", "30s", "--post-file", join(dir, "out1"), "--", "touch", join(dir, "ran")], {
      prefix: AS_NOBODY,
      env: cleanEnv({ BATON_EVENTS: events1 }),
    });
    await eventSeen(events1, "waiting");
    first.kill();
    const exit = await next.exited;
    assert.equal(exit.code, 1, exit.stderr);
    assert.equal(readJson(join(dir, "out1.err")).reason, "PreviousStepDied");
  });

  test(`${build}: a search-only (0711) wait folder: a step of another uid finds the file there`, { skip: skipRoot }, async (t) => {
    const dir = sharedDir();
    mkdirSync(join(dir, "searchable"), { mode: 0o711 }); // root's: nobody may enter it, not list or watch it
    const events = join(dir, "events");
    const step = start(["--wait-file", join(dir, "searchable/prev"), "--post-file", join(dir, "post"), "--", "touch", join(dir, "ran")], {
      prefix: AS_NOBODY,
      env: cleanEnv({ BATON_EVENTS: events }),
    });
    t.after(() => step.kill());
    await eventSeen(events, "waiting");
    writeFileSync(join(dir, "searchable/prev"), "");
    const exit = await step.exited;
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(existsSync(join(dir, "ran")), true);
  });

  test(`${build}: a read-only post folder: the command does not run for an outcome that cannot be handed on`, { skip: skipRoot }, async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "ro"));
    const exit = await run(["--post-file", join(dir, "ro/post"), "--", "touch", join(dir, "ran")], {
      prefix: inMountNamespace(readOnlyFolder(`${dir}/ro`)),
    });
    assert.equal(exit.code, 1, exit.stderr);
    assert.match(exit.stderr, /^baton: cannot hand on through .*\/ro\/post: its folder takes no new file \(read-only file system \(EROFS\)\); not running the command$/m);
    assert.doesNotMatch(exit.stderr, /\n\s+at |internal error/);
    assert.equal(existsSync(join(dir, "ran")), false);
  });

  test(`${build}: a post folder out of inodes: the command does not run`, { skip: skipRoot }, async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "full"));
    // A tmpfs of 8 inodes, all taken (the root folder holds one).
    const fill = `mount -t tmpfs -o nr_inodes=8 tmpfs ${dir}/full && for i in 1 2 3 4 5 6 7 8 9; do touch ${dir}/full/f$i 2>/dev/null; done; true`;
    const exit = await run(["--post-file", join(dir, "full/post"), "--", "touch", join(dir, "ran")], {
      prefix: inMountNamespace(fill),
    });
    assert.equal(exit.code, 1, exit.stderr);
    assert.match(exit.stderr, /^baton: cannot hand on through .*\/full\/post: its folder takes no new file \(no space left on device \(ENOSPC\)\)/m);
    assert.equal(existsSync(join(dir, "ran")), false);
  });

  test(`${build}: a watched folder removed and made again with the same inode number is followed by an event (cancel file)`, async (t) => {
    const dir = tempDir();
    const folder = join(dir, "downward");
    mkdirSync(folder);
    const events = join(dir, "events");
    // No safety poll: only a re-armed watch can see the cancel file.
    const step = start(["--cancel-file", join(folder, "cancel"), "--post-file", join(dir, "post"), "--", "sleep", "1000"], {
      env: cleanEnv({ BATON_EVENTS: events, BATON_SAFETY_POLL: "1h" }),
    });
    t.after(() => step.kill());
    await eventSeen(events, "command");
    // baton is stopped while the folder goes and comes back, so it reads the removal only once the new folder is
    // there. /tmp's file system gives a folder made right after rmdir the same inode number (checked: skip if not).
    const pid = step.child.pid!;
    const before = statSync(folder).ino;
    process.kill(pid, "SIGSTOP");
    try {
      rmdirSync(folder);
      mkdirSync(folder);
    } finally {
      process.kill(pid, "SIGCONT");
    }
    const after = statSync(folder).ino;
    if (before !== after) return t.skip(`this file system gave a new inode number (${before} -> ${after})`);
    await new Promise((r) => setTimeout(r, 500)); // baton reads the removal's events before the cancel file comes
    writeFileSync(join(folder, "cancel"), "cancel\n");
    const exit = await Promise.race([step.exited, new Promise<undefined>((r) => setTimeout(() => r(undefined), 20_000))]);
    assert.ok(exit, "the cancel file in the folder made again was never seen");
    assert.equal(exit.code, 143, exit.stderr);
    assert.equal(readJson(join(dir, "post.err")).reason, "Cancelled");
  });

  test(`${build}: the liveness file: baton's own name beside the post file, 0644 under umask 077, no POST.lock`, async (t) => {
    const dir = tempDir();
    const post = join(dir, "out");
    const events = join(dir, "events");
    const step = start([], {
      baton: ["sh", "-c", 'umask 077 && exec "$@"', "sh", ...words, "--post-file", post, "--", "sleep", "1000"],
      env: cleanEnv({ BATON_EVENTS: events }),
    });
    t.after(() => step.kill());
    await fileAppears(`${post}.baton-live`);
    assert.equal(execFileSync("stat", ["-c", "%a %F", `${post}.baton-live`], { encoding: "utf8" }).trim(), "644 regular file");
    assert.equal(existsSync(`${post}.lock`), false);
  });

  test(`${build}: a second step given a running step's post file refuses: a baton: line, no command, neither POST nor POST.err, and the first still hands on`, async (t) => {
    const dir = tempDir();
    const post = join(dir, "out");
    const first = start(["--post-file", post, "--", "sh", "-c", shellWaitFor(join(dir, "go"))]);
    t.after(() => first.kill());
    await fileAppears(`${post}.baton-live`);
    const second = await endsWithin(start(["--post-file", post, "--", "touch", join(dir, "ran")]).exited, 30_000, "the second writer");
    assert.equal(second.code, 1, second.stderr);
    assert.match(second.stderr, /^baton: another step's baton is running with the post file .*\/out \(it holds .*\/out\.baton-live\): two steps were given one post file; not running the command/m);
    assert.doesNotMatch(second.stderr, /\n\s+at |internal error/);
    assert.equal(existsSync(join(dir, "ran")), false, "the second writer ran its command");
    assert.equal(existsSync(post), false, "the second writer wrote POST while the first runs");
    assert.equal(existsSync(`${post}.err`), false, "the second writer wrote POST.err while the first runs");
    // A step that begins to wait now waits for the first writer, and goes when it hands on.
    const events = join(dir, "waiter.events");
    const waiter = start(["--wait-file", post, "--post-file", join(dir, "next"), "--", "touch", join(dir, "waited")], { env: cleanEnv({ BATON_EVENTS: events }) });
    t.after(() => waiter.kill());
    await eventSeen(events, "waiting");
    assert.equal(existsSync(join(dir, "waited")), false);
    writeFileSync(join(dir, "go"), "");
    const [a, b] = await Promise.all([endsWithin(first.exited, 30_000, "the first writer"), endsWithin(waiter.exited, 30_000, "the waiter")]);
    assert.equal(a.code, 0, a.stderr);
    assert.equal(b.code, 0, b.stderr);
    assert.equal(existsSync(join(dir, "waited")), true);
  });

  test(`${build}: two steps given one post file and started at once: exactly one runs its command`, async (t) => {
    for (let round = 0; round < 3; round++) {
      const dir = tempDir();
      const post = join(dir, "out");
      const steps = [0, 1].map((n) => start(["--post-file", post, "--", "sh", "-c", `touch ${dir}/ran-${n}; ${shellWaitFor(join(dir, "go"))}`]));
      for (const step of steps) t.after(() => step.kill());
      // The loser ends on its own; the winner waits for go.
      const loser = await endsWithin(Promise.race(steps.map((step) => step.exited)), 30_000, `round ${round}: either writer`);
      assert.equal(loser.code, 1, loser.stderr);
      assert.match(loser.stderr, /two steps were given one post file/);
      writeFileSync(join(dir, "go"), "");
      const exits = await Promise.all(steps.map((step) => endsWithin(step.exited, 30_000, `round ${round}: the writers`)));
      assert.deepEqual(exits.map((exit) => exit.code).sort(), [0, 1], exits.map((exit) => exit.stderr).join(""));
      assert.equal(readdirSync(dir).filter((name) => name.startsWith("ran-")).length, 1, `round ${round}: both commands ran`);
      assert.equal(existsSync(post), true);
      assert.deepEqual(readdirSync(dir).filter((name) => name.endsWith(".tmp")), [], `round ${round}: a temporary file was left`);
    }
  });

  test(`${build}: an earlier run's POST (a restarted container) is gone once the step holds its lock: a step that begins to wait waits for this run`, async (t) => {
    const dir = tempDir();
    const post = join(dir, "out");
    for (const stale of [post, `${post}.err`]) {
      writeFileSync(stale, '{"exitCode":0,"reason":"Completed"}\n');
      const events = join(dir, "events");
      const step = start(["--post-file", post, "--", "sh", "-c", shellWaitFor(join(dir, "go"))], { env: cleanEnv({ BATON_EVENTS: events }) });
      t.after(() => step.kill());
      await eventSeen(events, "command");
      assert.equal(existsSync(stale), false, `${stale} of the earlier run is still there while this run's command runs`);
      const waiterEvents = join(dir, "waiter.events");
      const waiter = start(["--wait-file", post, "--post-file", join(dir, "next"), "--", "touch", join(dir, "waited")], {
        env: cleanEnv({ BATON_EVENTS: waiterEvents }),
      });
      t.after(() => waiter.kill());
      await eventSeen(waiterEvents, "waiting");
      assert.equal(existsSync(join(dir, "waited")), false);
      writeFileSync(join(dir, "go"), "");
      const [a, b] = await Promise.all([endsWithin(step.exited, 30_000, "the writer"), endsWithin(waiter.exited, 30_000, "the waiter")]);
      assert.equal(a.code, 0, a.stderr);
      assert.equal(b.code, 0, b.stderr);
      assert.equal(existsSync(join(dir, "waited")), true);
      for (const name of ["go", "waited", "next", "events", "waiter.events", "out"]) execFileSync("rm", ["-f", join(dir, name)]);
    }
  });

  test(`${build}: a reader of another uid on a read-only mount, racing for the writer's liveness file, never gets its lock first`, { skip: skipRoot || NO_STRACE || NO_PYTHON }, async (t) => {
    const dir = sharedDir();
    const post = join(dir, "out");
    // Every file that appears beside the post file is opened and locked (flock and fcntl, shared) at once, and kept.
    const said = await lockGrabber(dir, readOnlyNeighbour(dir), t);
    // The writer's flock held back 300 ms: time for the neighbour to see any file it names before its lock is held.
    const trace = ["strace", "-f", "-qq", "--seccomp-bpf", "-o", "/dev/null", "-e", "trace=flock", "-e", "inject=flock:delay_enter=300000"];
    const events = join(dir, "writer.events");
    const writer = start(["--post-file", post, "--", "sleep", "1000"], { prefix: trace, env: cleanEnv({ BATON_EVENTS: events }) });
    t.after(() => writer.kill());
    await eventSeen(events, "command");
    let stderr = "";
    writer.child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    assert.doesNotMatch(stderr + said.text, /cannot hold the liveness lock|locked/, "the neighbour took a lock of the writer's first");
    // And so the writer's death is seen.
    const waiterEvents = join(dir, "waiter.events");
    const waiter = start(["--wait-file", post, "--post-file", join(dir, "next"), "--", "touch", join(dir, "ran")], { env: cleanEnv({ BATON_EVENTS: waiterEvents }) });
    t.after(() => waiter.kill());
    await eventSeen(waiterEvents, "waiting");
    writer.kill();
    const exit = await endsWithin(waiter.exited, 20_000, "the waiter after the writer's death");
    assert.equal(exit.code, 1, exit.stderr);
    assert.equal(readJson(join(dir, "next.err")).reason, "PreviousStepDied");
    assert.doesNotMatch(said.text, /locked/, "the neighbour took a lock of the writer's first");
  });

  test(`${build}: at every descriptor limit a step either holds its lock or does not run its command (never unguarded)`, async () => {
    const dir = tempDir();
    const seen: string[] = [];
    for (let limit = 10; limit <= 40; limit++) {
      const post = join(dir, `out-${limit}`);
      const ran = join(dir, `ran-${limit}`);
      // The command says whether its baton held the lock while it ran.
      const command = `if [ -e '${post}.baton-live' ]; then echo locked > '${ran}'; else echo unguarded > '${ran}'; fi`;
      const exit = await endsWithin(start(["--post-file", post, "--", "sh", "-c", command], { prefix: ["prlimit", `--nofile=${limit}`] }).exited, 30_000, `the step at ${limit} descriptors`);
      assert.doesNotMatch(exit.stderr, /will not notice if this one is killed/, `${limit} descriptors: ran unguarded`);
      if (existsSync(ran)) {
        assert.equal(execFileSync("cat", [ran], { encoding: "utf8" }), "locked\n", `${limit} descriptors`);
        seen.push(`${limit}: ran`);
      } else if (/not running the command unguarded/.test(exit.stderr)) {
        assert.equal(exit.code, 1, exit.stderr);
        // Lower down the runtime itself left no descriptor, not even the spare one kept for POST.err.
        seen.push(`${limit}: refused${existsSync(`${post}.err`) ? ", POST.err" : ""}`);
      } else seen.push(`${limit}: ended (${exit.code}) ${exit.stderr.split("\n")[0]}`);
    }
    assert.ok(seen.some((line) => line.endsWith(": ran")), seen.join("\n"));
    // The limit just below the first that ran: only the lock's descriptor was missing, and the step said so in POST.err.
    const firstRan = seen.findIndex((line) => line.endsWith(": ran"));
    assert.match(seen[firstRan - 1] ?? "", /: refused, POST.err$/, seen.join("\n"));
  });

  test(`${build}: where the file system refuses O_TMPFILE, the liveness file is made under a temporary name of mode 0, locked at once, and still tells a death`, { skip: NO_STRACE || NO_CC }, async (t) => {
    const dir = tempDir();
    const post = join(dir, "out");
    const shim = noTmpfileShim(dir);
    const trace = join(dir, "trace");
    const events = join(dir, "events");
    const writer = start(["--post-file", post, "--", "sleep", "1000"], {
      prefix: ["strace", "-f", "-qq", "-e", "trace=openat", "-o", trace, "env", `LD_PRELOAD=${shim}`],
      env: cleanEnv({ BATON_EVENTS: events }),
    });
    t.after(() => writer.kill());
    await eventSeen(events, "command");
    const opens = execFileSync("cat", [trace], { encoding: "utf8" });
    // The shim answers for the kernel: no O_TMPFILE open reaches it, and the named way is taken.
    assert.doesNotMatch(opens, /O_TMPFILE/);
    assert.match(opens, /\.out\.baton-live\.[0-9a-f]{16}\.tmp", O_RDWR\|O_CREAT\|O_EXCL\|[^,]*O_NOFOLLOW[^,]*, 000\) = \d+/);
    assert.equal(execFileSync("stat", ["-c", "%a", `${post}.baton-live`], { encoding: "utf8" }).trim(), "644");
    const waiterEvents = join(dir, "waiter.events");
    const waiter = start(["--wait-file", post, "--post-file", join(dir, "next"), "--", "touch", join(dir, "ran")], { env: cleanEnv({ BATON_EVENTS: waiterEvents }) });
    t.after(() => waiter.kill());
    await eventSeen(waiterEvents, "waiting");
    writer.kill();
    const exit = await endsWithin(waiter.exited, 20_000, "the waiter after the writer's death");
    assert.equal(exit.code, 1, exit.stderr);
    assert.equal(readJson(join(dir, "next.err")).reason, "PreviousStepDied");
  });

  test(`${build}: without O_TMPFILE, a neighbour with CAP_DAC_OVERRIDE quicker than the writer: it tries new names, and refuses rather than run unguarded`, { skip: skipRoot || NO_STRACE || NO_CC || NO_PYTHON }, async (t) => {
    for (const [most, outcome] of [[3, "locked"], [undefined, "refused"]] as const) {
      const dir = sharedDir();
      const post = join(dir, "out");
      // Root, through a read-only mount: it may open even a file of mode 0, for reading.
      const said = await lockGrabber(dir, inMountNamespace(readOnlyFolder(dir)), t, most);
      // Every fcntl of the writer held back 100 ms: time for the neighbour to lock each file of mode 0 first.
      const trace = ["strace", "-f", "-qq", "--seccomp-bpf", "-o", "/dev/null", "-e", "trace=fcntl", "-e", "inject=fcntl:delay_enter=100000", "env", `LD_PRELOAD=${noTmpfileShim(dir)}`];
      const exit = await endsWithin(start(["--post-file", post, "--", "sh", "-c", `test -e ${post}.baton-live && touch ${dir}/ran`], { prefix: trace }).exited, 120_000, "the writer");
      if (outcome === "locked") {
        assert.equal(exit.code, 0, exit.stderr);
        assert.equal((said.text.match(/^locked .* lockf$/gm) ?? []).length, 3, said.text);
        assert.equal(existsSync(join(dir, "ran")), true, "the command did not run, or ran without its liveness file");
      } else {
        assert.equal(exit.code, 1, exit.stderr);
        assert.match(exit.stderr, /^baton: cannot hold the liveness lock .*\/out\.baton-live \(resource temporarily unavailable \(EAGAIN\)\); not running the command unguarded/m);
        assert.equal(existsSync(join(dir, "ran")), false);
        assert.equal(readJson(`${post}.err`).reason, "Error");
      }
      assert.deepEqual(readdirSync(dir).filter((name) => name.endsWith(".tmp")), [], "a temporary file was left");
    }
  });

  test(`${build}: beside older batons: an older waiter (a flock) still sees this writer die; an older writer's file (one line, a flock) is not believed, and its post file is waited for`, async (t) => {
    const dir = tempDir();
    const post = join(dir, "out");
    const writer = start(["--post-file", post, "--", "sleep", "1000"]);
    t.after(() => writer.kill());
    await fileAppears(`${post}.baton-live`);
    // What an older waiter does: a shared flock, which the writer's flock(LOCK_EX) holds back while it lives.
    const older = startBaton([], { baton: ["flock", "--shared", `${post}.baton-live`, "true"] });
    t.after(() => older.kill());
    // Blocked in the kernel on the writer's flock (a free lock would have let it end at once).
    await waitFor(() => (/lock/.test(sleepingIn(older.child.pid!)) ? true : undefined), "the older waiter to block on the writer's flock");
    assert.equal(older.child.exitCode, null, "an older waiter's flock was not held back by a living writer");
    writer.kill();
    assert.equal((await endsWithin(older.exited, 20_000, "the older waiter's flock")).code, 0);
    // An older writer: its liveness file holds the first line only, and its lock is a flock.
    const old = join(dir, "old");
    writeFileSync(`${old}.baton-live`, "baton liveness lock\n");
    const holder = startBaton([], { baton: ["flock", "--exclusive", `${old}.baton-live`, "sleep", "1000"] });
    t.after(() => holder.kill());
    const events = join(dir, "events");
    const waiter = start(["--wait-file", old, "--post-file", join(dir, "next"), "--", "touch", join(dir, "ran")], { env: cleanEnv({ BATON_EVENTS: events }) });
    t.after(() => waiter.kill());
    await eventSeen(events, "waiting");
    writeFileSync(old, "");
    const exit = await endsWithin(waiter.exited, 20_000, "the waiter on an older writer");
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(existsSync(join(dir, "ran")), true);
  });
}
