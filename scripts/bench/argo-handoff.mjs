// Row 9: an Argo container set's hand-off (docs/argo.md): container A's command exits -> container B's command starts,
// B depending on A. Each container is `baton emissary`, or Argo's own `argoexec emissary` (`make peers`), the two
// sharing one /var/run/argo as a pod's containers do: B waits for ctr/a/exitcode, which A's emissary writes once it
// has reaped its command. A's command is the step probe (stepprobe.c: it stamps its start, and its exit just before
// `_exit`); B's is the stamp probe, which stamps its start.
// Argo's emissary reaps with `wait4(-1, WNOHANG)` and a one-second sleep between tries, and waits for a dependency by
// reading its exitcode once a second: so where it is A, its command runs a random 0-1 s (as real commands end at any
// phase of that second), and where it is B, A starts at a random phase of B's loop.
// Argo's emissary has no setting for /var/run/argo: with argoexec, the bench runs in a mount namespace of its own
// whose /var/run/argo is a tmpfs (peers.mjs), and every container of every row here uses it; without, baton's
// containers use a temp folder (BATON_ARGO_ROOT) and Argo's columns are skipped.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ARGO_ROOT } from "./peers.mjs";
import { skippedPeer, startAtRandomPhases } from "./tekton.mjs";
import {
  CLEAN_ENV, expectExit, msBetween, now, readStamp, run, sleep, start, summarize, waitUntilWatching, whenFileAppears,
} from "./lib.mjs";

const TEMPLATE = JSON.stringify({
  name: "handoff",
  containerSet: { containers: [{ name: "a", image: "x" }, { name: "b", image: "x", dependencies: ["a"] }] },
});

const EMISSARY_ARGS = ["emissary", "--loglevel", "info", "--log-format", "text", "--gloglevel", "0", "--"];

/**
 * A pod's /var/run/argo holding `template`, emptied first: the bench's own (its mount namespace) when Argo's emissary
 * can run, else a temp folder. env(name, who): the environment of container `name`, run by "baton" or "argo".
 */
function argoPod(ctx, template) {
  let root;
  if (ctx.peers.argoexec.path) {
    root = ARGO_ROOT;
    for (const entry of readdirSync(root)) rmSync(join(root, entry), { recursive: true, force: true });
  } else root = ctx.tempDir("argo-");
  writeFileSync(join(root, "template"), template);
  const env = (name, who) => ({
    ...CLEAN_ENV, ...(who === "baton" ? { BATON_ARGO_ROOT: root } : {}), ARGO_CONTAINER_NAME: name, ARGO_INCLUDE_SCRIPT_OUTPUT: "false",
  });
  return { root, env, done: () => root !== ARGO_ROOT && rmSync(root, { recursive: true, force: true }) };
}

/** Argo's `main` container with a plain template, for row 3: { args (before the command), env } for argoexec. */
export function argoMain(ctx) {
  const pod = argoPod(ctx, JSON.stringify({ name: "main", container: { image: "x", command: ["/bin/true"] } }));
  return { args: EMISSARY_ARGS, env: pod.env("main", "argo") };
}

/** Resolves once `path` exists (an emissary has made its ctr/NAME/); rejects if one of `children` ends first, or after 10 s. */
async function untilExists(path, children) {
  const deadline = Date.now() + 10_000;
  while (!existsSync(path)) {
    const ended = children.find((c) => c.exitCode !== null || c.signalCode !== null);
    if (ended) {
      const r = await ended.exited;
      throw new Error(`an emissary ended before ${path} was there: exit ${r.code ?? r.signal}\n${r.stderr}`);
    }
    if (Date.now() > deadline) throw new Error(`${path} did not appear within 10 s`);
    await sleep(5);
  }
}

const emissaryPath = (ctx, who) => (who === "baton" ? ctx.baton : ctx.peers.argoexec.path);

/** One hand-off, A run by `whoA` and B by `whoB` ("baton" or "argo"): B's command start - A's command exit, in ms. */
async function handoff(ctx, whoA, whoB) {
  const pod = argoPod(ctx, TEMPLATE);
  const f = (name) => join(pod.root, name);
  const b = start(emissaryPath(ctx, whoB), [...EMISSARY_ARGS, ctx.probes.stamp, f("b-started")], { env: pod.env("b", whoB) });
  if (whoB === "baton") await waitUntilWatching([b]);
  else {
    // Argo's B reads A's exitcode once a second from its start: A starts at a random phase of that loop.
    await untilExists(f("ctr/b"), [b]);
    await sleep(Math.random() * 999);
  }
  const commandMs = whoA === "argo" ? Math.floor(Math.random() * 1000) : 0;
  const a = start(emissaryPath(ctx, whoA), [...EMISSARY_ARGS, ctx.probes.stepprobe, f("a-started"), f("a-ended"), String(commandMs)], { env: pod.env("a", whoA) });
  await expectExit(a, `container a (${whoA})`);
  await expectExit(b, `container b (${whoB})`);
  const ms = msBetween(readStamp(f("a-ended")), readStamp(f("b-started")));
  pod.done();
  return ms;
}

