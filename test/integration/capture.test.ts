// --stdout-path / --stderr-path: the command's output still reaches baton's own stdout/stderr and is appended to files,
// with back-pressure, and without waiting on a grandchild that holds the pipe.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { createReadStream, mkdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { BATON, SKIP_WHEN_QUICK, cleanEnv, eventSeen, existsSync, join, peakRssKiB, readJson, runBaton, startBaton, tempDir, waitFor, IS_ROOT } from "./helpers.js";
import { inMountNamespace } from "../../scripts/bench/namespaces.mjs";

function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, "SIGKILL");
  } catch {
    // already gone
  }
}

test("copies stdout and stderr to their files, appending, and still to baton's own stdout and stderr", async () => {
  const dir = tempDir();
  writeFileSync(join(dir, "out.log"), "earlier\n");
  const exit = await runBaton([
    "--stdout-path", join(dir, "out.log"),
    "--stderr-path", join(dir, "logs/err.log"), // its folder is created
    "--", "sh", "-c", "echo to-stdout; echo to-stderr >&2; exit 5",
  ]);
  assert.equal(exit.code, 5);
  assert.equal(exit.stdout, "to-stdout\n");
  assert.equal(exit.stderr, "to-stderr\n");
  assert.equal(readFileSync(join(dir, "out.log"), "utf8"), "earlier\nto-stdout\n");
  assert.equal(readFileSync(join(dir, "logs/err.log"), "utf8"), "to-stderr\n");
});

test("one path for both flags: one file with both streams", async () => {
  const dir = tempDir();
  const log = join(dir, "all.log");
  const exit = await runBaton(["--stdout-path", log, "--stderr-path", log, "--", "sh", "-c", "echo one; sleep 0.1; echo two >&2; sleep 0.1; echo three"]);
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(readFileSync(log, "utf8"), "one\ntwo\nthree\n");
});

test("only the stream asked for is piped: the other stays baton's own (inherited)", async () => {
  const dir = tempDir();
  const events = join(dir, "events.jsonl");
  const baton = startBaton(["--stderr-path", join(dir, "err.log"), "--", "sh", "-c", `touch ${dir}/up; while [ ! -e ${dir}/go ]; do sleep 0.02; done`], {
    env: cleanEnv({ BATON_EVENTS: events }),
  });
  const child = (await eventSeen(events, "command")).child as number;
  await waitFor(() => (existsSync(join(dir, "up")) ? true : undefined), "the command");
  const batonPid = baton.child.pid!;
  assert.equal(readlinkSync(`/proc/${child}/fd/1`), readlinkSync(`/proc/${batonPid}/fd/1`), "stdout inherited");
  assert.notEqual(readlinkSync(`/proc/${child}/fd/2`), readlinkSync(`/proc/${batonPid}/fd/2`), "stderr piped");
  writeFileSync(join(dir, "go"), "");
  assert.equal((await baton.exited).code, 0);
});

test("without a capture flag the command's stdio is baton's own", async () => {
  const dir = tempDir();
  const events = join(dir, "events.jsonl");
  const baton = startBaton(["--", "sh", "-c", `touch ${dir}/up; while [ ! -e ${dir}/go ]; do sleep 0.02; done`], { env: cleanEnv({ BATON_EVENTS: events }) });
  const child = (await eventSeen(events, "command")).child as number;
  await waitFor(() => (existsSync(join(dir, "up")) ? true : undefined), "the command");
  for (const fd of [1, 2]) assert.equal(readlinkSync(`/proc/${child}/fd/${fd}`), readlinkSync(`/proc/${baton.child.pid}/fd/${fd}`));
  writeFileSync(join(dir, "go"), "");
  assert.equal((await baton.exited).code, 0);
});

test("200 MB of output to a slow file do not grow baton's memory: back-pressure, not buffering (peak RSS)", { skip: SKIP_WHEN_QUICK }, async (t) => {
  const dir = tempDir();
  const size = 200 * 1024 * 1024;
  // The "file" is a FIFO that this test drains slowly, so the copy to it is the bottleneck: a baton that ignored
  // back-pressure would queue most of the 200 MB in memory. baton's own stdout goes to /dev/null (exec keeps baton's
  // pid as the one spawned here).
  const fifo = join(dir, "out.fifo");
  execFileSync("mkfifo", [fifo]);
  let received = 0;
  const reader = createReadStream(fifo, { highWaterMark: 64 * 1024 });
  reader.on("data", (chunk) => {
    received += chunk.length;
    reader.pause();
    setTimeout(() => reader.resume(), 1);
  });
  const baton = startBaton(
    ["--stdout-path", fifo, "--", "sh", "-c", `head -c ${size} /dev/zero; while [ ! -e ${dir}/go ]; do sleep 0.02; done`],
    { prefix: ["sh", "-c", 'exec "$@" > /dev/null', "sh"] },
  );
  await waitFor(() => (received === size ? true : undefined), "all 200 MB to arrive through the FIFO", 300_000);
  const peakKiB = peakRssKiB(baton.child.pid!);
  writeFileSync(join(dir, "go"), "");
  const exit = await baton.exited;
  reader.destroy();
  assert.equal(exit.code, 0, exit.stderr);
  t.diagnostic(`peak RSS ${Math.round(peakKiB / 1024)} MiB`);
  // A bare baton peaks near 40 MiB; buffering would add most of the 200 MiB.
  assert.ok(peakKiB < 120 * 1024, `baton's peak RSS was ${Math.round(peakKiB / 1024)} MiB`);
});

