// The pod's PID limit full: baton reports its own failure (not the command's 126), and never aborts (issue 11,
// findings 3 and 13). A pids cgroup of its own, limited once baton waits, so baton starts but cannot fork.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { BATON, cleanEnv, eventSeen, existsSync, join, pidsCgroup, readJson, runBaton, startBaton, tempDir } from "./helpers.js";

const cgroup = pidsCgroup();
const skip = !cgroup && "needs root and a pids cgroup";

async function stepWithFullPidLimit(extra: string[]) {
  const dir = tempDir();
  const events = join(dir, "events");
  const post = join(dir, "post");
  const enter = `echo $$ > ${cgroup}/cgroup.procs && exec "$@"`;
  const baton = startBaton([], {
    baton: ["sh", "-c", enter, "sh", "unshare", "--pid", "--fork", "--mount-proc", "--kill-child", process.execPath, BATON,
      "--wait-file", join(dir, "prev"), "--post-file", post, ...extra.map((a) => a.replace("DIR", dir)), "--", "sh", "-c", `touch ${dir}/ran`],
    env: cleanEnv({ BATON_EVENTS: events }),
  });
  await eventSeen(events, "waiting");
  // Now the limit is what is running: baton cannot fork, nor start a thread.
  writeFileSync(join(cgroup!, "pids.max"), readFileSync(join(cgroup!, "pids.current"), "utf8").trim());
  writeFileSync(join(dir, "prev"), "");
  const exit = await baton.exited;
  writeFileSync(join(cgroup!, "pids.max"), "max");
  return { dir, post, exit };
}

test("finding 13: no process left to fork: baton's failure (exit 1, Error), not the command's 126", { skip }, async () => {
  const { dir, post, exit } = await stepWithFullPidLimit([]);
  assert.equal(exit.code, 1, exit.stderr);
  assert.match(exit.stderr, /^baton: cannot start the command sh: .*\(EAGAIN\)$/m);
  assert.doesNotMatch(exit.stderr, /cannot be executed/);
  assert.equal(existsSync(join(dir, "ran")), false);
  assert.deepEqual([readJson(`${post}.err`).reason, readJson(`${post}.err`).exitCode], ["Error", 1]);
});

test("finding 3: --stdout-path with the PID limit full: no abort, POST.err", { skip }, async () => {
  const { post, exit } = await stepWithFullPidLimit(["--stdout-path", "DIR/out.log"]);
  assert.equal(exit.code, 1, exit.stderr);
  assert.doesNotMatch(exit.stderr, /Assertion|Aborted|\n\s+at /);
  assert.equal(readJson(`${post}.err`).reason, "Error");
});

test("found: out of descriptors (a low RLIMIT_NOFILE, swept): whenever baton's code runs, POST or POST.err is written", async () => {
  const dir = tempDir();
  writeFileSync(join(dir, "prev"), "");
  let ranBaton = 0;
  // Below ~19 Node itself cannot start (it cannot read the bundle): nothing of baton's runs, nothing to hand on.
  for (let limit = 17; limit <= 30; limit++) {
    // --events: its file was opened before the reserved descriptor, and took the post file's last one (an audit's find).
    for (const extra of [["--wait-file", join(dir, "prev")], ["--stdout-path", join(dir, `out${limit}`)], ["--events", join(dir, `events${limit}`)]]) {
      const post = join(dir, `post-${limit}-${extra[0]!.slice(2)}`);
      const exit = await runBaton(["--post-file", post, ...extra, "--", "true"], { prefix: ["prlimit", `--nofile=${limit}`] });
      if (!/^baton: /m.test(exit.stderr) && exit.code !== 0) continue; // Node did not get as far as baton
      ranBaton++;
      assert.ok(existsSync(post) || existsSync(`${post}.err`), `limit ${limit} ${extra[0]}: no post file\n${exit.stderr}`);
      if (exit.code !== 0) assert.equal(existsSync(`${post}.err`), true, `limit ${limit}: failed but no POST.err\n${exit.stderr}`);
    }
  }
  assert.ok(ranBaton >= 9, "the sweep reached baton's own code");
});