export async function argoHandoff(ctx) {
  const { reps, peers } = ctx;
  const samples = [];
  for (let i = 0; i < reps.argo; i++) samples.push(await handoff(ctx, "baton", "baton"));
  const references = [];
  const pairs = [
    ["argo", "argo", "Argo's emissary, A and B"],
    ["argo", "baton", "Argo's emissary A, baton B"],
    ["baton", "argo", "baton A, Argo's emissary B"],
  ];
  if (!peers.argoexec.path) references.push(skippedPeer("Argo's emissary", peers.argoexec));
  else {
    const peerSamples = new Map(pairs.map(([, , label]) => [label, []]));
    for (let i = 0; i < reps.argoPeer; i++) {
      for (const [whoA, whoB, label] of pairs) peerSamples.get(label).push(await handoff(ctx, whoA, whoB));
    }
    for (const [label, s] of peerSamples) references.push({ label, stats: summarize(s), samples: s });
  }
  const stats = summarize(samples);
  return {
    id: "9",
    figure: "Argo container set hand-off (A's command exits -> B's command starts)",
    unit: "ms",
    stats,
    samples,
    target: "median <= 20 ms (Argo's loops: up to 1000 ms each)",
    pass: stats.median <= 20,
    references,
    note: `baton emissary in A and B, ${reps.argo} hand-offs; Argo's argoexec ${peers.argoexec.version ?? "(skipped)"} in A, B or both, ${reps.argoPeer} each, interleaved; one /var/run/argo (the bench's mount namespace); where Argo's emissary is A, A's command takes a random 0-1 s`,
  };
}

// Row 9d: a container set of 20 containers of /bin/true, each depending on the one before, as row 2 is for Tekton's
// steps: all started and waiting; ctr/c0/exitcode written by the bench (the container before the first) -> the last
// container's exitcode in place. Argo's emissaries are started at random moments within a second (random phases of
// their loops), as Tekton's are in row 2.
const CHAIN_CONTAINERS = 20;

async function containerChain(ctx, who) {
  const names = Array.from({ length: CHAIN_CONTAINERS + 1 }, (_, i) => `c${i}`);
  const containers = names.map((name, i) => ({ name, image: "x", ...(i > 0 ? { dependencies: [names[i - 1]] } : {}) }));
  const pod = argoPod(ctx, JSON.stringify({ name: "chain", containerSet: { containers } }));
  const startOne = (i) => start(emissaryPath(ctx, who), [...EMISSARY_ARGS, "/bin/true"], { env: pod.env(names[i + 1], who) });
  let steps;
  if (who === "baton") {
    steps = names.slice(1).map((_, i) => startOne(i));
    await waitUntilWatching(steps);
  } else steps = await startAtRandomPhases(CHAIN_CONTAINERS, startOne);
  const lastDir = join(pod.root, "ctr", names.at(-1));
  await untilExists(lastDir, steps);
  const last = whenFileAppears(join(lastDir, "exitcode"), lastDir, 120_000);
  const first = join(pod.root, "ctr/c0");
  mkdirSync(first, { recursive: true });
  const t0 = now();
  writeFileSync(`${first}/exitcode.tmp`, "0");
  renameSync(`${first}/exitcode.tmp`, `${first}/exitcode`);
  const ms = msBetween(t0, await last);
  await Promise.all(steps.map((c) => expectExit(c, `${who}'s emissary (chain)`)));
  pod.done();
  return ms;
}

export async function argoChain(ctx) {
  const { reps, peers } = ctx;
  const samples = [];
  for (let r = 0; r < reps.chain; r++) samples.push(await containerChain(ctx, "baton"));
  const references = [];
  if (!peers.argoexec.path) references.push(skippedPeer("Argo's emissary", peers.argoexec));
  else if (reps.chainPeer > 0) {
    const argo = [];
    for (let r = 0; r < reps.chainPeer; r++) argo.push(await containerChain(ctx, "argo"));
    references.push({ label: "Argo's emissary (1 s loops)", stats: summarize(argo), samples: argo });
  }
  const stats = summarize(samples);
  return {
    id: "9d",
    figure: `Argo container set: ${CHAIN_CONTAINERS}-container chain of /bin/true`,
    unit: "ms",
    stats,
    samples,
    target: "(info; row 2's 250 ms for Tekton's steps)",
    pass: null,
    references,
    note: "every container started and waiting, one /var/run/argo; the bench writes ctr/c0/exitcode -> the last container's exitcode seen; Argo's emissaries started at random moments within a second",
  };
}

