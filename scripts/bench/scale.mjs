// 8. Waiting at scale: what N steps waiting for their turn cost a node, and how fast they hand on. Tekton's layout:
// step i waits for run/<i-1>/out and writes run/<i>/out, each step its own baton process in a mount namespace where
// the other steps' run folders are read-only (scripts/bench/nsstep.c), all in one user namespace whose inotify limit
// (/proc/sys/user/max_inotify_instances) is lowered to INOTIFY_LIMIT, as a node's budget is shared by many pods.
//   node scripts/bench.mjs --only 8 [--steps 50,200,500] [--runtimes 20,sea]
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { basename, join } from "node:path";
import {
  binaryFolios, childrenOf, cpuTime, expectExit, hasInotifyWatch, inotifyInstances, killTree, machineTicks, msBetween, now, readStamp, sleep, start, statusKiB, summarize, waitForLine,
  waitUntilIdle, withInotifyLimit, withOwnProc,
} from "./lib.mjs";
import { PROC } from "./proc.mjs";

// make bench runs N = 200 (the targets' N) on each runtime; --steps 50,200,500 the whole scale (docs/performance.md).
export const DEFAULT_SCALE_STEPS = [200];
/** The targets' budget; --inotify-limit N changes it (a diagnostic, docs/performance.md). */
const INOTIFY_LIMIT = 16;
/**
 * A waiting step woken this often per second polls: the fallback poll (no inotify instance left) wakes it 10 times a
 * second; the safety poll and the liveness lock's look, 1 and 2.
 */
const POLLING_WAKEUPS = 5;
/** After the last step is idle: a step's own one-off timers (the inspector guard looks again after 1 s) are over. */
const SETTLE_MS = 1500;
/** The quiet interval over which idle CPU is counted, every step waiting. */
const QUIET_MS = 5000;

const TARGETS = { handoffP50Ms: 10, idleCpuUs: 20, rssOverNodeMiB: 1, killNoticeMs: 50 };
const TARGET_TEXT = `hand-off p50 <= ${TARGETS.handoffP50Ms} ms; no step polls for a baton; idle CPU <= ${TARGETS.idleCpuUs} us/step/s; ` +
  `RssAnon <= idle node + ${TARGETS.rssOverNodeMiB} MiB; SIGKILLed predecessor noticed <= ${TARGETS.killNoticeMs} ms`;

/** The chain's first part, reported apart (its oldest processes' hand-offs when the steps start first to last). */
const FIRST_PART = 40;

const POST_CONTENT = '{"exitCode":0,"reason":"Completed"}\n';
const mark = (ok) => (ok ? "✓" : "✗");

const inotifyLimit = (ctx) => Number(ctx.scaleInotifyLimit ?? INOTIFY_LIMIT);

/** One row per N in ctx.scaleSteps, on runtime `rt`. */
export async function waitingAtScale(ctx, rt) {
  const figure = (n) => `${n} steps waiting, ${inotifyLimit(ctx)} inotify instances${ctx.scaleStartLastFirst ? ", started last-first" : ""}` +
    `${ctx.scaleCommandMs ? `, ${ctx.scaleCommandMs} ms commands` : ""}, ${rt.label}`;
  const skip = (why) => ctx.scaleSteps.map((n) => ({ id: "8", figure: figure(n), skipped: why, target: "", pass: null, references: [] }));
  if (!ctx.root) return skip("needs root (user and mount namespaces)");
  // The steps' instances count against the node's own limit too (each user namespace's up to the first), and the
  // bench's watchers need theirs there: more than the node allows is not a row.
  const nodeLimit = Number(readFileSync("/proc/sys/fs/inotify/max_user_instances", "utf8"));
  if (inotifyLimit(ctx) > nodeLimit) {
    return skip(`--inotify-limit ${inotifyLimit(ctx)} is over the node's own ${nodeLimit}: raise /proc/sys/fs/inotify/max_user_instances first`);
  }
  const rows = [];
  for (const n of ctx.scaleSteps) rows.push(await scaleOnce(ctx, rt, n, figure(n)));
  return rows;
}

