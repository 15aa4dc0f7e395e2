// Waiting for the previous step's post file, by filesystem events. BATON_SAFETY_POLL=1h switches the safety poll
// off in effect, so every test here passes only if an inotify event (or the announced fallback poll) did the work.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync, readFileSync } from "node:fs";
import { cleanEnv, eventSeen, existsSync, join, readEvents, readJson, runBaton, startBaton, tempDir, IS_ROOT } from "./helpers.js";
import { spawnSync } from "node:child_process";
import { withInotifyLimit } from "../../scripts/bench/namespaces.mjs";

const EVENTS_ONLY = { BATON_SAFETY_POLL: "1h" };

/**
 * Spaces two file operations apart, as they are in a real pod (a folder made, the post file written later). Without
 * it, the second is done before baton has even read the event of the first, and a baton that never re-arms its
 * watch would pass. Not a synchronisation: a correct baton passes however long this is.
 */
const apart = () => new Promise((r) => setTimeout(r, 250));

const NO_STRACE = spawnSync("strace", ["-V"]).status !== 0 && "needs strace (.ci/run installs it)";

/** Starts a step that waits for `waitFile` (and more options), then appends "ran" to DIR/log. */
function waitingStep(dir: string, waitArgs: string[], env: NodeJS.ProcessEnv = {}, prefix?: string[]) {
  const events = join(dir, "events.jsonl");
  const baton = startBaton(
    [...waitArgs, "--post-file", join(dir, "out/post"), "--", "sh", "-c", `echo ran >> ${dir}/log`],
    { env: cleanEnv({ ...EVENTS_ONLY, BATON_EVENTS: events, ...env }), prefix },
  );
  return { baton, waiting: () => eventSeen(events, "waiting") };
}

test("runs the command once a wait file is created after baton started waiting", async () => {
  const dir = tempDir();
  const { baton, waiting } = waitingStep(dir, ["--wait-file", join(dir, "prev")]);
  await waiting();
  assert.equal(existsSync(join(dir, "log")), false, "the command must not run before the file exists");
  writeFileSync(join(dir, "prev"), "");
  const exit = await baton.exited;
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(readFileSync(join(dir, "log"), "utf8"), "ran\n");
  assert.equal(readJson(join(dir, "out/post")).exitCode, 0);
});

test("a file renamed into place counts (temp file + rename, as post files are written)", async () => {
  const dir = tempDir();
  const { baton, waiting } = waitingStep(dir, ["--wait-file", join(dir, "prev")]);
  await waiting();
  writeFileSync(join(dir, ".prev.tmp"), "{}");
  assert.equal(existsSync(join(dir, "log")), false);
  renameSync(join(dir, ".prev.tmp"), join(dir, "prev"));
  assert.equal((await baton.exited).code, 0);
  assert.equal(readFileSync(join(dir, "log"), "utf8"), "ran\n");
});

test("strace writing its log into the watched folder, a line for each read of the events, does not keep the waiter from looking", { skip: NO_STRACE }, async (t) => {
  // Each read(2) of the inotify instance makes strace append a line, which is one more event: a reader that read until
  // nothing was left would never call back, and the step would wait for ever after its file came.
  const dir = tempDir();
  const { baton, waiting } = waitingStep(dir, ["--wait-file", join(dir, "prev")], {}, ["strace", "-f", "-qq", "-e", "trace=read", "-o", join(dir, "strace.log")]);
  t.after(() => baton.kill());
  await waiting();
  writeFileSync(join(dir, "prev"), "");
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error("the waiter never looked: still waiting 30 s after its file came")), 30_000)));
  const exit = await Promise.race([baton.exited, late]).finally(() => clearTimeout(timer));
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(readFileSync(join(dir, "log"), "utf8"), "ran\n");
});

test("--wait-file-content waits until an empty file gets content", async () => {
  const dir = tempDir();
  writeFileSync(join(dir, "ready"), ""); // the downward-API file exists, empty, before the pod's containers start
  const events = join(dir, "events.jsonl");
  const baton = startBaton(
    ["--wait-file", join(dir, "ready"), "--wait-file-content", "--", "sh", "-c", `cat ${dir}/ready > ${dir}/seen`],
    { env: cleanEnv({ ...EVENTS_ONLY, BATON_EVENTS: events }) },
  );
  await eventSeen(events, "waiting");
  await apart(); // a broken baton would start on the empty file now
  assert.equal(existsSync(join(dir, "seen")), false, "must not start on an empty file");
  writeFileSync(join(dir, "ready"), "ready\n");
  assert.equal((await baton.exited).code, 0);
  assert.equal(readFileSync(join(dir, "seen"), "utf8"), "ready\n");
});

