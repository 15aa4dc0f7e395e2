// Reaping orphans, checked the way tini's tests do it: the real bundle as PID 1 of a PID namespace, real orphans,
// and /proc read from outside to count the zombies that are left.
import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, readdirSync } from "node:fs";
import { BATON, IS_ROOT, NO_STANDALONE, STANDALONE, cleanEnv, join, readOr, repetitions, startBaton, tempDir, waitFor, type StartOptions } from "./helpers.js";

const skip = !IS_ROOT && "needs root for a PID namespace";
const ORPHANS = 50;

interface Proc {
  pid: number;
  comm: string;
  state: string;
  ppid: number;
  pgrp: number;
}

/** Every process this machine shows, from /proc/PID/stat (a zombie stays listed, state Z, until it is reaped). */
function processes(): Proc[] {
  const found: Proc[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readOr(`/proc/${name}/stat`, "");
    const close = stat.lastIndexOf(")");
    if (close < 0) continue;
    const [state, ppid, pgrp] = stat.slice(close + 2).split(" ");
    found.push({ pid: Number(name), comm: stat.slice(stat.indexOf("(") + 1, close), state: state!, ppid: Number(ppid), pgrp: Number(pgrp) });
  }
  return found;
}

/**
 * A command that leaves ORPHANS `sleep 1000` processes behind, in a process group of their own (so they can all be
 * killed at once, and a signal to the command does not reach them), writes that group's id to DIR/orphaned, then
 * waits until SIGUSR1 makes it exit 7.
 */
function orphaningCommand(dir: string): string[] {
  const leave = `for i in $(seq ${ORPHANS}); do (sleep 1000 &); done; echo $$ > ${dir}/orphaned.tmp; mv ${dir}/orphaned.tmp ${dir}/orphaned`;
  return ["sh", "-c", `trap 'exit 7' USR1; setsid sh -c '${leave}'; sleep 1000 & wait`];
}

/** The group id written by orphaningCommand, once it has left its orphans (as seen inside baton's PID namespace). */
async function orphansLeft(dir: string): Promise<number> {
  return waitFor(() => Number(readOr(join(dir, "orphaned"), "")) || undefined, "the command to leave its orphans");
}

/**
 * The orphans: `sleep` processes whose parent is baton, once all ORPHANS are there (the last ones may still be
 * between fork and exec, named sh, when the command says it is done).
 */
async function orphansOf(batonPid: number, dir: string): Promise<() => Proc[]> {
  await orphansLeft(dir);
  const orphans = () => processes().filter((p) => p.ppid === batonPid && p.comm === "sleep");
  await waitFor(() => (orphans().length === ORPHANS ? true : undefined), `${ORPHANS} orphans re-parented to baton`);
  return orphans;
}

/** Ends what a failed test left running: baton (with its PID namespace, if any), and orphans given to another reaper. */
function cleanUp(baton: { kill(): void }, hostGroup?: number): void {
  baton.kill();
  if (hostGroup === undefined) return;
  try {
    process.kill(-hostGroup, "SIGKILL");
  } catch {
    // all gone
  }
}

/** Polls `count` until it is 0 or `ms` have passed; returns the last count. */
async function countAfter(count: () => number, ms: number): Promise<number> {
  const deadline = Date.now() + ms;
  for (;;) {
    const n = count();
    if (n === 0 || Date.now() >= deadline) return n;
    await new Promise((r) => setTimeout(r, 10));
  }
}

function batonLines(stderr: string): string[] {
  return stderr.split("\n").filter((line) => line.startsWith("baton: "));
}

/** Baton's command leaves 50 orphans, all killed at once: none is left a second later, and baton exits 7 as told. */
async function reapsFiftyOrphans(options: StartOptions, mode: (dir: string) => string[] = () => []): Promise<void> {
  const dir = tempDir();
  const baton = startBaton([...mode(dir), "--", ...orphaningCommand(dir)], options);
  try {
    const pid = await baton.hostPid();
    const orphans = await orphansOf(pid, dir);

    process.kill(-orphans()[0]!.pgrp, "SIGKILL"); // one kill(2) for the whole group: they all exit at once
    const zombies = await countAfter(() => orphans().length, 1000);
    assert.equal(zombies, 0, `${zombies} orphans still unreaped a second after they exited`);

    process.kill(pid, "SIGUSR1");
    const exit = await baton.exited;
    assert.equal(exit.code, 7, exit.stderr);
    assert.deepEqual(batonLines(exit.stderr).filter((line) => line.includes("reap")), []);
  } finally {
    // Outside a PID namespace the group id the command wrote is this machine's.
    cleanUp(baton, options.pid1 ? undefined : Number(readOr(join(dir, "orphaned"), "")) || undefined);
  }
}

test("as PID 1, 50 orphans that exit at once leave no zombie a second later, and baton exits with the command's code", { skip, timeout: 60_000 }, () =>
  reapsFiftyOrphans({ pid1: true }),
);

test("the standalone build reaps the same way as PID 1", { skip: skip || NO_STANDALONE, timeout: 60_000 }, () =>
  reapsFiftyOrphans({ pid1: true, baton: [STANDALONE] }),
);

