// The Kubernetes termination message in Tekton's format: its exact JSON in each outcome, written before the post file.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cleanEnv, eventSeen, existsSync, join, readEvents, readJson, runBaton, startBaton, tempDir, IS_ROOT } from "./helpers.js";
import { inMountNamespace } from "../../scripts/bench/namespaces.mjs";

/** A step with a termination message and two results, foo and bar, read from DIR/results. */
function stepArgs(dir: string, extra: string[] = []): string[] {
  return [
    "--termination-path", join(dir, "termination"),
    "--results", "foo,bar",
    "--results-dir", join(dir, "results"),
    "--post-file", join(dir, "post"),
    "--step-metadata-dir", join(dir, "meta"),
    ...extra,
  ];
}

function writesResults(dir: string, body: string): string[] {
  mkdirSync(join(dir, "results"), { recursive: true });
  return ["--", "sh", "-c", `printf 'foo-value' > ${dir}/results/foo; printf 'bar\\nvalue' > ${dir}/results/bar; ${body}`];
}

function termination(dir: string): string {
  return readFileSync(join(dir, "termination"), "utf8");
}

/** startedAt as the post file recorded it: the termination message must hold the same instant. */
function startedAt(dir: string, postFile: string): string {
  return readJson(join(dir, postFile)).startedAt as string;
}

test("success: StartedAt and every result, then POST", async () => {
  const dir = tempDir();
  const exit = await runBaton([...stepArgs(dir), ...writesResults(dir, "exit 0")]);
  assert.equal(exit.code, 0, exit.stderr);
  const at = startedAt(dir, "post");
  assert.equal(
    termination(dir),
    `[{"key":"StartedAt","value":"${at}","type":3},{"key":"foo","value":"foo-value","type":1},{"key":"bar","value":"bar\\nvalue","type":1}]`,
  );
});

test("a result whose file does not exist is left out", async () => {
  const dir = tempDir();
  mkdirSync(join(dir, "results"));
  const exit = await runBaton([...stepArgs(dir), "--", "sh", "-c", `printf b > ${dir}/results/bar`]);
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(termination(dir), `[{"key":"StartedAt","value":"${startedAt(dir, "post")}","type":3},{"key":"bar","value":"b","type":1}]`);
});

test("a termination path whose folders do not exist yet is written, folders created", async () => {
  const dir = tempDir();
  const path = join(dir, "dev/termination-log/message");
  const exit = await runBaton(["--termination-path", path, "--post-file", join(dir, "post"), "--", "true"]);
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(readFileSync(path, "utf8"), `[{"key":"StartedAt","value":"${startedAt(dir, "post")}","type":3}]`);
});

test("a --results-dir that does not exist: no results, the step still succeeds", async () => {
  const dir = tempDir();
  const exit = await runBaton([...stepArgs(dir), "--", "true"]);
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(termination(dir), `[{"key":"StartedAt","value":"${startedAt(dir, "post")}","type":3}]`);
});

// A failed step's results are in its message, as Tekton's entrypoint writes them: a failed task's results reach the
// pipeline's finally tasks (Tekton's e2e test TestTaskResultsFromFailedTasks failed on baton without them).
test("failure: StartedAt and the results the command wrote before it failed, POST.err, the command's code", async () => {
  const dir = tempDir();
  const exit = await runBaton([...stepArgs(dir), ...writesResults(dir, "exit 3")]);
  assert.equal(exit.code, 3);
  assert.equal(
    termination(dir),
    `[{"key":"StartedAt","value":"${startedAt(dir, "post.err")}","type":3},` +
      `{"key":"foo","value":"foo-value","type":1},{"key":"bar","value":"bar\\nvalue","type":1}]`,
  );
  assert.equal(existsSync(join(dir, "post")), false);
});

test("failure with a result that cannot be read: one line, the message without results, the command's code", async () => {
  const dir = tempDir();
  mkdirSync(join(dir, "results"));
  const exit = await runBaton([...stepArgs(dir), "--", "sh", "-c", `printf f > ${dir}/results/foo; ln -s /etc/passwd ${dir}/results/bar; exit 3`]);
  assert.equal(exit.code, 3);
  assert.match(exit.stderr, /^baton: cannot read result bar: .*; the termination message holds no results$/m);
  assert.equal(termination(dir), `[{"key":"StartedAt","value":"${startedAt(dir, "post.err")}","type":3}]`);
  assert.equal(readJson(join(dir, "post.err")).reason, "Error");
});