test("sees the Kubernetes ..data symlink swap of a downward-API volume", async () => {
  const dir = tempDir();
  const volume = join(dir, "podinfo");
  mkdirSync(join(volume, "..2026_11_29_07_00_00.1"), { recursive: true });
  writeFileSync(join(volume, "..2026_11_29_07_00_00.1/ready"), "");
  symlinkSync("..2026_11_29_07_00_00.1", join(volume, "..data"));
  symlinkSync("..data/ready", join(volume, "ready"));
  const { baton, waiting } = waitingStep(dir, ["--wait-file", join(volume, "ready"), "--wait-file-content"]);
  await waiting();
  // What the kubelet's atomic writer does: a new timestamped folder, a new ..data_tmp link, renamed over ..data.
  mkdirSync(join(volume, "..2026_11_29_07_00_05.2"));
  writeFileSync(join(volume, "..2026_11_29_07_00_05.2/ready"), "true");
  symlinkSync("..2026_11_29_07_00_05.2", join(volume, "..data_tmp"));
  renameSync(join(volume, "..data_tmp"), join(volume, "..data"));
  const exit = await baton.exited;
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(readFileSync(join(dir, "log"), "utf8"), "ran\n");
});

test("a wait file in a folder that is a symlink: seen when the link is retargeted to a folder that holds it", async () => {
  const dir = tempDir();
  mkdirSync(join(dir, "old"));
  mkdirSync(join(dir, "new"));
  writeFileSync(join(dir, "new/prev"), "");
  symlinkSync("old", join(dir, "link"));
  // --wait-timeout bounds a broken baton: it gives up (124) instead of hanging the suite.
  const { baton, waiting } = waitingStep(dir, ["--wait-file", join(dir, "link/prev"), "--wait-timeout", "20s"]);
  await waiting();
  await apart(); // let baton arm its watch on old/: retargeting before that is seen by its first look
  symlinkSync("new", join(dir, "link_tmp"));
  renameSync(join(dir, "link_tmp"), join(dir, "link"));
  const exit = await baton.exited;
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(readFileSync(join(dir, "log"), "utf8"), "ran\n");
});

test("a wait file in a folder that is a symlink: a file made in the link's target counts", async () => {
  const dir = tempDir();
  mkdirSync(join(dir, "real"));
  symlinkSync("real", join(dir, "link"));
  const { baton, waiting } = waitingStep(dir, ["--wait-file", join(dir, "link/prev"), "--wait-timeout", "20s"]);
  await waiting();
  writeFileSync(join(dir, "real/prev"), "");
  assert.equal((await baton.exited).code, 0);
  assert.equal(readFileSync(join(dir, "log"), "utf8"), "ran\n");
});

test("a relative wait file and post file are taken from baton's working folder", async () => {
  const dir = tempDir();
  const events = join(dir, "events.jsonl");
  const baton = startBaton(
    ["--wait-file", "steps/prev", "--wait-timeout", "20s", "--post-file", "steps/post", "--", "sh", "-c", "echo ran >> log"],
    { cwd: dir, env: cleanEnv({ ...EVENTS_ONLY, BATON_EVENTS: events }) },
  );
  await eventSeen(events, "waiting");
  mkdirSync(join(dir, "steps"), { recursive: true });
  writeFileSync(join(dir, "steps/prev"), "");
  const exit = await baton.exited;
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(readFileSync(join(dir, "log"), "utf8"), "ran\n");
  assert.equal(readJson(join(dir, "steps/post")).exitCode, 0);
});

test("--wait-timeout 0 means no limit: the step still runs when the file comes", async () => {
  const dir = tempDir();
  const { baton, waiting } = waitingStep(dir, ["--wait-file", join(dir, "prev"), "--wait-timeout", "0"]);
  await waiting();
  await apart(); // a baton that read 0 as "give up at once" has ended by now
  writeFileSync(join(dir, "prev"), "");
  const exit = await baton.exited;
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(readFileSync(join(dir, "log"), "utf8"), "ran\n");
});

test("follows a wait file whose folders do not exist yet when baton starts", async () => {
  const dir = tempDir();
  const file = join(dir, "a/b/c/prev");
  const { baton, waiting } = waitingStep(dir, ["--wait-file", file]);
  await waiting();
  mkdirSync(join(dir, "a"));
  await apart();
  mkdirSync(join(dir, "a/b/c"), { recursive: true });
  await apart();
  writeFileSync(file, "done");
  assert.equal((await baton.exited).code, 0);
  assert.equal(readFileSync(join(dir, "log"), "utf8"), "ran\n");
});