test("a sidecar as PID 1 reaps its command's orphans too", { skip, timeout: 60_000 }, () =>
  reapsFiftyOrphans({ pid1: true }, (dir) => ["sidecar", "--stop-file", join(dir, "never")]),
);

test("as PID 1, 100 concurrent children of the command and baton's own child all report their true exit codes", { skip, timeout: 120_000 }, async () => {
  // Each child leaves an orphan that exits with it, and the command itself exits together with another 50 orphans:
  // baton reaps all the while, and must never take the exit status that Node is waiting for.
  const script = `
    pids=""
    for i in $(seq 100); do sh -c "(sleep 0.3 &); sleep 0.3; exit $((i % 200))" & pids="$pids $!"; done
    i=0; wrong=0
    for p in $pids; do i=$((i + 1)); wait $p; code=$?; [ $code = $((i % 200)) ] || { wrong=$((wrong + 1)); echo "child $i exited $code" >&2; }; done
    echo "wrong=$wrong"
    for i in $(seq ${ORPHANS}); do (sleep 0.2 &); done
    sleep 0.2
    exit 42`;
  for (let run = 1; run <= repetitions(3); run++) {
    const exit = await startBaton(["--", "sh", "-c", script], { pid1: true }).exited;
    assert.equal(exit.code, 42, `run ${run}: ${exit.stderr}`);
    assert.equal(exit.stdout.trim(), "wrong=0", `run ${run}: ${exit.stderr}`);
    assert.deepEqual(batonLines(exit.stderr), [], `run ${run}`);
  }
});

test("as PID 1, a command killed together with 200 orphans (one SIGKILL to its group) gives 137, ten times out of ten (once in make check)", { skip, timeout: 180_000 }, async () => {
  // The command's exit lands in the middle of a burst of orphans' exits. A reaper that took its status would leave
  // Node waiting forever (this caught one in about three runs), so each run has a deadline.
  for (let run = 1; run <= repetitions(10); run++) {
    const baton = startBaton(["--", "sh", "-c", "for i in $(seq 200); do (sleep 1000 &); done; kill -KILL 0"], { pid1: true });
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<"hung">((resolve) => (timer = setTimeout(() => resolve("hung"), 20_000)));
    const exit = await Promise.race([baton.exited, deadline]);
    clearTimeout(timer);
    if (exit === "hung") {
      baton.kill(); // unshare --kill-child takes baton and its namespace along
      assert.fail(`run ${run}: baton never saw its command exit`);
    }
    assert.equal(exit.code, 137, `run ${run}: ${exit.stderr}`);
    assert.deepEqual(batonLines(exit.stderr), [], `run ${run}`);
  }
});

test("without the addon beside the bundle, baton warns once, runs the command, and leaves the zombies", { skip, timeout: 60_000 }, async () => {
  const dir = tempDir();
  const bundle = join(dir, "baton.cjs"); // a bundle with no baton-reaper.node next to it
  copyFileSync(BATON, bundle);
  const baton = startBaton(["--", ...orphaningCommand(dir)], { pid1: true, baton: [process.execPath, bundle] });
  try {
    const pid = await baton.hostPid();
    const orphans = await orphansOf(pid, dir);

    process.kill(-orphans()[0]!.pgrp, "SIGKILL");
    // With nobody to reap them they all become zombies and stay so: what the other tests would see without reaping.
    await waitFor(() => (orphans().filter((p) => p.state === "Z").length === ORPHANS ? true : undefined), "50 zombies");

    process.kill(pid, "SIGUSR1");
    const exit = await baton.exited;
    assert.equal(exit.code, 7, exit.stderr);
    const lines = batonLines(exit.stderr);
    assert.equal(lines.length, 1, exit.stderr);
    assert.match(lines[0]!, /^baton: cannot load the reaper \(.*baton-reaper\.node: .*\); orphaned processes will not be reaped$/);
  } finally {
    cleanUp(baton);
  }
});

test("not PID 1, BATON_SUBREAPER=1 makes baton a subreaper that reaps its command's orphans", { timeout: 60_000 }, () =>
  reapsFiftyOrphans({ env: cleanEnv({ BATON_SUBREAPER: "1" }) }),
);

test("not PID 1 and not asked to be a subreaper, baton leaves orphans to the real init", { timeout: 60_000 }, async () => {
  const dir = tempDir();
  const baton = startBaton(["--", ...orphaningCommand(dir)]);
  let group: number | undefined;
  try {
    group = await orphansLeft(dir); // not in a PID namespace: the same group id as here
    const pid = await baton.hostPid();
    const alive = () => processes().filter((p) => p.pgrp === group && p.comm === "sleep");
    await waitFor(() => (alive().length === ORPHANS ? true : undefined), `${ORPHANS} orphans to run sleep`);
    assert.deepEqual(alive().filter((p) => p.ppid === pid), [], "no orphan is baton's child");
    process.kill(-group, "SIGKILL"); // they hold baton's stdout and stderr: its 'close' waits for them
    process.kill(pid, "SIGUSR1");
    assert.equal((await baton.exited).code, 7);
  } finally {
    cleanUp(baton, group);
  }
});
