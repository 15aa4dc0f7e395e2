// The post file: the baton handed to the next step.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { BATON, cleanEnv, eventSeen, existsSync, join, readJson, runBaton, startBaton, tempDir, IS_ROOT } from "./helpers.js";
import { fullDisk, inMountNamespace } from "../../scripts/bench/namespaces.mjs";

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

test("on success writes POST as one line of JSON, creating its folders, and no POST.err", async () => {
  const dir = tempDir();
  const post = join(dir, "run/steps/step-1/post");
  // The command sees the wake FIFO as its baton keeps it; the FIFO goes with the baton.
  const exit = await runBaton(["--post-file", post, "--", "sh", "-c", `stat -c '%F %a' '${post}.baton-wake' > '${dir}/wake'`]);
  assert.equal(exit.code, 0, exit.stderr);
  const text = readFileSync(post, "utf8");
  assert.equal(text.split("\n").length, 2, "one line");
  const record = JSON.parse(text);
  assert.deepEqual(Object.keys(record), ["exitCode", "reason", "startedAt", "finishedAt"]);
  assert.equal(record.exitCode, 0);
  assert.equal(record.reason, "Completed");
  assert.match(record.startedAt, ISO);
  assert.match(record.finishedAt, ISO);
  assert.ok(record.finishedAt >= record.startedAt);
  assert.equal(existsSync(`${post}.err`), false);
  // post.baton-live: the liveness lock the next step looks at; post.baton-wake, the FIFO that wakes it, is removed as
  // its baton exits (docs/reference.md).
  const folder = join(dir, "run/steps/step-1");
  assert.deepEqual(readdirSync(folder).sort(), ["post", "post.baton-live"], "no temporary file left behind");
  // While the baton lived: a FIFO any uid can open for reading, whatever the umask.
  assert.equal(readFileSync(join(dir, "wake"), "utf8"), "fifo 644\n");
});

test("never leaves both: a stale POST.err from an earlier run is removed when POST is written, and the reverse", async () => {
  const dir = tempDir();
  const post = join(dir, "post");
  writeFileSync(`${post}.err`, "");
  assert.equal((await runBaton(["--post-file", post, "--", "true"])).code, 0);
  assert.deepEqual(readdirSync(dir).sort(), ["post", "post.baton-live"]);
  assert.equal((await runBaton(["--post-file", post, "--", "false"])).code, 1);
  assert.deepEqual(readdirSync(dir).sort(), ["post.baton-live", "post.err"]);
});

test("--step-metadata-dir: results/ exists before the wait, exitCode holds the command's code", async () => {
  const dir = tempDir();
  const meta = join(dir, "steps/step-build");
  const events = join(dir, "events.jsonl");
  const baton = startBaton(
    ["--wait-file", join(dir, "prev"), "--step-metadata-dir", meta, "--", "sh", "-c", "exit 5"],
    { env: cleanEnv({ BATON_EVENTS: events }) },
  );
  await eventSeen(events, "waiting");
  assert.equal(existsSync(join(meta, "results")), true, "results/ is there while the step waits");
  writeFileSync(join(dir, "prev"), "");
  assert.equal((await baton.exited).code, 5);
  assert.equal(readFileSync(join(meta, "exitCode"), "utf8"), "5");
});

test("a post file that cannot be written (disk full) fails the step with one line", { skip: !IS_ROOT && "needs root to mount a tmpfs" }, async () => {
  const dir = tempDir();
  mkdirSync(join(dir, "full"));
  // A 4 KiB tmpfs, filled up, in a mount namespace of its own so nothing leaks onto the host.
  const exit = await runBaton(["--post-file", join(dir, "full/post"), "--", "true"], {
    prefix: inMountNamespace(fullDisk(`${dir}/full`, "4k")),
  });
  assert.notEqual(exit.code, 0);
  assert.match(exit.stderr, /^baton: cannot write post file .*\/full\/post: .*ENOSPC/m);
  assert.doesNotMatch(exit.stderr, /\n\s+at /);
});

test("out of inodes once the command ran: the liveness file's own inode becomes the empty POST.err, and the next step skips (an audit's find)", { skip: !IS_ROOT && "needs root to mount a tmpfs" }, async () => {
  const dir = tempDir();
  mkdirSync(join(dir, "run"));
  // A tmpfs of 8 inodes, in a mount namespace of their own: the command uses up every inode the step left.
  const writer = `i=0; while touch ${dir}/run/full/f$i 2>/dev/null; do i=$((i+1)); done`;
  const script = `mount -t tmpfs -o size=1m,nr_inodes=8 tmpfs ${dir}/run && mkdir ${dir}/run/full || exit 9
    "$@" & w=$!
    "$0" ${BATON} --wait-file ${dir}/run/full/a --post-file ${dir}/next -- touch ${dir}/ran; echo "waiter $?"; wait $w; echo "writer $?"; ls -A ${dir}/run/full`;
  const exit = await runBaton([], { baton: ["unshare", "--mount", "sh", "-c", script, process.execPath, process.execPath, BATON, "--post-file", join(dir, "run/full/a"), "--", "sh", "-c", writer] });
  assert.match(exit.stderr, /^baton: cannot write post file .*\/full\/a: .*ENOSPC/m);
  assert.match(exit.stderr, /^baton: wrote an empty .*\/full\/a\.err instead, so the next step ends$/m);
  assert.match(exit.stderr, /^baton: skipping the command: the previous step failed/m);
  assert.match(exit.stdout, /^waiter 1\nwriter 1\n/);
  assert.match(exit.stdout, /^a\.err$/m);
  assert.doesNotMatch(exit.stdout, /a\.baton-live/);
  assert.equal(existsSync(join(dir, "ran")), false);
});

test("the post file is readable JSON with exitCode and reason for each outcome", async () => {
  const dir = tempDir();
  const cases: [string[], string, number, string][] = [
    [["--", "true"], "a", 0, "Completed"],
    [["--", "false"], "b.err", 1, "Error"],
    [["--", "/nonexistent/cmd"], "c.err", 127, "CommandNotFound"],
  ];
  for (const [args, file, exitCode, reason] of cases) {
    await runBaton(["--post-file", join(dir, file.replace(".err", "")), ...args]);
    const record = readJson(join(dir, file));
    assert.equal(record.exitCode, exitCode, file);
    assert.equal(record.reason, reason, file);
  }
});