test("follows a wait file whose folder is removed and made again while baton waits", async () => {
  const dir = tempDir();
  mkdirSync(join(dir, "shared"));
  const { baton, waiting } = waitingStep(dir, ["--wait-file", join(dir, "shared/prev")]);
  await waiting();
  rmSync(join(dir, "shared"), { recursive: true });
  await apart();
  mkdirSync(join(dir, "shared"));
  await apart();
  writeFileSync(join(dir, "shared/prev"), "");
  assert.equal((await baton.exited).code, 0);
  assert.equal(readFileSync(join(dir, "log"), "utf8"), "ran\n");
});

test("waits for every wait file, in order", async () => {
  const dir = tempDir();
  const events = join(dir, "events.jsonl");
  const { baton } = waitingStep(dir, ["--wait-file", join(dir, "first"), "--wait-file", join(dir, "second")], {
    BATON_EVENTS: events,
  });
  await eventSeen(events, "waiting");
  writeFileSync(join(dir, "second"), "");
  writeFileSync(join(dir, "first"), "");
  assert.equal((await baton.exited).code, 0);
  const seen = readEvents(events).filter((e) => e.event === "ready").map((e) => e.file);
  assert.deepEqual(seen, [join(dir, "first"), join(dir, "second")]);
});

test("skips the command and writes POST.err when the previous step failed during the wait", async () => {
  const dir = tempDir();
  const { baton, waiting } = waitingStep(dir, ["--wait-file", join(dir, "prev")]);
  await waiting();
  writeFileSync(join(dir, "prev.err"), '{"exitCode":3}');
  const exit = await baton.exited;
  assert.equal(exit.code, 1);
  assert.match(exit.stderr, /^baton: .*previous step failed/m);
  assert.equal(existsSync(join(dir, "log")), false, "the command must not run");
  assert.equal(existsSync(join(dir, "out/post")), false);
  assert.equal(readJson(join(dir, "out/post.err")).reason, "Skipped");
});

test("skips the command when PATH.err is already there at start", async () => {
  const dir = tempDir();
  writeFileSync(join(dir, "prev.err"), ""); // older tools write an empty file
  const exit = await runBaton(["--wait-file", join(dir, "prev"), "--post-file", join(dir, "post"), "--", "touch", join(dir, "ran")]);
  assert.equal(exit.code, 1);
  assert.equal(existsSync(join(dir, "ran")), false);
  assert.equal(readJson(join(dir, "post.err")).reason, "Skipped");
});

test("--wait-timeout gives up: POST.err, exit 124, the command never runs", async () => {
  const dir = tempDir();
  const exit = await runBaton([
    "--wait-file", join(dir, "never"), "--wait-timeout", "300ms", "--post-file", join(dir, "post"),
    "--", "touch", join(dir, "ran"),
  ]);
  assert.equal(exit.code, 124);
  assert.match(exit.stderr, /^baton: gave up waiting/m);
  assert.equal(existsSync(join(dir, "ran")), false);
  assert.equal(readJson(join(dir, "post.err")).reason, "WaitTimeout");
});

test("falls back to polling, says so once, and keeps working when the kernel refuses an inotify watch", { skip: !IS_ROOT && "needs root for a user namespace" }, async () => {
  const dir = tempDir();
  const events = join(dir, "events.jsonl");
  // In a user namespace of its own, max_inotify_instances can be set to 0: every inotify_init then fails (EMFILE).
  const baton = startBaton(
    ["--wait-file", join(dir, "a/prev"), "--post-file", join(dir, "post"), "--", "true"],
    {
      prefix: withInotifyLimit(0),
      env: cleanEnv({ ...EVENTS_ONLY, BATON_EVENTS: events }),
    },
  );
  await eventSeen(events, "waiting");
  mkdirSync(join(dir, "a"));
  await apart();
  writeFileSync(join(dir, "a/prev"), "");
  const exit = await baton.exited;
  assert.equal(exit.code, 0, exit.stderr);
  const warnings = exit.stderr.split("\n").filter((l) => l.includes("polling every"));
  assert.equal(warnings.length, 1, exit.stderr);
  assert.match(warnings[0]!, /^baton: cannot watch .*EMFILE.*polling every 100 ms/);
  assert.equal(existsSync(join(dir, "post")), true);
});