async function scaleOnce(ctx, rt, n, figure) {
  const { probes, reps } = ctx;
  const dir = ctx.tempDir("scale-");
  const real = join(dir, "real"); // the run folders; each step sees them at `view`
  const view = join(dir, "run");
  const stamps = stampFolder(dir);
  const killTrials = reps.scaleKill;
  for (let i = 0; i <= n + 2 * killTrials; i++) mkdirSync(join(real, String(i)), { recursive: true });
  mkdirSync(view);

  const [unshare, ...limited] = withInotifyLimit(inotifyLimit(ctx));
  const holder = start(unshare, [...limited, "sh", "-c", "echo ready && exec sleep 100000"], { stdio: ["ignore", "pipe", "pipe"] });
  const idleNode = start(rt.node, ["-e", "setInterval(() => {}, 1e9)"]);
  const spawnStep = (i, batonArgs, command) => start(probes.nsstep, [
    String(holder.pid), real, view, String(i), "--", ...rt.baton, ...batonArgs, "--", ...command,
  ]);
  const stepsRunning = [];
  // The bench's reads of the steps' /proc go through a procfs of its own, unmounted before the chain (proc.mjs).
  const releaseProc = withOwnProc();
  const phases = {};
  let phaseStart = now();
  const phase = (name) => {
    phases[name] = Number((msBetween(phaseStart, now()) / 1000).toFixed(1));
    phaseStart = now();
  };
  try {
    await waitForLine(holder, "ready");
    // Started first to last, as a pod's containers are; --start-last-first the other way round (docs/performance.md).
    const steps = [];
    const order = Array.from({ length: n }, (_, k) => (ctx.scaleStartLastFirst ? n - k : k + 1));
    for (const i of order) {
      steps[i - 1] = spawnStep(i, ["--wait-file", join(view, String(i - 1), "out"), "--post-file", join(view, String(i), "out")],
        [probes.stepprobe, join(stamps, `started-${i}`), join(stamps, `exited-${i}`), ...(ctx.scaleCommandMs ? [ctx.scaleCommandMs] : [])]);
    }
    stepsRunning.push(...steps);
    // A step is waiting once its event loop is idle, or it has armed its watch or said it polls (today's baton).
    const isReady = (c) => hasInotifyWatch(c.pid) || isPollWarning(c.stderrSoFar?.() ?? "");
    const notIdle = await waitUntilIdle([...steps, idleNode], { timeoutMs: 60_000 + 300 * n, isReady });
    phase("start");
    await sleep(SETTLE_MS);

    // Idle: CPU over a quiet interval, memory, inotify instances, poll fallbacks.
    const before = steps.map((s) => cpuTime(s.pid));
    const nodeBefore = cpuTime(idleNode.pid);
    const t0 = now();
    await sleep(QUIET_MS);
    const after = steps.map((s) => cpuTime(s.pid));
    const nodeAfter = cpuTime(idleNode.pid);
    const seconds = msBetween(t0, now()) / 1000;
    const cpuNs = after.reduce((sum, a, k) => sum + a.ns - before[k].ns, 0);
    const cpuTicks = after.reduce((sum, a, k) => sum + a.ticks - before[k].ticks, 0);
    const idleCpuUs = cpuNs / 1000 / n / seconds;
    const idleCpuTicksUs = (cpuTicks * 10_000) / n / seconds; // USER_HZ is 100 on Linux: a tick is 10 ms
    const nodeCpuUs = (nodeAfter.ns - nodeBefore.ns) / 1000 / seconds;
    const rssKiB = steps.map((s) => statusKiB(s.pid, "RssAnon"));
    const nodeRssKiB = statusKiB(idleNode.pid, "RssAnon");
    const instances = steps.map((s) => inotifyInstances(s.pid));
    const wakeups = after.map((a, k) => (a.wakeups - before[k].wakeups) / seconds);
    // Step 1 waits for a file the bench writes, not a baton: it may watch or poll. The others wait for a baton.
    const polling = wakeups.slice(1).filter((w) => w >= POLLING_WAKEUPS).length;
    const saidPolling = steps.filter((s) => isPollWarning(s.stderrSoFar())).length;
    const folios = binaryFolios(steps[0].pid);
    phase("idle");

    // A SIGKILLed predecessor among them: a step runs a long command, its waiter waits; SIGKILL the running step's
    // baton -> its waiter's failure file (run/<b>/out.err), stamped by a C inotify watcher.
    const pairs = Array.from({ length: killTrials }, (_, r) => {
      const a = n + 1 + 2 * r;
      const b = a + 1;
      const running = spawnStep(a, ["--post-file", join(view, String(a), "out")], ["/bin/sleep", "100000"]);
      const waiter = spawnStep(b, ["--wait-file", join(view, String(a), "out"), "--post-file", join(view, String(b), "out")], ["/bin/true"]);
      stepsRunning.push(running, waiter);
      return { b, running, waiter };
    });
    await waitUntilIdle(pairs.flatMap((p) => [p.running, p.waiter]), { timeoutMs: 30_000 + 1000 * killTrials, isReady });
    const killNotice = [];
    for (const { b, running, waiter } of pairs) {
      const [command] = childrenOf(running.pid); // the command the running baton started
      if (command === undefined) continue; // still starting on a busy machine: not measured (the row says how many were)
      const watcher = start(probes.runwatch, [join(real, String(b))], { stdio: ["ignore", "pipe", "pipe"] });
      let seen = "";
      watcher.stdout.on("data", (chunk) => (seen += chunk));
      await waitForLine(watcher, "ready");
      const killed = now();
      process.kill(running.pid, "SIGKILL");
      await expectExit(watcher, "run folder watcher (kill)");
      await expectExit(waiter, "the waiter of a killed step", [1]);
      process.kill(command, "SIGKILL"); // it holds the killed baton's stderr: its pipe closes with both
      await running.exited;
      const [, name, ns] = seen.split("\n").find((l) => l.startsWith("0 "))?.split(" ") ?? [];
      if (name !== "out.err") throw new Error(`the waiter of a killed step wrote ${name}, not out.err`);
      killNotice.push(msBetween(killed, BigInt(ns)));
    }

    phase("kill");
    releaseProc();

    // The hand-offs: the bench writes run/0/out; post file of step i seen -> command of step i+1 started.
    const watcher = start(probes.runwatch, Array.from({ length: n }, (_, k) => join(real, String(k + 1))), { stdio: ["ignore", "pipe", "pipe"] });
    let seenText = "";
    watcher.stdout.on("data", (chunk) => (seenText += chunk));
    await waitForLine(watcher, "ready");
    const temp = join(real, "0", ".out.tmp-bench");
    writeFileSync(temp, POST_CONTENT);
    const ticksBefore = machineTicks();
    const released = now();
    renameSync(temp, join(real, "0", "out"));
    await Promise.all(steps.map((s) => expectExit(s, "baton (scale chain step)")));
    const machine = chainMachine(ticksBefore, machineTicks(), n);
    await expectExit(watcher, "run folder watcher");
    const posted = [released];
    for (const line of seenText.trim().split("\n").slice(1)) {
      const [k, name, ns] = line.split(" ");
      if (name === "out") posted[Number(k) + 1] = BigInt(ns);
    }
    const handoffs = [];
    const exitToPost = [];
    for (let i = 1; i <= n; i++) {
      const started = readStamp(join(stamps, `started-${i}`));
      if (posted[i - 1] !== undefined) handoffs.push(msBetween(posted[i - 1], started));
      if (i < n && posted[i] !== undefined) exitToPost.push(msBetween(readStamp(join(stamps, `exited-${i}`)), posted[i]));
    }

    phase("chain");
    const stats = summarize(handoffs);
    const kill = summarize(killNotice);
    const rss = summarize(rssKiB.map((k) => k / 1024));
    const overNode = rss.median - nodeRssKiB / 1024;
    const held = instances.reduce((a, b) => a + b, 0);
    const ok = {
      handoff: stats.median <= TARGETS.handoffP50Ms,
      polls: polling === 0,
      cpu: idleCpuUs <= TARGETS.idleCpuUs,
      rss: overNode <= TARGETS.rssOverNodeMiB,
      kill: kill.n > 0 && kill.max <= TARGETS.killNoticeMs,
    };
    return {
      id: "8",
      figure,
      runtime: rt.label,
      unit: "ms",
      stats,
      samples: handoffs,
      target: TARGET_TEXT,
      pass: Object.values(ok).every(Boolean),
      references: [
        { label: "steps polling for a baton", text: `${polling} of ${n - 1} ${mark(ok.polls)} (woken >= ${POLLING_WAKEUPS}/s; ${saidPolling} of ${n} said so on stderr)` },
        { label: "wake-ups per step", text: `${(wakeups.reduce((a, b) => a + b, 0) / n).toFixed(1)}/s` },
        { label: "inotify instances held", text: `${held} (at most ${Math.max(...instances)} per step)` },
        { label: "idle CPU per step", text: `${idleCpuUs.toFixed(1)} us/s ${mark(ok.cpu)} (utime+stime ${idleCpuTicksUs.toFixed(0)} us/s; idle node ${nodeCpuUs.toFixed(1)} us/s)` },
        { label: "RssAnon per step", text: `${rss.median.toFixed(2)} MiB (max ${rss.max.toFixed(2)}), idle node ${(nodeRssKiB / 1024).toFixed(2)} MiB: +${overNode.toFixed(2)} MiB ${mark(ok.rss)}` },
        { label: "SIGKILLed predecessor noticed", text: kill.n > 0
          ? `median ${kill.median.toFixed(1)} ms, max ${kill.max.toFixed(1)} ms (${kill.n} of ${killTrials} kills) ${mark(ok.kill)}`
          : `not measured: no running step had started its command ${mark(false)}` },
        { label: "exit -> post file seen", stats: summarize(exitToPost), samples: exitToPost },
        // The chain's first hand-offs are the slowest on this machine when they are its oldest processes' (see
        // docs/performance.md): the split shows it in every run.
        { label: `hand-offs 1-${FIRST_PART} / ${FIRST_PART + 1}-${n}`, text: handoffs.length > FIRST_PART
          ? `medians ${summarize(handoffs.slice(0, FIRST_PART)).median.toFixed(1)} / ${summarize(handoffs.slice(FIRST_PART)).median.toFixed(1)} ms`
          : "too few" },
        // The chain's first hand-offs were slow in 19 of 20 runs with the Node binary's page cache in small folios, as
        // a node's is after an image pull or a re-read by page faults, and in none of 6 with it in large ones
        // (docs/performance.md): say which this run had.
        { label: "Node binary in the page cache", text: folios
          ? `${Math.round((100 * folios.large) / folios.mapped)} % in large folios (${folios.large} of the ${folios.mapped} pages of ${basename(folios.file)} a waiting step maps)`
          : "not known (needs /proc/kpageflags)" },
        // Whether the chain was bound by the machine's CPUs: then its hand-offs cannot be faster than the CPU each one
        // took (every process: steps, commands, their exits, the bench's watcher) over the CPUs there are.
        { label: "machine over the chain", text: `${machine.msPerHandoff.toFixed(1)} ms of CPU per hand-off on ${machine.cpus} CPUs ` +
          `(floor ${(machine.msPerHandoff / machine.cpus).toFixed(1)} ms): busy ${machine.busyPct}%, idle ${machine.idlePct}%, steal ${machine.stealPct}%` },
      ],
      scale: {
        steps: n, inotifyLimit: inotifyLimit(ctx), quietSeconds: seconds, idleCpuUs, idleCpuTicksUs, nodeCpuUs,
        rssAnonKiB: rssKiB, nodeRssAnonKiB: nodeRssKiB, inotifyInstances: instances, wakeups, polling, saidPolling, killNoticeMs: killNotice,
        phaseSeconds: phases,
        chainMachine: machine,
        binaryFolios: folios,
        notIdle,
      },
      note: `Tekton's run/<i>/out, each step in its own mount namespace (the others' folders read-only), one user namespace with max_inotify_instances=${inotifyLimit(ctx)}; ` +
        `hand-off: post file seen (C inotify watcher) -> next command started; idle CPU: schedstat of every thread over ${QUIET_MS / 1000} s, every step waiting${notIdle ? ` but ${notIdle} still starting` : ""}; ` +
        `seconds spent: ${Object.entries(phases).map(([k, v]) => `${k} ${v}`).join(", ")}`,
    };
  } finally {
    releaseProc();
    // A step's whole tree: a baton killed alone leaves its command (the kill trials' `sleep`) running.
    for (const child of [...stepsRunning, idleNode, holder]) {
      if (child.exitCode === null && child.signalCode === null) killTree(child.pid);
    }
    await Promise.allSettled([...stepsRunning, idleNode, holder].map((c) => c.exited));
    rmSync(dir, { recursive: true, force: true });
    rmSync(stamps, { recursive: true, force: true });
  }
}