// Rows 9b and 9c: what a plain `baton emissary` costs beside a plain step (start-up and memory as for a Tekton step),
// and beside Argo's own emissary: `emissary -- /bin/true` as Argo's `main` container (the template in a file, no
// capture, no outputs) against `baton -- /bin/true`. 9b: spawn -> exit, interleaved (Argo's emissary in fewer rounds:
// its reaping loop sleeps a second). 9c: RssAnon of the wrapper while its command runs (memprobe.c reads its parent's
// /proc/<pid>/status), interleaved.
function plainContainers(ctx) {
  const pod = argoPod(ctx, JSON.stringify({ name: "main", container: { image: "x", command: ["/bin/true"] } }));
  const contenders = [
    { label: "baton emissary -- CMD", cmd: ctx.baton, args: EMISSARY_ARGS, env: pod.env("main", "baton") },
    { label: "baton -- CMD", cmd: ctx.baton, args: ["--"], env: CLEAN_ENV },
  ];
  if (ctx.peers.argoexec.path) {
    contenders.push({ label: "Argo's emissary -- CMD", cmd: ctx.peers.argoexec.path, args: EMISSARY_ARGS, env: pod.env("main", "argo"), argo: true });
  }
  const skipped = ctx.peers.argoexec.path ? [] : [skippedPeer("Argo's emissary", ctx.peers.argoexec)];
  return { pod, contenders, skipped };
}

const refsOf = (contenders, samples, skipped) => [
  ...contenders.slice(1).map((c) => ({ label: c.label, stats: summarize(samples.get(c.label)), samples: samples.get(c.label) })),
  ...skipped,
];

export async function argoStartup(ctx) {
  const { reps } = ctx;
  const { pod, contenders, skipped } = plainContainers(ctx);
  const samples = new Map(contenders.map((c) => [c.label, []]));
  for (let r = -2; r < reps.startup; r++) {
    for (const c of contenders) {
      if (c.argo && r >= reps.startupArgo) continue;
      const t0 = now();
      await run(c.cmd, [...c.args, "/bin/true"], { env: c.env });
      if (r >= 0) samples.get(c.label).push(msBetween(t0, now())); // the first two rounds warm the caches
    }
  }
  pod.done();
  const emissary = summarize(samples.get(contenders[0].label));
  const step = summarize(samples.get(contenders[1].label));
  return {
    id: "9b",
    figure: "start-up: baton emissary -- /bin/true (Argo's main)",
    unit: "ms",
    stats: emissary,
    samples: samples.get(contenders[0].label),
    target: `<= 1.1 x baton -- /bin/true (${(1.1 * step.median).toFixed(1)} ms)`,
    pass: emissary.median <= 1.1 * step.median,
    references: refsOf(contenders, samples, skipped),
    note: `spawn -> exit on dist/baton.cjs; ${(emissary.median / step.median).toFixed(2)} x a plain step; Argo's emissary ${reps.startupArgo} rounds (its first wait4 comes before /bin/true has ended, then it sleeps 1 s)`,
  };
}

export async function argoMemory(ctx) {
  const { probes, reps } = ctx;
  const { pod, contenders, skipped } = plainContainers(ctx);
  const samples = new Map(contenders.map((c) => [c.label, []]));
  const status = join(ctx.tempDir("argo-mem-"), "status");
  for (let r = 0; r < reps.memory; r++) {
    for (const c of contenders) {
      if (c.argo && r >= Math.min(reps.memory, reps.startupArgo)) continue;
      await run(c.cmd, [...c.args, probes.memprobe, status], { env: c.env });
      samples.get(c.label).push(Number(/RssAnon:\s+(\d+)/.exec(readFileSync(status, "utf8"))[1]) / 1024);
    }
  }
  pod.done();
  const emissary = summarize(samples.get(contenders[0].label));
  const step = summarize(samples.get(contenders[1].label));
  return {
    id: "9c",
    figure: "memory: RssAnon of baton emissary while its command runs (Argo's main)",
    unit: "MiB",
    stats: emissary,
    samples: samples.get(contenders[0].label),
    target: `<= a plain step + 2 MiB (${(step.median + 2).toFixed(1)} MiB)`,
    pass: emissary.median <= step.median + 2,
    references: refsOf(contenders, samples, skipped),
    note: "RssAnon from /proc/<wrapper>/status, read by its command (memprobe.c), on dist/baton.cjs",
  };
}
