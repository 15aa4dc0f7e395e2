// Nothing lost, nothing hangs: every outcome baton survives hands on POST or POST.err (a sidecar: READY or READY.err),
// whatever failed on the way. Each test is a fault found by trying (issue 11), on the real bundle.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, closeSync, copyFileSync, constants as fsConstants, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { Socket } from "node:net";
import { busyboxRoot } from "./busybox-root.js";
import { BATON, NO_STANDALONE, STANDALONE_DIR, cleanEnv, eventSeen, existsSync, join, readJson, readOr, runBaton, startBaton, tempDir, IS_ROOT } from "./helpers.js";
import { fullDisk, inMountNamespace } from "../../scripts/bench/namespaces.mjs";

const skipRoot = !IS_ROOT && "needs root (mount namespace, tmpfs, PID namespace)";

/** A prefix that runs baton ("$@") with a full 64 KiB tmpfs at DIR/full, in a mount namespace of its own; `then`
 * runs after it, still inside (the tmpfs is gone once the namespace ends), and baton's exit code is kept. */
function withFullDisk(dir: string, then = ""): string[] {
  mkdirSync(join(dir, "full"), { recursive: true });
  return inMountNamespace(fullDisk(`${dir}/full`), then);
}

test("finding 1: DIR/exitCode on a full disk: POST.err is still written, one line, exit 1", { skip: skipRoot }, async () => {
  const dir = tempDir();
  const post = join(dir, "post");
  const exit = await runBaton(["--post-file", post, "--step-metadata-dir", join(dir, "full/meta"), "--", "true"], { prefix: withFullDisk(dir) });
  assert.equal(exit.code, 1);
  assert.match(exit.stderr, /^baton: cannot write .*\/full\/meta\/exitCode: no space left on device \(ENOSPC\)$/m);
  assert.doesNotMatch(exit.stderr, /\n\s+at |internal error/);
  assert.equal(existsSync(post), false);
  assert.equal(readJson(`${post}.err`).reason, "Error");
});

test("a post file on a full disk: an empty POST.err still hands the failure on (it needs no data block)", { skip: skipRoot }, async () => {
  const dir = tempDir();
  const post = join(dir, "full/post");
  const exit = await runBaton(["--post-file", post, "--", "true"], {
    prefix: withFullDisk(dir, `ls -a ${dir}/full > ${dir}/listing; wc -c < ${post}.err > ${dir}/size;`),
  });
  assert.equal(exit.code, 1);
  assert.match(exit.stderr, /^baton: cannot write post file .*ENOSPC/m);
  assert.match(exit.stderr, /^baton: wrote an empty .*\/full\/post\.err instead/m);
  assert.equal(readOr(join(dir, "size"), "").trim(), "0");
  assert.deepEqual(readOr(join(dir, "listing"), "").split("\n").filter((n) => n.startsWith("post") && !n.startsWith("post.baton-")), ["post.err"]);
});

test("finding 5: a post file name of 251 bytes (POST.err is 255) is handed on; 252 is refused before the command runs", async () => {
  const dir = tempDir();
  const long = join(dir, "p".repeat(251));
  assert.equal((await runBaton(["--post-file", long, "--", "true"])).code, 0);
  assert.equal(existsSync(long), true);
  assert.equal((await runBaton(["--post-file", long, "--", "false"])).code, 1);
  assert.equal(existsSync(`${long}.err`), true);
  // Multi-byte names are cut on a character boundary for the temporary name.
  const wide = join(dir, "é".repeat(125)); // 250 bytes
  assert.equal((await runBaton(["--post-file", wide, "--", "true"])).code, 0);
  assert.equal(existsSync(wide), true);
  const tooLong = join(dir, "q".repeat(252));
  const exit = await runBaton(["--post-file", tooLong, "--", "sh", "-c", `touch ${dir}/ran`]);
  assert.equal(exit.code, 2);
  assert.match(exit.stderr, /^baton: post file name q+ is too long: q+\.err must fit 255 bytes\n$/);
  assert.equal(existsSync(join(dir, "ran")), false);
  assert.deepEqual(readdirSync(dir).filter((n) => n.startsWith(".")), [], "no temporary file left");
});

test("finding 2: baton's stderr closed (a dead log reader): the warning is dropped, the outcome is handed on", async () => {
  const dir = tempDir();
  const post = join(dir, "post");
  // `| true`: the reader of baton's stderr is gone before baton's first warning (--timeout).
  const script = `(${process.execPath} ${BATON} --post-file ${post} --timeout 200ms -- sleep 5; echo $? > ${dir}/rc) 2>&1 | true`;
  const exit = await runBaton([], { baton: ["sh", "-c", script] });
  assert.equal(exit.code, 0);
  assert.equal(readOr(join(dir, "rc"), "").trim(), "124");
  assert.equal(readJson(`${post}.err`).reason, "TimeoutExceeded");
});