/** What the machine did over the chain (machineTicks before and after): CPU per hand-off, and its share of each kind. */
function chainMachine(before, after, handoffs) {
  const busy = after.busy - before.busy;
  const idle = after.idle - before.idle;
  const steal = after.steal - before.steal;
  const all = busy + idle + steal || 1;
  const pct = (ticks) => Math.round((100 * ticks) / all);
  // USER_HZ is 100 on Linux: a tick is 10 ms.
  return { cpus: availableParallelism(), msPerHandoff: (busy * 10) / handoffs, busyPct: pct(busy), idlePct: pct(idle), stealPct: pct(steal) };
}

const TMPFS_MAGIC = 0x01021994;

/**
 * Where the commands stamp their clock: outside the run folders, so no waiter wakes for them, and in memory (/dev/shm)
 * where there is a tmpfs. The stamps are the bench's instrument, not the pipeline's: on the disk's file system two
 * file creations per step cost ~2.4 ms of CPU on this machine (ext4's inode allocator, perf), and the chain runs every
 * CPU flat out, so the instrument would slow the very hand-offs it times (docs/performance.md, "Row 8's CPU, traced whole").
 */
function stampFolder(dir) {
  try {
    if (statfsSync("/dev/shm").type === TMPFS_MAGIC) return mkdtempSync("/dev/shm/baton-bench-stamps-");
  } catch {
    // no /dev/shm: beside the run folders
  }
  const onDisk = join(dir, "stamps");
  mkdirSync(onDisk);
  return onDisk;
}

/** baton's one line when the kernel refuses it an inotify watch and it polls instead. */
function isPollWarning(stderr) {
  return /^baton: .*\bpolling\b/m.test(stderr);
}
