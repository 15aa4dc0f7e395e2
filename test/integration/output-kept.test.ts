// The command's output is never lost (issue 11, findings 9-10): its stdio is exactly what the container gave baton
// (baton never makes it non-blocking), and what it wrote before it exited reaches the console and the file, however
// slow their readers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { BATON, join, runBaton, tempDir } from "./helpers.js";

const MB = 1_000_000;

test("finding 9: with --stdout-path under 2>&1, a command writing 1 MB to stderr for a slow reader loses nothing", async () => {
  const dir = tempDir();
  const script = `${process.execPath} ${BATON} --stdout-path ${dir}/out -- sh -c 'head -c ${MB} /dev/zero >&2' 2>&1 | (sleep 0.5; wc -c)`;
  const exit = await runBaton([], { baton: ["sh", "-c", script] });
  assert.equal(exit.stdout.trim(), String(MB), exit.stderr);
});

test("finding 9: after a baton warning, the command's stderr is still blocking (1 MB to a slow reader, nothing lost)", async () => {
  // --timeout's warning is baton's first write to stderr; then the command writes 1 MB there as it stops.
  const command = `trap 'head -c ${MB} /dev/zero >&2; exit 0' TERM; sleep 5 & wait`;
  const script = `${process.execPath} ${BATON} --timeout 300ms --grace-period 20s -- sh -c "${command}" 2>&1 >/dev/null | (sleep 1; wc -c)`;
  const exit = await runBaton([], { baton: ["sh", "-c", script] });
  const warning = Buffer.byteLength(`baton: the command ran longer than 300 ms (--timeout): SIGTERM to its process group, SIGKILL after 20000 ms (--grace-period)\n`);
  assert.equal(Number(exit.stdout.trim()), MB + warning, exit.stderr);
});

test("finding 10: a capture file whose reader wakes 3 s after the command exited still gets everything, so does the console", async () => {
  const dir = tempDir();
  // 1.25 MB: baton's queue for the file fills (1 MiB, QUEUE_LIMIT) and it stops reading; the rest, less than a
  // pipe holds, waits in the command's pipe, so the command exits at once with it still there. The copy used to
  // give up 2 s after the exit and drop it, from the file and the console alike.
  const size = 1_250_000;
  const script = [
    `mkfifo ${dir}/out`,
    `(exec < ${dir}/out; sleep 3; wc -c > ${dir}/count) &`,
    `${process.execPath} ${BATON} --stdout-path ${dir}/out -- head -c ${size} /dev/zero | wc -c`,
    "wait",
  ].join("\n");
  const exit = await runBaton([], { baton: ["sh", "-c", script] });
  assert.equal(exit.stdout.trim(), String(size), exit.stderr);
  assert.equal(readFileSync(join(dir, "count"), "utf8").trim(), String(size));
});

test("found: a console reader that never reads again: after 30 s baton says how much it dropped, hands on and exits", async () => {
  const dir = tempDir();
  // baton's stdout is a FIFO whose reader holds it open and never reads: writes to it block for good.
  const script = [
    `mkfifo ${dir}/console`,
    `(exec 3< ${dir}/console; sleep 60) & reader=$!`,
    `${process.execPath} ${BATON} --post-file ${dir}/post --stdout-path ${dir}/out -- head -c 300000 /dev/zero > ${dir}/console`,
    "echo $? > " + `${dir}/rc`,
    "kill $reader",
  ].join("\n");
  const started = Date.now();
  const exit = await runBaton([], { baton: ["sh", "-c", script] });
  const took = Date.now() - started;
  assert.equal(readFileSync(join(dir, "rc"), "utf8").trim(), "0", exit.stderr);
  assert.ok(took < 45_000, `baton exited ${took} ms after it started (the reader holds on for 60 s)`);
  assert.match(exit.stderr, /^baton: dropped \d+ bytes of the command's output to baton's stdout: it took nothing for 30000 ms\n$/);
  assert.equal(readFileSync(join(dir, "out")).length, 300_000, "the file has everything");
  assert.equal(readFileSync(join(dir, "post"), "utf8").includes('"Completed"'), true);
});

test("found: a stderr whose reader never reads does not hold baton at its own line: --timeout still stops the command and the post file is written", async () => {
  const dir = tempDir();
  // The command fills stderr's pipe (a FIFO whose reader holds it open, reading nothing); then --timeout ends it. baton's
  // own lines wait for room 2 s at most (src/base/warn.ts): a blocking write held it until the reader left (an audit's find).
  const script = [
    `mkfifo ${dir}/errors`,
    `(exec 3< ${dir}/errors; sleep 60) & reader=$!`,
    `${process.execPath} ${BATON} --post-file ${dir}/post --timeout 1s --grace-period 1s -- sh -c 'head -c 70000 /dev/zero >&2; exec sleep 1000' 2> ${dir}/errors`,
    "echo $? > " + `${dir}/rc`,
    `ls ${dir} > ${dir}/seen`,
    "kill $reader",
  ].join("\n");
  const started = Date.now();
  await runBaton([], { baton: ["sh", "-c", script] });
  const took = Date.now() - started;
  assert.equal(readFileSync(join(dir, "rc"), "utf8").trim(), "124");
  assert.ok(took < 20_000, `baton exited ${took} ms after it started (the reader holds on for 60 s)`);
  assert.match(readFileSync(join(dir, "seen"), "utf8"), /^post\.err$/m, "the post file, written while the reader still holds the pipe");
});

test("found: a silent process left behind that holds the pipe is not reported as writing on; everything is copied", async () => {
  const dir = tempDir();
  // As finding 10, with a background `sleep` holding the command's stdout pipe open and writing nothing: the pipe never
  // ends. Once the file's reader wakes (3 s after the exit) the rest is read, then quiet ends the copy. baton used to
  // say "a process it left behind still writes to it": the pipe read empty and 2 s past the exit was taken for that.
  const size = 1_250_000;
  const script = [
    `mkfifo ${dir}/out`,
    `(exec < ${dir}/out; sleep 3; wc -c > ${dir}/count) &`,
    `${process.execPath} ${BATON} --stdout-path ${dir}/out -- sh -c 'sleep 20 2>/dev/null & head -c ${size} /dev/zero' | wc -c`,
    "wait",
  ].join("\n");
  const started = Date.now();
  const exit = await runBaton([], { baton: ["sh", "-c", script] });
  assert.equal(exit.stderr, "", "no line from baton");
  assert.equal(exit.stdout.trim(), String(size));
  assert.equal(readFileSync(join(dir, "count"), "utf8").trim(), String(size));
  assert.ok(Date.now() - started < 15_000, "baton did not wait for the sleep");
});
