// The benchmark rows. Each takes the context built by scripts/bench.mjs and returns a row:
// { id, figure, unit, stats, samples, target, pass, references: [{ label, stats }], note, skipped }.
import { closeSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  expectExit, firstChildPid, msBetween, now, readStamp, run, sleep, start, summarize, waitForLine,
  waitUntilWatching, whenFileAppears,
} from "./lib.mjs";
import { argoMain } from "./argo-handoff.mjs";
import { skippedPeer, tektonChain, tektonHandoff, tektonWholeHandoff } from "./tekton.mjs";

const POST_CONTENT = '{"exitCode":0,"reason":"Completed"}\n';

/** Writes `path` the way a finishing step does (temp file + rename) and returns the time just before rename(2). */
function writePostFile(path) {
  const temp = `${path}.tmp-bench`;
  writeFileSync(temp, POST_CONTENT);
  const at = now();
  renameSync(temp, path);
  return at;
}

const TEKTON = "Tekton's entrypoint (1 s poll)";

// ---------------------------------------------------------------------------------------------------------
// 1. Handoff latency: step N's post file is in place -> step N+1's command starts, step N+1's baton already waiting.
export async function handoffLatency(ctx) {
  const { baton, probes, reps } = ctx;
  const samples = [];
  for (let i = 0; i < reps.handoff; i++) {
    const dir = ctx.tempDir("handoff-");
    const child = start(baton, ["--wait-file", join(dir, "post-1"), "--post-file", join(dir, "post-2"), "--", probes.stamp, join(dir, "started")]);
    await waitUntilWatching([child]);
    const posted = writePostFile(join(dir, "post-1"));
    await expectExit(child, "baton (handoff)");
    samples.push(msBetween(posted, readStamp(join(dir, "started"))));
    rmSync(dir, { recursive: true, force: true });
  }
  const stats = summarize(samples);

  // Reference: the same handoff to Tekton's entrypoint, waiters started at random phases of its 1 s poll.
  let reference;
  if (ctx.peers.tekton.path) {
    const tektonSamples = await tektonHandoff(ctx, reps.handoffTekton, writePostFile);
    reference = { label: TEKTON, stats: summarize(tektonSamples), samples: tektonSamples };
  } else reference = skippedPeer(TEKTON, ctx.peers.tekton);

  return {
    id: "1",
    figure: "handoff latency (post file -> next command)",
    unit: "ms",
    stats,
    samples,
    target: "median <= 5 ms, p95 <= 20 ms",
    pass: stats.median <= 5 && stats.p95 <= 20,
    references: [reference],
    note: "post file written by the bench (temp + rename, clock read just before rename); next step's baton already waiting; Tekton's entrypoints started at random phases",
  };
}

// 1b. The same handoff between two real batons: step N's command starts -> step N+1's command starts.
export async function handoffBetweenBatons(ctx) {
  const { baton, probes, reps } = ctx;
  const samples = [];
  for (let i = 0; i < reps.handoffPair; i++) {
    const dir = ctx.tempDir("pair-");
    const f = (name) => join(dir, name);
    const stepN = start(baton, ["--wait-file", f("go"), "--post-file", f("post-1"), "--", probes.stamp, f("started-1")]);
    const stepN1 = start(baton, ["--wait-file", f("post-1"), "--post-file", f("post-2"), "--", probes.stamp, f("started-2")]);
    await waitUntilWatching([stepN, stepN1]);
    writePostFile(f("go"));
    await Promise.all([expectExit(stepN, "baton (step N)"), expectExit(stepN1, "baton (step N+1)")]);
    samples.push(msBetween(readStamp(f("started-1")), readStamp(f("started-2"))));
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    id: "1b",
    figure: "handoff, command N start -> command N+1 start",
    unit: "ms",
    stats: summarize(samples),
    samples,
    target: "(info)",
    pass: null,
    references: [],
    note: "two real batons; includes step N's no-op command, its reaping and its post file write",
  };
}

// ---------------------------------------------------------------------------------------------------------
// 2. 20-step chain of /bin/true, all started at once: first wait file created -> last post file in place.
async function chainOnce(ctx, steps, startStep) {
  const dir = ctx.tempDir("chain-");
  const post = (i) => join(dir, `post-${i}`);
  const children = [];
  for (let i = 1; i <= steps; i++) children.push(startStep(post(i - 1), post(i)));
  return { dir, post, children };
}

