// A copy of dist/baton.cjs cut short (a full disk, an interrupted cp) ended in Node's SyntaxError and its stack: Node
// compiles the whole file before any of it runs. The bundle is now its guard followed by the program in line comments
// (scripts/build.mjs, scripts/bundle-guard.cjs): a copy cut anywhere past the guard says so in one line, exit 127, as
// the standalone build does of its own file (sea-cut-short.test.ts), and writes POST.err where a post file is named.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { BATON, existsSync, join, readJson, runBaton, startBaton, tempDir } from "./helpers.js";
import { PAYLOAD_START } from "../../scripts/bundle-layout.mjs";

const whole = readFileSync(BATON);
const text = whole.toString("latin1");
/** Where the guard ends: its line is the second. */
const guardEnd = text.indexOf("\n", text.indexOf("\n") + 1);
const payloadAt = text.lastIndexOf(`\n${PAYLOAD_START}`) + 1;
const endMarkAt = text.lastIndexOf("\n//baton-end ") + 1;

/** A copy of the bundle cut to its first `length` bytes, alone in a folder of its own. */
function cutCopy(length: number): string {
  const copy = join(tempDir(), "baton.cjs");
  writeFileSync(copy, whole.subarray(0, length), { mode: 0o755 });
  return copy;
}

const cuts: [string, number][] = [
  ["right after its guard", guardEnd],
  ["inside the program's first line", guardEnd + 3],
  ["at 4 KiB", 4096],
  ["at 64 KiB, inside the program", 65536],
  ["where the payload starts", payloadAt],
  ["inside the payload, a chunk's base64", Math.floor((payloadAt + endMarkAt) / 2)],
  ["just before the end mark", endMarkAt],
  ["one byte short", whole.length - 1],
];

for (const [where, length] of cuts) {
  test(`the bundle cut ${where} (${length} bytes) says so in one line, exit 127, and writes POST.err`, async () => {
    assert.ok(length >= guardEnd && length < whole.length);
    const copy = cutCopy(length);
    const dir = tempDir();
    const exit = await runBaton(["--post-file", join(dir, "post"), "--", "touch", join(dir, "ran")], { baton: [process.execPath, copy] });
    assert.equal(exit.code, 127, exit.stderr);
    assert.equal(exit.stderr, `baton: ${copy} is cut short (${length} bytes of ${whole.length}): baton is not installed whole; copy the bundle again\n`);
    assert.equal(exit.stdout, "");
    const record = readJson(join(dir, "post.err"));
    assert.deepEqual([record.exitCode, record.reason], [127, "Error"]);
    assert.equal(existsSync(join(dir, "ran")), false, "the command did not run");
    assert.equal(existsSync(join(dir, "post")), false);
  });
}

test("a cut bundle run by its #! line, in Tekton's argument vector (-post_file=POST): the same line, POST.err", async () => {
  const copy = cutCopy(payloadAt + 100);
  const dir = tempDir();
  const exit = await runBaton([`-post_file=${join(dir, "post")}`, "-termination_path", join(dir, "termination"), "-entrypoint", "true", "--"], { baton: [copy] });
  assert.equal(exit.code, 127, exit.stderr);
  assert.match(exit.stderr, /^baton: \S+ is cut short \(\d+ bytes of \d+\): baton is not installed whole; copy the bundle again\n$/);
  assert.equal(readJson(join(dir, "post.err")).exitCode, 127);
});

test("a step waiting on a step whose bundle is cut ends at once (Skipped), instead of waiting for ever", async () => {
  const dir = tempDir();
  const waiter = startBaton(["--wait-file", join(dir, "first"), "--post-file", join(dir, "second"), "--", "touch", join(dir, "ran")]);
  const cut = await runBaton(["--post-file", join(dir, "first"), "--", "true"], { baton: [process.execPath, cutCopy(65536)] });
  assert.equal(cut.code, 127, cut.stderr);
  const exit = await waiter.exited;
  assert.equal(exit.code, 1, exit.stderr);
  assert.equal(readJson(join(dir, "second.err")).reason, "Skipped");
  assert.equal(existsSync(join(dir, "ran")), false);
});

test("a cut bundle writes no POST.err where none is named, nor for a subcommand, nor after `--`", async () => {
  const copy = cutCopy(65536);
  const dir = tempDir();
  for (const args of [["--", "echo", "--post-file", join(dir, "post")], ["init", join(dir, "dest")], ["--post-file", join(dir, "missing/post"), "--", "true"]]) {
    const exit = await runBaton(args, { baton: [process.execPath, copy] });
    assert.equal(exit.code, 127, exit.stderr);
    assert.match(exit.stderr, /^baton: [^\n]+ is cut short [^\n]+\n$/);
  }
  assert.equal(existsSync(join(dir, "post.err")), false);
  assert.equal(existsSync(join(dir, "missing")), false, "no folder made for it");
});

test("a copy of the right size that does not end with the end mark (a preallocated file, zeros at its end)", async () => {
  const copy = join(tempDir(), "baton.cjs");
  const zeroed = Buffer.from(whole);
  zeroed.fill(0, zeroed.length - 4096);
  writeFileSync(copy, zeroed);
  const exit = await runBaton(["--", "true"], { baton: [process.execPath, copy] });
  assert.equal(exit.code, 127, exit.stderr);
  assert.equal(exit.stderr, `baton: ${copy} is damaged (it does not end with baton's end mark): baton is not installed whole; copy the bundle again\n`);
});

test("a copy with bytes after its end, and a file name with a newline: still one line", async () => {
  const copy = join(tempDir(), "bat\non.cjs");
  writeFileSync(copy, Buffer.concat([whole, Buffer.from("//more\n")]));
  const exit = await runBaton(["--", "true"], { baton: [process.execPath, copy] });
  assert.equal(exit.code, 127, exit.stderr);
  assert.equal(exit.stderr, `baton: ${copy.replace("\n", "\\n")} is damaged (${whole.length + 7} bytes, not ${whole.length}): baton is not installed whole; copy the bundle again\n`);
});

// What the guard cannot do (docs/reference.md#exit-codes): a copy that ends before the guard's line is whole holds no
// code of baton's to run. Inside the guard it is Node's SyntaxError (the guard is one block: never part of it run, never
// exit 0); an empty copy, or one of no more than its `#!` line, is run by `node` as an empty program: exit 0.
test("the documented limits: cut inside the guard, Node's SyntaxError (never exit 0); empty, exit 0 under node", async () => {
  for (const length of [guardEnd - 1, Math.floor(guardEnd / 2), text.indexOf("\n") + 2]) {
    const exit = await runBaton(["--", "true"], { baton: [process.execPath, cutCopy(length)] });
    assert.equal(exit.code, 1, `${length}: ${exit.stderr}`);
    assert.match(exit.stderr, /SyntaxError/);
  }
  for (const length of [0, text.indexOf("\n") + 1]) {
    const exit = await runBaton(["--", "true"], { baton: [process.execPath, cutCopy(length)] });
    assert.deepEqual([exit.code, exit.stderr], [0, ""], `${length} bytes`);
  }
});
