// A copy of the standalone folder cut short (a full disk, an interrupted cp): lib/baton-node without its end made the
// loader die of SIGBUS, saying nothing, or say only "cannot read file data". The launcher checks the file against its
// ELF header first (scripts/sea/launcher.c) and says so in one line of baton's, and writes POST.err where a post file is
// named, as the bundle's guard does (bundle-cut-short.test.ts): a baton that never ran made no liveness file, so the
// steps waiting on it learn of it only from POST.err.
import { test } from "node:test";
import assert from "node:assert/strict";
import { closeSync, cpSync, openSync, readFileSync, readSync, rmSync, statSync, symlinkSync, writeFileSync, writeSync } from "node:fs";
import { NO_STANDALONE, STANDALONE_DIR, existsSync, join, readJson, runBaton, startBaton, tempDir } from "./helpers.js";

/** The standalone folder copied, its lib/baton-node cut to its first `keep` bytes (or `-keep`: all but the last). */
function cutCopy(keep: number): string {
  const folder = join(tempDir(), "baton");
  cpSync(STANDALONE_DIR, folder, { recursive: true, filter: (source) => !source.endsWith("/lib/baton-node") });
  const whole = join(STANDALONE_DIR, "lib/baton-node");
  const length = keep >= 0 ? keep : statSync(whole).size + keep;
  const input = openSync(whole, "r");
  const output = openSync(join(folder, "lib/baton-node"), "w", 0o755);
  try {
    const buffer = Buffer.allocUnsafe(1 << 20);
    for (let done = 0; done < length; ) {
      const n = readSync(input, buffer, 0, Math.min(buffer.length, length - done), done);
      writeSync(output, buffer, 0, n);
      done += n;
    }
  } finally {
    closeSync(input);
    closeSync(output);
  }
  return folder;
}

for (const [what, keep] of [["4 KiB short of its end", -4096], ["at 1 MiB", 1 << 20], ["at 10 bytes", 10]] as const) {
  test(`the standalone build whose lib/baton-node is cut ${what} says so in one line: exit 127, no SIGBUS`, { skip: NO_STANDALONE }, async () => {
    const folder = cutCopy(keep);
    const exit = await runBaton(["--", "true"], { baton: [join(folder, "baton")] });
    assert.equal(exit.signal, null, exit.stderr);
    assert.equal(exit.code, 127, exit.stderr);
    assert.match(exit.stderr, /^baton: \S+\/lib\/baton-node is cut short \(\d+ bytes of at least \d+\): baton is not installed whole; copy the standalone folder again\n$/);
  });
}

test("the cut standalone build writes POST.err (--post-file, Tekton's -post_file=): a waiting step ends at once", { skip: NO_STANDALONE }, async () => {
  const baton = join(cutCopy(1 << 20), "baton");
  const dir = tempDir();
  const waiter = startBaton(["--wait-file", join(dir, "first"), "--post-file", join(dir, "second"), "--", "touch", join(dir, "ran")]);
  const cut = await runBaton(["--post-file", join(dir, "first"), "--", "touch", join(dir, "ran")], { baton: [baton] });
  assert.equal(cut.code, 127, cut.stderr);
  const record = readJson(join(dir, "first.err"));
  assert.deepEqual([record.exitCode, record.reason], [127, "Error"]);
  assert.match(String(record.startedAt), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.equal(record.finishedAt, record.startedAt);
  const exit = await waiter.exited;
  assert.equal(exit.code, 1, exit.stderr);
  assert.equal(readJson(join(dir, "second.err")).reason, "Skipped");
  assert.equal(existsSync(join(dir, "ran")), false, "no command ran");

  const tekton = await runBaton([`-post_file=${join(dir, "tekton")}`, "-termination_path", join(dir, "termination"), "-entrypoint", "true", "--"], { baton: [baton] });
  assert.equal(tekton.code, 127, tekton.stderr);
  assert.equal(readJson(join(dir, "tekton.err")).exitCode, 127);
});

test("the launcher that cannot start Node (its loader missing) writes POST.err too", { skip: NO_STANDALONE }, async () => {
  const folder = join(tempDir(), "baton");
  cpSync(STANDALONE_DIR, folder, { recursive: true });
  rmSync(join(folder, "lib/ld-linux-x86-64.so.2"));
  const dir = tempDir();
  const exit = await runBaton(["--post-file", join(dir, "post"), "--", "true"], { baton: [join(folder, "baton")] });
  assert.equal(exit.code, 127, exit.stderr);
  assert.match(exit.stderr, /^baton: cannot start \S+: No such file or directory/);
  assert.equal(readJson(join(dir, "post.err")).exitCode, 127);
});

test("the cut standalone build: no POST.err where none is named, after `--`, for a subcommand, in a missing folder; a planted symlink is replaced, never followed", { skip: NO_STANDALONE }, async () => {
  const baton = join(cutCopy(1 << 20), "baton");
  const dir = tempDir();
  for (const args of [["--", "echo", "--post-file", join(dir, "post")], ["init", join(dir, "dest")], ["--post-file", join(dir, "missing/post"), "--", "true"], ["--post-file=", "--", "true"]]) {
    const exit = await runBaton(args, { baton: [baton] });
    assert.equal(exit.code, 127, exit.stderr);
  }
  assert.equal(existsSync(join(dir, "post.err")), false);
  assert.equal(existsSync(join(dir, "missing")), false, "no folder made for it");

  const target = join(dir, "neighbour's file");
  writeFileSync(target, "theirs");
  symlinkSync(target, join(dir, "planted.err"));
  const exit = await runBaton(["--post-file", join(dir, "planted"), "--", "true"], { baton: [baton] });
  assert.equal(exit.code, 127, exit.stderr);
  assert.equal(readFileSync(target, "utf8"), "theirs");
  assert.equal(readJson(join(dir, "planted.err")).exitCode, 127);
});