test("--on-error continue: ExitCode entry and results, POST, exit 0, the real code in exitCode", async () => {
  const dir = tempDir();
  const exit = await runBaton([...stepArgs(dir, ["--on-error", "continue"]), ...writesResults(dir, "exit 3")]);
  assert.equal(exit.code, 0, exit.stderr);
  assert.match(exit.stderr, /^baton: the command failed with exit code 3; continuing \(--on-error continue\)$/m);
  assert.equal(
    termination(dir),
    `[{"key":"StartedAt","value":"${startedAt(dir, "post")}","type":3},{"key":"ExitCode","value":"3","type":3},` +
      `{"key":"foo","value":"foo-value","type":1},{"key":"bar","value":"bar\\nvalue","type":1}]`,
  );
  assert.deepEqual({ ...readJson(join(dir, "post")), startedAt: 0, finishedAt: 0 }, { exitCode: 3, reason: "Error", startedAt: 0, finishedAt: 0 });
  assert.equal(existsSync(join(dir, "post.err")), false);
  assert.equal(readFileSync(join(dir, "meta/exitCode"), "utf8"), "3");
});

test("--on-error continue with a command that succeeds is a plain success", async () => {
  const dir = tempDir();
  const exit = await runBaton([...stepArgs(dir, ["--on-error", "continue"]), "--", "true"]);
  assert.equal(exit.code, 0);
  assert.equal(exit.stderr, "");
  assert.equal(termination(dir), `[{"key":"StartedAt","value":"${startedAt(dir, "post")}","type":3}]`);
});

test("timeout: Reason TimeoutExceeded, POST.err, exit 124", async () => {
  const dir = tempDir();
  const exit = await runBaton([...stepArgs(dir, ["--timeout", "200ms", "--grace-period", "5s"]), ...writesResults(dir, "exec sleep 100")]);
  assert.equal(exit.code, 124);
  assert.equal(
    termination(dir),
    `[{"key":"StartedAt","value":"${startedAt(dir, "post.err")}","type":3},{"key":"Reason","value":"TimeoutExceeded","type":3},` +
      `{"key":"foo","value":"foo-value","type":1},{"key":"bar","value":"bar\\nvalue","type":1}]`,
  );
  assert.equal(readJson(join(dir, "post.err")).reason, "TimeoutExceeded");
});

test("cancel: Reason Cancelled, POST.err, exit 143", async () => {
  const dir = tempDir();
  const events = join(dir, "events.jsonl");
  const baton = startBaton([...stepArgs(dir, ["--cancel-file", join(dir, "cancel")]), "--", "sleep", "100"], {
    env: cleanEnv({ BATON_EVENTS: events }),
  });
  await eventSeen(events, "command");
  writeFileSync(join(dir, "cancel"), "CANCEL");
  const exit = await baton.exited;
  assert.equal(exit.code, 143);
  assert.equal(
    termination(dir),
    `[{"key":"StartedAt","value":"${startedAt(dir, "post.err")}","type":3},{"key":"Reason","value":"Cancelled","type":3}]`,
  );
});

test("skipped: Reason Skipped, the command never runs", async () => {
  const dir = tempDir();
  writeFileSync(join(dir, "prev.err"), "");
  const exit = await runBaton([...stepArgs(dir, ["--wait-file", join(dir, "prev")]), "--", "touch", join(dir, "ran")]);
  assert.equal(exit.code, 1);
  assert.equal(
    termination(dir),
    `[{"key":"StartedAt","value":"${startedAt(dir, "post.err")}","type":3},{"key":"Reason","value":"Skipped","type":3}]`,
  );
  assert.equal(existsSync(join(dir, "ran")), false);
});

test("too large: one line naming the largest results, the message without results, POST.err, exit 1", async () => {
  const dir = tempDir();
  const events = join(dir, "events.jsonl");
  mkdirSync(join(dir, "results"));
  const exit = await runBaton(
    [...stepArgs(dir), "--", "sh", "-c", `head -c 3000 /dev/zero | tr '\\0' x > ${dir}/results/foo; head -c 1500 /dev/zero | tr '\\0' y > ${dir}/results/bar`],
    { env: cleanEnv({ BATON_EVENTS: events }) },
  );
  assert.equal(exit.code, 1);
  assert.equal(
    exit.stderr,
    "baton: termination message is 4633 bytes, over the 4096-byte limit of Kubernetes; largest results: foo (3000 bytes), bar (1500 bytes)\n",
  );
  assert.equal(termination(dir), `[{"key":"StartedAt","value":"${startedAt(dir, "post.err")}","type":3}]`);
  assert.deepEqual([existsSync(join(dir, "post")), readJson(join(dir, "post.err")).reason], [false, "ResultsTooLarge"]);
  assert.equal(readFileSync(join(dir, "meta/exitCode"), "utf8"), "0", "the command itself succeeded");
  // The check came before the post file: the next step never saw a POST it should not have.
  assert.deepEqual(readEvents(events).filter((e) => e.event === "post").map((e) => e.file), [join(dir, "post.err")]);
});