export async function chain(ctx) {
  const { baton, reps } = ctx;
  const steps = 20;
  const samples = [];
  for (let r = 0; r < reps.chain; r++) {
    const { dir, post, children } = await chainOnce(ctx, steps, (wait, postFile) =>
      start(baton, ["--wait-file", wait, "--post-file", postFile, "--", "/bin/true"]));
    await waitUntilWatching(children);
    const last = whenFileAppears(post(steps), dir, 30_000);
    const t0 = now();
    closeSync(openSync(post(0), "w"));
    samples.push(msBetween(t0, await last));
    await Promise.all(children.map((c) => expectExit(c, "baton (chain step)")));
    rmSync(dir, { recursive: true, force: true });
  }

  // Reference: the same chain of Tekton's entrypoints (started at random phases), once: it takes ~10 s.
  const references = [];
  if (!ctx.peers.tekton.path) references.push(skippedPeer(TEKTON, ctx.peers.tekton));
  else if (reps.chainPeer > 0) {
    const tektonSamples = [];
    for (let r = 0; r < reps.chainPeer; r++) tektonSamples.push(await tektonChain(ctx, steps));
    references.push({ label: TEKTON, stats: summarize(tektonSamples), samples: tektonSamples });
  }
  const stats = summarize(samples);
  return {
    id: "2",
    figure: `${steps}-step chain of /bin/true`,
    unit: "ms",
    stats,
    samples,
    target: "<= 250 ms",
    pass: stats.median <= 250,
    references,
    note: "all steps started at once and waiting; first wait file created -> last post file seen; Tekton's entrypoints started at random moments within a second",
  };
}

// ---------------------------------------------------------------------------------------------------------
// 1c. The whole handoff, as a pipeline waits for it: in a chain of CHAIN_STEPS batons, all started at once and waiting,
// step N's command exits -> step N+1's command starts. Each command (stepprobe.c) stamps its start and, last thing,
// its exit; a C inotify watcher on the folder stamps each post file as it appears (exit -> post file).
const CHAIN_STEPS = 31;
// Tekton's chain for the reference: each hand-off waits for the next step's 1 s poll, so fewer steps.
const TEKTON_CHAIN_STEPS = 11;