test("finding 6: a stop file that appears before the ready probe succeeds leaves READY.err, exit 0", async () => {
  const dir = tempDir();
  const ready = join(dir, "ready");
  const events = join(dir, "events");
  const baton = startBaton(["sidecar", "--stop-file", join(dir, "last"), "--ready-probe", `file:${dir}/never`, "--ready-file", ready, "--", "sleep", "1000"], { env: cleanEnv({ BATON_EVENTS: events }) });
  await eventSeen(events, "waiting");
  writeFileSync(join(dir, "last.err"), "");
  const exit = await baton.exited;
  assert.equal(exit.code, 0, exit.stderr);
  assert.match(exit.stderr, /appeared before the sidecar was ready/);
  assert.equal(existsSync(ready), false);
  assert.equal(readJson(`${ready}.err`).reason, "NotReady");
});

test("finding 6: a stop file already there at start (a failed last step) leaves READY.err", async () => {
  const dir = tempDir();
  const ready = join(dir, "ready");
  writeFileSync(join(dir, "last.err"), "");
  const exit = await runBaton(["sidecar", "--stop-file", join(dir, "last"), "--ready-probe", `file:${dir}/never`, "--ready-file", ready, "--", "sleep", "1000"]);
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(existsSync(`${ready}.err`), true);
});

test("finding 4: a capture file that is a FIFO with no reader: one line, POST.err, the command not run; never blocked", async () => {
  const dir = tempDir();
  const fifo = join(dir, "fifo");
  execFileSync("mkfifo", [fifo]);
  const baton = startBaton(["--post-file", join(dir, "post"), "--stdout-path", fifo, "--", "touch", join(dir, "ran")]);
  const exit = await Promise.race([baton.exited, new Promise<undefined>((r) => setTimeout(() => r(undefined), 10_000))]);
  if (!exit) baton.kill();
  assert.ok(exit, "baton blocked on the FIFO");
  assert.equal(exit.code, 1, exit.stderr);
  assert.match(exit.stderr, /^baton: cannot open .*fifo for the command's output: a FIFO with no reader \(ENXIO\)\n$/);
  assert.equal(existsSync(join(dir, "ran")), false);
  assert.equal(readJson(join(dir, "post.err")).reason, "Error");
});

test("finding 4: a capture FIFO with a reader gets everything, through blocking writes", async () => {
  const dir = tempDir();
  const fifo = join(dir, "fifo");
  execFileSync("mkfifo", [fifo]);
  // The reader is this test, open before baton starts (O_NONBLOCK: an open for reading does not wait for a writer).
  const reader = new Socket({ fd: openSync(fifo, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK), readable: true, writable: false });
  // A writer of the test's own keeps the reader from seeing an end before baton opens the FIFO; closed at the end.
  const keepOpen = openSync(fifo, fsConstants.O_WRONLY | fsConstants.O_NONBLOCK);
  let count = 0;
  reader.on("data", (chunk: Buffer) => (count += chunk.length));
  const exit = await runBaton(["--stdout-path", fifo, "--", "head", "-c", "3000000", "/dev/zero"]);
  closeSync(keepOpen);
  assert.equal(exit.code, 0, exit.stderr);
  await new Promise((r) => reader.once("end", r));
  assert.equal(count, 3_000_000);
});

test("finding 16: the standalone folder starts from a path holding ':' (ld.so --library-path is a list), in a root without glibc", { skip: skipRoot || NO_STANDALONE }, async (t) => {
  const root = busyboxRoot(STANDALONE_DIR);
  t.after(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, "opt/a:b"), { recursive: true });
  renameSync(join(root, "baton"), join(root, "opt/a:b/baton"));
  const exit = await runBaton(["--post-file", "/tmp/post", "--", "/bin/busybox", "true"], { pid1: true, root, baton: ["/opt/a:b/baton/baton"] });
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(readJson(join(root, "tmp/post")).reason, "Completed");
});