test("a background grandchild holding the pipe open does not keep baton waiting once the command exits", async () => {
  const dir = tempDir();
  const events = join(dir, "events.jsonl");
  const started = Date.now();
  const baton = startBaton(
    // Both streams captured, so the sleep holds only baton's pipes, not this test's.
    ["--stdout-path", join(dir, "out.log"), "--stderr-path", join(dir, "out.log"), "--post-file", join(dir, "post"), "--", "sh", "-c", "echo before; sleep 30 & echo after"],
    { env: cleanEnv({ BATON_EVENTS: events }) },
  );
  const pgid = (await eventSeen(events, "command")).child as number;
  const exit = await baton.exited;
  try {
    assert.equal(exit.code, 0, exit.stderr);
    assert.ok(Date.now() - started < 10_000, "baton did not wait for the background sleep");
    assert.equal(readFileSync(join(dir, "out.log"), "utf8"), "before\nafter\n", "everything the command wrote before it exited");
    assert.equal(readJson(join(dir, "post")).exitCode, 0);
  } finally {
    killGroup(pgid); // the background sleep, left behind on purpose by the command
  }
});

test("a background grandchild that never stops writing does not keep baton either", async () => {
  const dir = tempDir();
  const events = join(dir, "events.jsonl");
  const log = join(dir, "out.log");
  const baton = startBaton(
    ["--stdout-path", log, "--stderr-path", log, "--", "sh", "-c", "echo start; while :; do echo chatter; sleep 0.01; done & sleep 0.2"],
    { env: cleanEnv({ BATON_EVENTS: events }) },
  );
  const pgid = (await eventSeen(events, "command")).child as number;
  const started = Date.now();
  const exit = await baton.exited;
  try {
    assert.equal(exit.code, 0, exit.stderr);
    assert.ok(Date.now() - started < 10_000, "baton stopped reading a while after the command exited");
    assert.match(readFileSync(log, "utf8"), /^start\n(chatter\n)+/);
  } finally {
    killGroup(pgid); // the chatter loop, unless its next write after baton left already killed it (SIGPIPE)
  }
});

test("output still queued for a slow reader of baton's own stdout is not lost when baton exits", async () => {
  const dir = tempDir();
  const size = 1024 * 1024;
  const tail = 70_000; // more than a pipe holds (64 KiB): the rest waits in baton when the command exits
  // The reader takes all but the tail, then stops reading for a second, well past the command's exit.
  const reader = `"$@" | (head -c ${size - tail} > /dev/null; sleep 1; wc -c)`;
  const exit = await runBaton(["--stdout-path", join(dir, "out.log"), "--", "sh", "-c", `head -c ${size} /dev/zero | tr '\\0' x`], {
    prefix: ["sh", "-c", reader, "sh"],
  });
  assert.equal(exit.stdout.trim(), String(tail));
  assert.equal(readFileSync(join(dir, "out.log"), "utf8").length, size);
});