export async function wholeHandoff(ctx, rt) {
  const { probes, reps } = ctx;
  const whole = [];
  const toPost = [];
  const postToStart = [];
  for (let r = 0; r < reps.wholeChain; r++) {
    const dir = ctx.tempDir("whole-");
    const f = (name) => join(dir, name);
    const watcher = start(probes.postwatch, [dir, `post-${CHAIN_STEPS}`], { stdio: ["ignore", "pipe", "pipe"] });
    let seenText = "";
    watcher.stdout.on("data", (chunk) => (seenText += chunk));
    await waitForLine(watcher, "ready");
    const steps = [];
    for (let i = 1; i <= CHAIN_STEPS; i++) {
      steps.push(start(rt.baton[0], [
        ...rt.baton.slice(1), "--wait-file", f(`post-${i - 1}`), "--post-file", f(`post-${i}`),
        "--", probes.stepprobe, f(`started-${i}`), f(`exited-${i}`),
      ]));
    }
    await waitUntilWatching(steps);
    writePostFile(f("post-0"));
    await Promise.all(steps.map((c) => expectExit(c, "baton (chain step)")));
    await expectExit(watcher, "post file watcher");
    const seen = new Map(seenText.trim().split("\n").map((l) => l.split(" ")).filter((w) => w.length === 2).map(([name, ns]) => [name, BigInt(ns)]));
    for (let i = 1; i < CHAIN_STEPS; i++) {
      const exited = readStamp(f(`exited-${i}`));
      const next = readStamp(f(`started-${i + 1}`));
      whole.push(msBetween(exited, next));
      const posted = seen.get(`post-${i}`);
      if (posted !== undefined) {
        toPost.push(msBetween(exited, posted));
        postToStart.push(msBetween(posted, next));
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
  const stats = summarize(whole);
  const post = summarize(toPost);
  // Reference: Tekton's entrypoints in a chain of their own, measured once and shown beside every runtime's row.
  const references = [];
  if (!ctx.peers.tekton.path) references.push(skippedPeer(TEKTON, ctx.peers.tekton));
  else if (reps.wholeChainTekton > 0) {
    const tekton = await ctx.once("1c-tekton", () => tektonWholeHandoff(ctx, TEKTON_CHAIN_STEPS, writePostFile));
    references.push(
      { label: `${TEKTON}: whole hand-off`, stats: tekton.whole, samples: tekton.samples.whole },
      { label: `${TEKTON}: exit -> post file seen`, stats: tekton.toPost, samples: tekton.samples.toPost },
      { label: `${TEKTON}: post file seen -> next command starts`, stats: tekton.postToStart, samples: tekton.samples.postToStart },
    );
  }
  return {
    id: "1c",
    figure: `whole handoff in a ${CHAIN_STEPS}-step chain (command N exits -> command N+1 starts), ${rt.label}`,
    runtime: rt.label,
    unit: "ms",
    stats,
    samples: whole,
    target: "median <= 5 ms; exit -> post file median <= 1 ms",
    pass: stats.median <= 5 && post.median <= 1,
    references: [
      { label: "exit -> post file seen", stats: post, samples: toPost },
      { label: "post file seen -> next command starts", stats: summarize(postToStart), samples: postToStart },
      ...references,
    ],
    note: `all steps started at once and waiting (one folder); exit stamped by the command just before _exit, post file by a C inotify watcher; Tekton's entrypoint: one chain of ${TEKTON_CHAIN_STEPS} started at random phases, measured once for every runtime's row`,
  };
}

// ---------------------------------------------------------------------------------------------------------
// 3. Start-up overhead: whole run of `baton -- /bin/true` on one runtime against that runtime's own `node -e 0`
// (and the reference tools), interleaved.
export async function startup(ctx, rt) {
  const { tools, reps, peers } = ctx;
  const dir = ctx.tempDir("startup-");
  const contenders = [
    { label: "baton -- /bin/true", cmd: rt.baton[0], args: [...rt.baton.slice(1), "--", "/bin/true"] },
    { label: "node -e 0", cmd: rt.node, args: ["-e", "0"] },
    { label: "/bin/true", cmd: "/bin/true", args: [] },
  ];
  const skippedRefs = [];
  if (tools.tini) contenders.push({ label: "tini -- /bin/true", cmd: tools.tini, args: ["-s", "--", "/bin/true"] });
  if (tools.dumbInit) contenders.push({ label: "dumb-init /bin/true", cmd: tools.dumbInit, args: ["/bin/true"] });
  // Tekton's entrypoint with what it needs to end well: a termination path and a metadata folder of the bench's.
  if (peers.tekton.path) {
    contenders.push({ label: "Tekton's entrypoint -- /bin/true", cmd: peers.tekton.path, args: ["-termination_path", join(dir, "termination"), "-step_metadata_dir", join(dir, "status"), "-entrypoint", "/bin/true", "--"] });
  } else skippedRefs.push(skippedPeer("Tekton's entrypoint -- /bin/true", peers.tekton));
  // Argo's emissary in the bench's mount namespace, with a plain template in its /var/run/argo. Its first wait4 comes
  // before /bin/true has ended, then it sleeps a second: so fewer rounds (reps.startupArgo).
  if (peers.argoexec.path) {
    const argo = argoMain(ctx);
    contenders.push({ label: "Argo's emissary -- /bin/true", cmd: peers.argoexec.path, args: [...argo.args, "/bin/true"], env: argo.env, rounds: reps.startupArgo });
  } else skippedRefs.push(skippedPeer("Argo's emissary -- /bin/true", peers.argoexec));
  const samples = new Map(contenders.map((c) => [c.label, []]));
  for (let r = -2; r < reps.startup; r++) {
    for (const c of contenders) {
      if (c.rounds !== undefined && r >= c.rounds) continue;
      const t0 = now();
      await run(c.cmd, c.args, { env: c.env });
      if (r >= 0) samples.get(c.label).push(msBetween(t0, now())); // the first two rounds warm the caches
    }
  }
  rmSync(dir, { recursive: true, force: true });
  const stats = summarize(samples.get(contenders[0].label));
  const node = summarize(samples.get("node -e 0"));
  return {
    id: "3",
    figure: `start-up: baton -- /bin/true, ${rt.label}`,
    runtime: rt.label,
    unit: "ms",
    stats,
    samples: samples.get(contenders[0].label),
    target: `<= 1.3 x node -e 0 (${fmtMs(1.3 * node.median)})`,
    pass: stats.median <= 1.3 * node.median,
    ratio: stats.median / node.median,
    references: [
      ...contenders.slice(1).map((c) => ({ label: c.label, stats: summarize(samples.get(c.label)), samples: samples.get(c.label) })),
      ...skippedRefs,
    ],
    note: `spawn -> exit, measured by the bench; ${(stats.median / node.median).toFixed(2)} x ${rt.label}'s node -e 0; Argo's emissary ${reps.startupArgo} rounds`,
  };
}

// ---------------------------------------------------------------------------------------------------------
// 3b. The unguarded window: spawn -> the step's liveness file in place, locked (POST.baton-live renamed into place,
// seen by the postwatch probe's inotify). A step killed inside it leaves a step waiting on its post file waiting for
// ever: nothing of it is there to be seen dead (docs/design.md "A step that dies"). Node's own start is its floor.
export async function unguardedWindow(ctx, rt) {
  const { probes, reps } = ctx;
  const baton = (args) => ({ cmd: rt.baton[0], args: [...rt.baton.slice(1), ...args] });
  // The floor: the same Node renaming a file into place in its first line.
  const first = 'const f=require("fs"),p=process.argv[1];f.writeFileSync(p+".tmp","");f.renameSync(p+".tmp",p+".baton-live")';
  const contenders = [
    { label: "--post-file POST -- /bin/true", start: (post) => baton(["--post-file", post, "--", "/bin/true"]) },
    {
      label: "Tekton's argv",
      start: (post) => baton(["-post_file", post, "-termination_path", `${post}.termination`, "-entrypoint", "/bin/true", "--"]),
    },
    { label: "node -e (a rename in its first line)", start: (post) => ({ cmd: rt.node, args: ["-e", first, post] }) },
  ];
  const samples = new Map(contenders.map((c) => [c.label, []]));
  for (let r = -2; r < reps.startup; r++) {
    for (const c of contenders) {
      const dir = ctx.tempDir("window-");
      const watcher = start(probes.postwatch, [dir, "out.baton-live"], { stdio: ["ignore", "pipe", "pipe"] });
      let seen = "";
      watcher.stdout.on("data", (chunk) => (seen += chunk));
      await waitForLine(watcher, "ready");
      const { cmd, args } = c.start(join(dir, "out"));
      const t0 = now();
      const step = start(cmd, args);
      await expectExit(watcher, "liveness file watcher");
      await expectExit(step, "baton (window)");
      const line = seen.trim().split("\n").find((l) => l.startsWith("out.baton-live "));
      if (r >= 0) samples.get(c.label).push(msBetween(t0, BigInt(line.split(" ")[1]))); // the first two rounds warm the caches
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const stats = summarize(samples.get(contenders[0].label));
  return {
    id: "3b",
    figure: `unguarded window: spawn -> POST.baton-live in place, ${rt.label}`,
    runtime: rt.label,
    unit: "ms",
    stats,
    samples: samples.get(contenders[0].label),
    target: "as short as Node's start allows (node -e)",
    pass: true,
    references: contenders.slice(1).map((c) => ({ label: c.label, stats: summarize(samples.get(c.label)), samples: samples.get(c.label) })),
    note: "a step killed before this leaves the next waiting for ever",
  };
}

// ---------------------------------------------------------------------------------------------------------
// 4. Signal forwarding latency as PID 1: kill(PID 1, SIGTERM) -> the command's handler runs.
export async function signalLatency(ctx) {
  const { baton, probes, tools, reps } = ctx;
  if (!ctx.root) return skipped("4", "signal forwarding latency (PID 1)", "needs root for unshare --pid");
  const contenders = [{ label: "baton", argv: [baton, "--"] }];
  if (tools.tini) contenders.push({ label: "tini", argv: [tools.tini, "--"] });
  const samples = new Map(contenders.map((c) => [c.label, []]));
  for (let r = 0; r < reps.signal; r++) {
    for (const c of contenders) {
      const dir = ctx.tempDir("signal-");
      const handled = join(dir, "handled");
      const ns = start("unshare", ["--pid", "--fork", "--mount-proc", ...c.argv, probes.sigprobe, handled], { stdio: ["ignore", "pipe", "pipe"] });
      await waitForLine(ns, "ready");
      const pid1 = firstChildPid(ns.pid);
      await sleep(20); // the wrapper is idle while its command runs
      const t0 = now();
      process.kill(pid1, "SIGTERM");
      await ns.exited;
      samples.get(c.label).push(msBetween(t0, readStamp(handled)));
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const stats = summarize(samples.get("baton"));
  return {
    id: "4",
    figure: "signal forwarding latency (PID 1)",
    unit: "ms",
    stats,
    samples: samples.get("baton"),
    target: "median <= 1 ms",
    pass: stats.median <= 1,
    references: contenders.slice(1).map((c) => ({ label: c.label, stats: summarize(samples.get(c.label)), samples: samples.get(c.label) })),
    note: "unshare --pid --fork --mount-proc; SIGTERM from the host to PID 1 -> the command's handler (static C)",
  };
}

// ---------------------------------------------------------------------------------------------------------
// 5. Memory: VmHWM of baton while its command runs (the command reads its parent's /proc status), and what a step
// really costs: RssAnon, the private pages (the file-backed pages of the Node binary are shared by every step that
// runs the same file), while the command runs and while baton waits for its turn.
const MEMORY_LINES = ["VmHWM", "VmRSS", "RssAnon", "RssFile"];
function memoryLines(text) {
  return Object.fromEntries(MEMORY_LINES.map((k) => [k, Number(new RegExp(`${k}:\\s*(\\d+)`).exec(text)?.[1] ?? NaN) / 1024]));
}

export async function memory(ctx, rt) {
  const { probes, tools, reps } = ctx;
  // `beforeArgs`: Tekton's entrypoint takes the command's path as -entrypoint and its arguments after `--`.
  const whileRunning = async (argv, beforeArgs = []) => {
    const dir = ctx.tempDir("mem-");
    await run(argv[0], [...argv.slice(1), probes.memprobe, ...beforeArgs, join(dir, "status")]);
    const lines = memoryLines(readFileSync(join(dir, "status"), "utf8"));
    rmSync(dir, { recursive: true, force: true });
    return lines;
  };
  const whileWaiting = async () => {
    const dir = ctx.tempDir("mem-wait-");
    const child = start(rt.baton[0], [...rt.baton.slice(1), "--wait-file", join(dir, "go"), "--", "/bin/true"]);
    await waitUntilWatching([child], { settleMs: 50 });
    const lines = memoryLines(readFileSync(`/proc/${child.pid}/status`, "utf8"));
    writePostFile(join(dir, "go"));
    await expectExit(child, "baton (memory, waiting)");
    rmSync(dir, { recursive: true, force: true });
    return lines;
  };
  const lifetimeMiB = async (argv) => {
    const r = await run(probes.maxrss, argv);
    return Number(/maxrss (\d+)/.exec(r.stderr)[1]) / 1024;
  };
  const series = { hwm: [], anon: [], waitHwm: [], waitAnon: [], tini: [], tiniAnon: [], tekton: [], tektonAnon: [], node: [] };
  const tekton = ctx.peers.tekton;
  for (let r = 0; r < reps.memory; r++) {
    const running = await whileRunning([...rt.baton, "--"]);
    series.hwm.push(running.VmHWM);
    series.anon.push(running.RssAnon);
    const waiting = await whileWaiting();
    series.waitHwm.push(waiting.VmHWM);
    series.waitAnon.push(waiting.RssAnon);
    if (tools.tini) {
      const t = await whileRunning([tools.tini, "-s", "--"]);
      series.tini.push(t.VmHWM);
      series.tiniAnon.push(t.RssAnon);
    }
    if (tekton.path) {
      const dir = ctx.tempDir("mem-tekton-");
      const t = await whileRunning([tekton.path, "-termination_path", join(dir, "termination"), "-step_metadata_dir", join(dir, "status"), "-entrypoint"], ["--"]);
      rmSync(dir, { recursive: true, force: true });
      series.tekton.push(t.VmHWM);
      series.tektonAnon.push(t.RssAnon);
    }
    series.node.push(await lifetimeMiB([rt.node, "-e", ""]));
  }
  const stats = summarize(series.hwm);
  const ref = (label, s) => (s.length > 0 ? [{ label, stats: summarize(s), samples: s }] : []);
  return {
    id: "5",
    figure: `memory: VmHWM while the command runs, ${rt.label}`,
    runtime: rt.label,
    unit: "MiB",
    stats,
    samples: series.hwm,
    target: "<= 48 MiB",
    pass: stats.median <= 48,
    references: [
      ...ref("RssAnon (private) while the command runs", series.anon),
      ...ref("waiting, 50 ms in: VmHWM", series.waitHwm),
      ...ref("waiting, 50 ms in: RssAnon", series.waitAnon),
      ...ref("tini VmHWM", series.tini),
      ...ref("tini RssAnon", series.tiniAnon),
      ...(tekton.path ? [] : [skippedPeer("Tekton's entrypoint", tekton)]),
      ...ref("Tekton's entrypoint VmHWM", series.tekton),
      ...ref("Tekton's entrypoint RssAnon", series.tektonAnon),
      ...ref("node -e '' maxrss", series.node),
    ],
    note: "VmHWM/RssAnon from /proc/PID/status: read by the command while it runs, by the bench 50 ms into baton's wait (before the trim of a longer wait: row 8); node -e '' is wait4's ru_maxrss",
  };
}

// ---------------------------------------------------------------------------------------------------------
// 6. Output capture throughput: 200 MiB through `baton --stdout-path FILE` (stdout to /dev/null) against tee.
export async function outputCapture(ctx, rt) {
  const { probes, reps } = ctx;
  const figure = `output capture, 200 MiB (--stdout-path), ${rt.label}`;
  const probeDir = ctx.tempDir("capture-probe-");
  const probe = await start(rt.baton[0], [...rt.baton.slice(1), "--stdout-path", join(probeDir, "out.log"), "--", "/bin/true"]).exited;
  rmSync(probeDir, { recursive: true, force: true });
  if (probe.code === 2) return skipped("6", figure, "not available yet: this baton rejects --stdout-path (usage error)");
  if (probe.code !== 0) throw new Error(`baton --stdout-path FILE -- /bin/true: exit ${probe.code}\n${probe.stderr}`);
  const mib = 200;
  const devNull = openSync("/dev/null", "w");
  const series = { baton: [], tee: [] };
  try {
    for (let r = 0; r < reps.capture; r++) {
      for (const label of ["baton", "tee"]) {
        const dir = ctx.tempDir("capture-");
        const file = join(dir, "out.log");
        const [cmd, args] = label === "baton"
          ? [rt.baton[0], [...rt.baton.slice(1), "--stdout-path", file, "--", probes.gen, String(mib)]]
          : ["sh", ["-c", `"$0" ${mib} | tee "$1" > /dev/null`, probes.gen, file]];
        const t0 = now();
        await run(cmd, args, { stdio: ["ignore", devNull, "pipe"] });
        series[label].push(mib / (msBetween(t0, now()) / 1000));
        const size = readFileSync(file).length;
        if (size !== mib * 2 ** 20) throw new Error(`${label} captured ${size} bytes, expected ${mib * 2 ** 20}`);
        rmSync(dir, { recursive: true, force: true });
      }
    }
  } finally {
    closeSync(devNull);
  }
  // Throughput: higher is better, so the bad tail is the 5th percentile.
  const throughput = (s) => {
    const sorted = [...s].sort((a, b) => a - b);
    return { ...summarize(s), p95: sorted[Math.max(0, Math.ceil(0.05 * sorted.length) - 1)] };
  };
  const stats = throughput(series.baton);
  const tee = throughput(series.tee);
  return {
    id: "6",
    figure,
    runtime: rt.label,
    unit: "MiB/s",
    stats,
    samples: series.baton,
    target: `>= 0.8 x tee (${(0.8 * tee.median).toFixed(0)} MiB/s)`,
    pass: stats.median >= 0.8 * tee.median,
    references: [{ label: "gen | tee FILE > /dev/null", stats: tee, samples: series.tee }],
    note: "p95 column is the slow tail (5th percentile of throughput)",
  };
}

// ---------------------------------------------------------------------------------------------------------
// 7. The start-up window in which a fresh PID 1 loses SIGTERM: SIGTERM t ms after execve, t = 0..40 ms.
// Before Node has run baton's first line, SIGTERM meets either no handler (PID 1 ignores it) or Node's own early
// handler, which re-raises it with the default action (ignored again): the command then runs to its end.
export async function startupSignalWindow(ctx) {
  const { baton, probes, tools, reps } = ctx;
  const figure = "SIGTERM lost after exec of PID 1 (window)";
  if (!ctx.root) return skipped("7", figure, "needs root for a PID namespace");
  const SLEEP = ["/bin/sleep", "0.2"]; // long enough to outlast any delay swept; a lost signal shows as exit 0
  const runOnce = async (argv, ms) => {
    const child = start(probes.pid1, [String(Math.round(ms * 1000)), "--", ...argv], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    child.stdout.on("data", (c) => (stdout += c));
    await expectExit(child, "pid1");
    const [status, elapsed] = stdout.trim().split(" ").map(Number);
    return { ms, status, elapsedMs: elapsed, lost: status === 0 };
  };
  // Sweeps the delays (shuffled in each round, so a change in load does not line up with t), and goes on past
  // the last one while a signal is still lost there (a busy machine starts Node more slowly): 5 ms steps, 10 ms
  // past 60 ms, up to 200 ms.
  const sweep = async (argv, delays, rounds) => {
    const runs = [];
    const measure = async (list) => {
      for (let r = 0; r < rounds; r++) for (const ms of shuffle(list)) runs.push(await runOnce(argv, ms));
    };
    await measure(delays);
    const lastLost = () => Math.max(-1, ...runs.filter((x) => x.lost).map((x) => x.ms));
    while (lastLost() === Math.max(...delays) && delays.at(-1) < 200) {
      const step = delays.at(-1) >= 60 ? 10 : 5;
      const more = [delays.at(-1) + step, delays.at(-1) + 2 * step];
      delays = [...delays, ...more];
      await measure(more);
    }
    const lost = lastLost();
    const handled = runs.filter((x) => !x.lost).map((x) => x.ms);
    return {
      delays,
      runs,
      lastLost: lost < 0 ? null : lost,
      firstHandled: handled.length ? Math.min(...handled) : null,
      safeFrom: lost < 0 ? delays[0] : Math.min(...delays.filter((d) => d > lost)),
      profile: delays.map((ms) => {
        const at = runs.filter((x) => x.ms === ms);
        return `${ms}:${at.filter((x) => !x.lost).length}/${at.length}`;
      }).join(" "),
    };
  };
  const describe = (w) => w.lastLost === null
    ? `never lost (t >= ${w.delays[0]} ms)`
    : `lost up to ${w.lastLost} ms, first handled at ${w.firstHandled} ms, always from ${w.safeFrom} ms`;

  const batonWindow = await sweep([baton, "--", ...SLEEP], Array.from({ length: 21 }, (_, i) => i * 2), reps.window);
  const references = [];
  // The floor for any Node program: a script whose first line is its SIGTERM handler.
  const nodeFloor = await sweep(["node", "-e", "process.on('SIGTERM',()=>process.exit(143));setTimeout(()=>{},200)"],
    Array.from({ length: 11 }, (_, i) => i * 4), Math.max(1, reps.window - 1));
  references.push({ label: "node, handler on its first line", window: nodeFloor, text: describe(nodeFloor) });
  if (tools.tini) {
    const tiniWindow = await sweep([tools.tini, "--", ...SLEEP], [0, 0.5, 1, 2, 4], reps.window);
    references.push({ label: "tini", window: tiniWindow, text: describe(tiniWindow) });
  }
  return {
    id: "7",
    figure,
    unit: "ms",
    window: batonWindow,
    text: describe(batonWindow),
    profile: batonWindow.profile,
    target: "(measured, stated in docs/performance.md)",
    pass: null,
    references,
    note: `SIGTERM t ms after execve (${reps.window} runs per t); lost = PID 1 ignored it and the command ran to its end`,
  };
}

function shuffle(list) {
  const a = [...list];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

function skipped(id, figure, reason) {
  return { id, figure, skipped: reason, target: "", pass: null, references: [] };
}

export function fmtMs(ms) {
  if (ms >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms >= 100) return `${ms.toFixed(0)} ms`;
  if (ms >= 10) return `${ms.toFixed(1)} ms`;
  if (ms >= 1) return `${ms.toFixed(2)} ms`;
  return `${ms.toFixed(3)} ms`;
}
