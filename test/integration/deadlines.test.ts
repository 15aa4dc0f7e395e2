// Every deadline accepts any duration the parser accepts and runs on the monotonic clock (issue 11, findings 11-12),
// and a cancel file is honoured from the step's start (14-15).
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { BATON, cleanEnv, eventSeen, existsSync, fileAppears, join, readJson, readOr, runBaton, startBaton, tempDir } from "./helpers.js";

test("finding 11: --timeout 600h and Tekton's -timeout 720h0m0s do not fire at once (over 2^31-1 ms)", async () => {
  for (const args of [["--timeout", "600h", "--", "sh"], ["-timeout", "720h0m0s", "-entrypoint", "sh", "--"]]) {
    const exit = await runBaton([...args, "-c", "sleep 0.3"]);
    assert.equal(exit.code, 0, `${args.join(" ")}: ${exit.stderr}`);
  }
});

test("finding 11: --wait-timeout 600h keeps waiting", async () => {
  const dir = tempDir();
  const events = join(dir, "events");
  const baton = startBaton(["--wait-file", join(dir, "prev"), "--wait-timeout", "600h", "--", "true"], { env: cleanEnv({ BATON_EVENTS: events }) });
  await eventSeen(events, "waiting");
  // Not a synchronisation: the broken timer fired after 1 ms; a correct baton passes however long this is.
  await new Promise((r) => setTimeout(r, 200));
  writeFileSync(join(dir, "prev"), "");
  const exit = await baton.exited;
  assert.equal(exit.code, 0, exit.stderr);
});

test("finding 11: --grace-period 600h gives the command its grace (no SIGKILL after 1 ms)", async () => {
  const dir = tempDir();
  const meta = join(dir, "meta");
  const cancel = join(dir, "cancel");
  // The command traps SIGTERM and exits 0 after 0.3 s: its own code (0) is recorded in DIR/exitCode. The stop (the
  // same as --timeout's) comes from the cancel file once sh has installed its trap and started the sleep it waits on:
  // a sleep forked after the group's SIGTERM would outlive sh, and hold baton's output open for its 5 s.
  const command = `trap 'sleep 0.3; exit 0' TERM; sleep 5 & touch ${dir}/trapped; wait`;
  const baton = startBaton(["--cancel-file", cancel, "--grace-period", "600h", "--step-metadata-dir", meta, "--", "sh", "-c", command]);
  await fileAppears(join(dir, "trapped"));
  writeFileSync(cancel, "cancel");
  const exit = await baton.exited;
  assert.equal(exit.code, 143, exit.stderr);
  assert.equal(readOr(join(meta, "exitCode"), ""), "0");
});

test("finding 11: a sidecar's --grace-period 600h gives the sidecar its grace", async () => {
  const dir = tempDir();
  // As above: the file says the trap is installed and the sleep started (one forked after the SIGTERM held the test
  // for its 100 s).
  const command = `trap 'sleep 0.3; touch ${dir}/clean; exit 0' TERM; sleep 100 & touch ${dir}/trapped; wait`;
  const baton = startBaton(["sidecar", "--stop-file", join(dir, "last"), "--grace-period", "600h", "--", "sh", "-c", command]);
  await fileAppears(join(dir, "trapped"));
  writeFileSync(join(dir, "last"), "");
  const exit = await baton.exited;
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(existsSync(join(dir, "clean")), true, "the sidecar shut down cleanly, not SIGKILLed");
});

test("finding 12: a wall-clock step during --grace-period does not SIGKILL a group that is shutting down", async () => {
  const dir = tempDir();
  // Date.now() jumps an hour ahead 100 ms after baton's first SIGTERM to the group (an NTP step, a resumed VM).
  const jump = join(dir, "jump.cjs");
  writeFileSync(jump, `
    const realNow = Date.now; let jumpAt = Infinity;
    Date.now = () => { const t = realNow(); return t >= jumpAt ? t + 3600e3 : t; };
    const realKill = process.kill;
    process.kill = function (pid, signal) { if (signal === "SIGTERM" && jumpAt === Infinity) jumpAt = realNow() + 100; return realKill.apply(process, arguments); };
  `);
  // The group leader exits at once on SIGTERM; a member of its group needs 0.5 s to finish cleanly. The stop (the same
  // as --timeout's) comes from the cancel file once the member has installed its trap: a timer could fire before that.
  const member = `trap 'sleep 0.5; touch ${dir}/clean; exit 0' TERM; touch ${dir}/trapped; while :; do sleep 0.05; done`;
  const cancel = join(dir, "cancel");
  const baton = startBaton(["--cancel-file", cancel, "--grace-period", "10s", "--", "sh", "-c", `sh -c "${member}" & sleep 100`], {
    baton: [process.execPath, "--require", jump, BATON],
  });
  await fileAppears(join(dir, "trapped"));
  writeFileSync(cancel, "cancel");
  const exit = await baton.exited;
  assert.equal(exit.code, 143, exit.stderr);
  assert.equal(existsSync(join(dir, "clean")), true, "the member was given its grace period");
});

test("finding 14: a stray CANCEL.err does not turn the cancel watch off", async () => {
  const dir = tempDir();
  const cancel = join(dir, "cancel");
  writeFileSync(`${cancel}.err`, "");
  const events = join(dir, "events");
  const baton = startBaton(["--cancel-file", cancel, "--post-file", join(dir, "post"), "--", "sleep", "30"], { env: cleanEnv({ BATON_EVENTS: events }) });
  await eventSeen(events, "command");
  // Not synchronisation: the broken watch needs a moment to see CANCEL.err and give up before CANCEL appears.
  await new Promise((r) => setTimeout(r, 300));
  writeFileSync(cancel, "cancel");
  const exit = await baton.exited;
  assert.equal(readJson(join(dir, "post.err")).reason, "Cancelled", exit.stderr);
  assert.equal(exit.code, 143);
});

test("finding 15: a step cancelled while it waits does not start its command", async () => {
  const dir = tempDir();
  const cancel = join(dir, "cancel");
  const events = join(dir, "events");
  const baton = startBaton(["--wait-file", join(dir, "prev"), "--cancel-file", cancel, "--post-file", join(dir, "post"), "--", "touch", join(dir, "ran")], { env: cleanEnv({ BATON_EVENTS: events }) });
  await eventSeen(events, "waiting");
  writeFileSync(cancel, "cancel");
  const exit = await baton.exited;
  assert.equal(exit.code, 143, exit.stderr);
  assert.match(exit.stderr, /cancelled by .*cancel before the command started: it will not start/);
  assert.equal(existsSync(join(dir, "ran")), false);
  assert.equal(readJson(join(dir, "post.err")).reason, "Cancelled");
});

test("finding 15: a cancel file already there at start: the command never starts", async () => {
  const dir = tempDir();
  const cancel = join(dir, "cancel");
  writeFileSync(cancel, "cancel");
  const exit = await runBaton(["--cancel-file", cancel, "--post-file", join(dir, "post"), "--", "touch", join(dir, "ran")]);
  assert.equal(exit.code, 143, exit.stderr);
  assert.equal(existsSync(join(dir, "ran")), false);
  assert.equal(readJson(join(dir, "post.err")).reason, "Cancelled");
});