test("finding 7: --ready-probe exec: in an image without sh: one line, READY.err, the sidecar stopped, exit 1", async () => {
  const dir = tempDir();
  const ready = join(dir, "ready");
  const exit = await runBaton(["sidecar", "--stop-file", join(dir, "last"), "--ready-probe", "exec:true", "--ready-file", ready, "--grace-period", "1s", "--", "/bin/sleep", "1000"], {
    env: { PATH: join(dir, "no-sh-here") },
  });
  assert.equal(exit.code, 1, exit.stderr);
  assert.match(exit.stderr, /^baton: --ready-probe exec:true: command not found: sh \(ENOENT\); the sidecar will never be ready\n$/);
  assert.equal(existsSync(ready), false);
  assert.equal(existsSync(`${ready}.err`), true);
});

test("finding 8: a wait folder baton may not read (EACCES): one line and POST.err, not a poll forever", { skip: skipRoot }, async () => {
  const dir = tempDir();
  chmodSync(dir, 0o777);
  mkdirSync(join(dir, "locked"), { mode: 0o700 }); // root's; baton runs as nobody
  const post = join(dir, "post");
  const exit = await runBaton(["--wait-file", join(dir, "locked/prev"), "--post-file", post, "--", "touch", join(dir, "ran")], {
    prefix: ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"],
  });
  assert.equal(exit.code, 1, exit.stderr);
  assert.match(exit.stderr, /^baton: cannot watch .*\/locked for .*\/locked\/prev: permission denied \(EACCES\)\n$/);
  assert.equal(existsSync(join(dir, "ran")), false);
  assert.equal(readJson(`${post}.err`).reason, "Error");
});

test("found: a sidecar's ready file on a full disk: an empty READY.err still ends the first step's wait", { skip: skipRoot }, async () => {
  const dir = tempDir();
  const ready = join(dir, "full/ready");
  const exit = await runBaton(["sidecar", "--stop-file", join(dir, "last"), "--ready-probe", `file:${dir}`, "--ready-file", ready, "--", "sleep", "1000"], {
    prefix: withFullDisk(dir, `ls ${dir}/full > ${dir}/listing; wc -c < ${ready}.err > ${dir}/size;`),
  });
  assert.equal(exit.code, 1);
  assert.match(exit.stderr, /^baton: cannot write ready file .*ENOSPC/m);
  assert.equal(readOr(join(dir, "size"), "").trim(), "0");
  assert.equal(readOr(join(dir, "listing"), "").split("\n").includes("ready"), false);
});

test("found: -breakpoint_on_failure when the Tekton chunk cannot load: POST.err instead of no post file at all", async () => {
  const dir = tempDir();
  // A bundle whose Tekton chunk is damaged (a changed character in its payload): the breakpoint's code cannot load.
  const partial = join(dir, "baton");
  mkdirSync(partial);
  const lines = readFileSync(BATON, "latin1").split("\n");
  const data = lines.findIndex((line) => line.startsWith("//@baton-chunk baton-tekton.cjs ")) + 1;
  assert.notEqual(data, 0);
  lines[data] = lines[data]!.slice(0, 100) + (lines[data]![100] === "A" ? "B" : "A") + lines[data]!.slice(101);
  writeFileSync(join(partial, "baton.cjs"), lines.join("\n"), "latin1");
  copyFileSync(join(BATON, "..", "baton-reaper.node"), join(partial, "baton-reaper.node"));
  const post = join(dir, "out");
  const exit = await runBaton(["-post_file", post, "-breakpoint_on_failure", "-entrypoint", "sh", "--", "-c", "exit 3"], {
    baton: [process.execPath, join(partial, "baton.cjs")],
  });
  assert.equal(exit.code, 3, exit.stderr);
  assert.match(exit.stderr, /^baton: cannot load baton-tekton\.cjs from .*: baton is not installed whole$/m);
  assert.equal(readJson(`${post}.err`).exitCode, 3);
});

test("once its post file is written, a step lowers every thread of its own to nice 19: the next step's start comes first", async () => {
  // Seen on the exited step before it is reaped: python's waitid(WNOWAIT) waits for the exit without reaping, and the
  // zombie's /proc/PID/stat still holds its last nice value (field 19). A sidecar, which runs on after READY, does not.
  const dir = tempDir();
  const reader = [
    "import os, subprocess, sys",
    "child = subprocess.Popen(sys.argv[1:])",
    "os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)",
    "print(open(f'/proc/{child.pid}/stat').read().rsplit(')', 1)[1].split()[16])",
    "sys.exit(child.wait())",
  ].join("\n");
  const exit = await runBaton(["--post-file", join(dir, "post"), "--", "true"], { prefix: ["python3", "-c", reader] });
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(exit.stdout.trim(), "19");
  assert.equal(existsSync(join(dir, "post")), true);
});