test("merge: existing entries are kept, a key written again keeps the last value", async () => {
  const dir = tempDir();
  writeFileSync(
    join(dir, "termination"),
    '[{"key":"StartedAt","value":"earlier","type":3},{"key":"foo","value":"old","type":1},{"key":"other","value":"kept","type":1}]',
  );
  const exit = await runBaton([...stepArgs(dir), ...writesResults(dir, "exit 0")]);
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(
    termination(dir),
    `[{"key":"other","value":"kept","type":1},{"key":"StartedAt","value":"${startedAt(dir, "post")}","type":3},` +
      `{"key":"foo","value":"foo-value","type":1},{"key":"bar","value":"bar\\nvalue","type":1}]`,
  );
});

test("a result name that could climb out of --results-dir is a usage error before anything runs", async () => {
  const dir = tempDir();
  const exit = await runBaton(["--results", "ok,../../etc/passwd", "--post-file", join(dir, "post"), "--", "touch", join(dir, "ran")]);
  assert.equal(exit.code, 2);
  assert.equal(exit.stderr, 'baton: invalid result name "../../etc/passwd" in --results: no path separators, "." or ".."\n');
  assert.equal(existsSync(join(dir, "ran")), false);
  assert.equal(existsSync(join(dir, "post.err")), true);
});

test("a termination path the kubelet bind-mounted (rename gives EBUSY) is written in place", { skip: !IS_ROOT && "needs root to bind-mount" }, async () => {
  const dir = tempDir();
  const host = join(dir, "host-termination-log");
  writeFileSync(host, "");
  writeFileSync(join(dir, "termination"), "");
  const exit = await runBaton([...stepArgs(dir), "--", "true"], { prefix: inMountNamespace(`mount --bind ${host} ${dir}/termination`) });
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(readFileSync(host, "utf8"), `[{"key":"StartedAt","value":"${startedAt(dir, "post")}","type":3}]`);
  // Sanity: rename onto a mount point does fail, so the in-place path above was really taken.
  const renamed = execFileSync("unshare", ["--mount", "sh", "-c", `mount --bind ${host} ${dir}/termination && touch ${dir}/t && mv ${dir}/t ${dir}/termination 2>&1 || true`]).toString();
  assert.match(renamed, /busy/i);
});

test("--on-error continue also covers a command killed by a signal: ExitCode 137, POST, exit 0", async () => {
  const dir = tempDir();
  const exit = await runBaton([...stepArgs(dir, ["--on-error", "continue"]), "--", "sh", "-c", "kill -KILL $$"]);
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(
    termination(dir),
    `[{"key":"StartedAt","value":"${startedAt(dir, "post")}","type":3},{"key":"ExitCode","value":"137","type":3}]`,
  );
  assert.equal(readFileSync(join(dir, "meta/exitCode"), "utf8"), "137");
});

/** The file type at `path` as stat(1) names it, without following a link. */
function fileType(path: string): string {
  return execFileSync("stat", ["-c", "%F", path], { encoding: "utf8" }).trim();
}

test("a termination path that is a character device is written through, not replaced (as root a rename took its place)", { skip: !IS_ROOT && "mknod needs root" }, async () => {
  const dir = tempDir();
  execFileSync("mknod", [join(dir, "termination"), "c", "1", "3"]); // /dev/null's numbers
  const exit = await runBaton([...stepArgs(dir), ...writesResults(dir, "exit 0")]);
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(exit.stderr, "");
  assert.equal(fileType(join(dir, "termination")), "character special file");
  assert.ok(existsSync(join(dir, "post")));
});

test("a character device that refuses the message (/dev/full) fails the step in one line: POST.err, the device kept", { skip: !IS_ROOT && "mknod needs root" }, async () => {
  const dir = tempDir();
  execFileSync("mknod", [join(dir, "termination"), "c", "1", "7"]); // /dev/full's numbers
  const exit = await runBaton([...stepArgs(dir), ...writesResults(dir, "exit 0")]);
  assert.notEqual(exit.code, 0);
  assert.match(exit.stderr, /^baton: cannot write termination message .*termination: .*no space left/im);
  assert.equal(fileType(join(dir, "termination")), "character special file");
  assert.ok(existsSync(join(dir, "post.err")));
});

test("a termination path that is a block device is neither written nor replaced: POST.err", { skip: !IS_ROOT && "mknod needs root" }, async () => {
  const dir = tempDir();
  execFileSync("mknod", [join(dir, "termination"), "b", "7", "250"]);
  const exit = await runBaton([...stepArgs(dir), ...writesResults(dir, "exit 0")]);
  assert.notEqual(exit.code, 0);
  assert.match(exit.stderr, /^baton: cannot write termination message .*termination: a block device, not a regular file/m);
  assert.equal(fileType(join(dir, "termination")), "block special file");
  assert.ok(existsSync(join(dir, "post.err")));
});