test("an output file on a full disk: the copy to it stops with one line, the command and the console copy go on", { skip: !IS_ROOT && "needs root to mount a tmpfs" }, async () => {
  const dir = tempDir();
  mkdirSync(join(dir, "full"));
  const size = 1024 * 1024;
  // A 64 KiB tmpfs in a mount namespace of its own.
  const exit = await runBaton(["--stdout-path", join(dir, "full/out.log"), "--", "sh", "-c", `head -c ${size} /dev/zero | tr '\\0' x`], {
    prefix: inMountNamespace(`mount -t tmpfs -o size=64k tmpfs ${dir}/full`),
  });
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(exit.stdout.length, size, "all of it still reached baton's stdout");
  assert.match(exit.stderr, /^baton: stopped copying the command's output to .*\/full\/out\.log: no space left on device \(ENOSPC\)\n$/);
});

test("a write that fails as the command exits still gets its one line before baton exits (/dev/full)", async () => {
  const exit = await runBaton(["--stdout-path", "/dev/full", "--", "echo", "hello"]);
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(exit.stdout, "hello\n");
  assert.equal(exit.stderr, "baton: stopped copying the command's output to /dev/full: no space left on device (ENOSPC)\n");
});

test("an output file that fails while the copy waits on it: the copy goes on to baton's stdout, one line", async () => {
  const dir = tempDir();
  const size = 4 * 1024 * 1024;
  // The "file" is a FIFO that this test opens and never reads: baton's writes to it block, its queue for the file
  // fills (1 MiB) and baton stops reading the command. Closing the FIFO then fails those writes (EPIPE): baton must
  // drop the file and read on, not wait for a 'drain' that never comes.
  const fifo = join(dir, "out.fifo");
  execFileSync("mkfifo", [fifo]);
  const reader = open(fifo, "r"); // completes when baton opens the FIFO for writing
  // The failed write also raises SIGPIPE in baton itself: baton must not forward that to the command (exit 141).
  const baton = startBaton(["--stdout-path", fifo, "--", "sh", "-c", `head -c ${size} /dev/zero | tr '\\0' x`]);
  let received = 0;
  baton.child.stdout!.on("data", (chunk: string) => (received += chunk.length));
  const handle = await reader;
  await waitFor(() => (received >= 512 * 1024 ? true : undefined), "baton to copy half a MiB to its stdout");
  await handle.close();
  const exit = await baton.exited;
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(exit.stdout.length, size, "all of it still reached baton's stdout");
  assert.match(exit.stderr, /^baton: stopped copying the command's output to .*\/out\.fifo: .*\(EPIPE\)\n$/);
});

test("an output file that cannot be opened fails the step before the command runs", async () => {
  const dir = tempDir();
  writeFileSync(join(dir, "file"), "");
  const exit = await runBaton(["--stdout-path", join(dir, "file/out.log"), "--post-file", join(dir, "post"), "--", "touch", join(dir, "ran")]);
  assert.equal(exit.code, 2);
  assert.match(exit.stderr, /^baton: cannot create folder .*\/file for --stdout-path/);
  assert.equal(existsSync(join(dir, "ran")), false);
  assert.equal(existsSync(join(dir, "post.err")), true);
});

test("a console whose description turns non-blocking under baton still gets all of the captured output", async () => {
  // Node's net.Socket reads process.stderr when the command's pipes are destroyed, which sets O_NONBLOCK on baton's
  // fd 2 when it is a socket (a container runtime's, or Node's 'pipe' stdio); the copy's writes to the console then got
  // EAGAIN, fs.WriteStream gave up after five in a row, and the rest never reached the console (seen in sea.test.ts
  // under load). Made certain here: baton's stdout and stderr are one socket, and the command, which inherits that
  // stderr, sets O_NONBLOCK on it; then its captured stdout goes to a console that reads slowly.
  const dir = tempDir();
  const size = 4 * 1024 * 1024;
  const command = `python3 -c 'import fcntl, os; fcntl.fcntl(2, fcntl.F_SETFL, fcntl.fcntl(2, fcntl.F_GETFL) | os.O_NONBLOCK)' && head -c ${size} /dev/zero`;
  const baton = spawn("sh", ["-c", 'exec "$@" 2>&1', "sh", process.execPath, BATON, "--stdout-path", join(dir, "out.log"), "--", "sh", "-c", command], {
    env: cleanEnv(),
    stdio: ["ignore", "pipe", "ignore"],
  });
  let received = 0;
  baton.stdout!.on("data", (chunk: Buffer) => {
    received += chunk.length;
    baton.stdout!.pause(); // a slow reader: the socket stays full for a while after each read
    setTimeout(() => baton.stdout!.resume(), 5);
  });
  const code = await new Promise((resolve) => baton.on("close", resolve));
  assert.equal(code, 0);
  assert.equal(received, size, "console stdout");
  assert.equal(readFileSync(join(dir, "out.log")).length, size, "out.log");
});

test("with only stdout captured, a grandchild still writing to the inherited stderr after baton exits loses nothing (no O_NONBLOCK)", async () => {
  const dir = tempDir();
  // baton's stderr is a pipe whose reader sleeps for 1 s first, as a slow log shipper's would. The command exits at
  // once; its grandchild then writes 1 MiB to the stderr it shares with baton, which fills the pipe and must block.
  const grandchild = `(sleep 0.3; head -c 1048576 /dev/zero >&2; echo $? > ${dir}/gc-status) & exit 0`;
  const script = `"$0" "$1" --stdout-path "$2" -- sh -c "$3" 2>&1 >/dev/null | { sleep 1; wc -c > "$4"; }`;
  execFileSync("sh", ["-c", script, process.execPath, BATON, join(dir, "out.log"), grandchild, join(dir, "count")], { env: cleanEnv() });
  await waitFor(() => (existsSync(join(dir, "gc-status")) ? true : undefined), "the grandchild to finish");
  assert.equal(readFileSync(join(dir, "gc-status"), "utf8"), "0\n", "the grandchild's write failed (EAGAIN)");
  assert.equal(readFileSync(join(dir, "count"), "utf8").trim(), "1048576");
});
