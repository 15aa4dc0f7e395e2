// Row 9: an Argo container set's hand-off (docs/argo.md): container A's command exits -> container B's command starts,
// B depending on A. Each container is `baton emissary` with the files under a /var/run/argo of its own
// (BATON_ARGO_ROOT): B waits for ctr/a/exitcode, which A's baton writes once it has reaped its command. A's command
// is the stamp probe, which writes the clock and exits; B's is the stamp probe too.
// Reference: A under Argo's reaping (scripts/bench/argoreap.c: wait4(-1, WNOHANG) then a one-second sleep, the
// exitcode written in place), its command ending at a random phase of that second, as a real command does; B is
// baton in both, so the two figures differ only by A's reaping.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLEAN_ENV, expectExit, msBetween, now, readStamp, run, start, summarize, waitUntilWatching } from "./lib.mjs";

const TEMPLATE = JSON.stringify({
  name: "handoff",
  containerSet: { containers: [{ name: "a", image: "x" }, { name: "b", image: "x", dependencies: ["a"] }] },
});

function emissary(baton, root, name, command) {
  return start(baton, ["emissary", "--loglevel", "info", "--log-format", "text", "--gloglevel", "0", "--", ...command], {
    env: { ...CLEAN_ENV, BATON_ARGO_ROOT: root, ARGO_CONTAINER_NAME: name, ARGO_INCLUDE_SCRIPT_OUTPUT: "false" },
  });
}

/** One hand-off: B (baton) waiting on A's exitcode, then A started as `startA(root, stampFile)`; B.started - A.ended. */
async function handoff(ctx, startA) {
  const root = ctx.tempDir("argo-");
  writeFileSync(join(root, "template"), TEMPLATE);
  const b = emissary(ctx.baton, root, "b", [ctx.probes.stamp, join(root, "b-started")]);
  await waitUntilWatching([b]);
  const a = startA(root, join(root, "a-ended"));
  await expectExit(a, "container a");
  await expectExit(b, "container b");
  const ms = msBetween(readStamp(join(root, "a-ended")), readStamp(join(root, "b-started")));
  rmSync(root, { recursive: true, force: true });
  return ms;
}

export async function argoHandoff(ctx) {
  const { baton, probes, reps } = ctx;
  const samples = [];
  for (let i = 0; i < reps.argo; i++) {
    samples.push(await handoff(ctx, (root, stamp) => emissary(baton, root, "a", [probes.stamp, stamp])));
  }
  const argoSamples = [];
  for (let i = 0; i < reps.argoLoop; i++) {
    argoSamples.push(await handoff(ctx, (root, stamp) => {
      mkdirSync(join(root, "ctr/a"), { recursive: true, mode: 0o777 });
      const phase = (Math.random() * 0.999).toFixed(3);
      return start(probes.argoreap, [join(root, "ctr/a/exitcode"), "sh", "-c", `sleep ${phase}; exec "$0" "$1"`, probes.stamp, stamp]);
    }));
  }
  const stats = summarize(samples);
  return {
    id: "9",
    figure: "Argo container set hand-off (A's command exits -> B's command starts)",
    unit: "ms",
    stats,
    samples,
    target: "median <= 20 ms (Argo's loop: up to 1000 ms)",
    pass: stats.median <= 20,
    references: [{ label: "Argo's 1 s reaping loop", stats: summarize(argoSamples), samples: argoSamples }],
    note: "each container a `baton emissary` with its own /var/run/argo; the reference reaps A as Argo's osspecific.Wait does (scripts/bench/argoreap.c), B is baton in both",
  };
}

// Rows 9b and 9c: what a plain `baton emissary` costs beside a plain step (start-up and memory as for a Tekton step):
// `baton emissary -- /bin/true` as Argo's `main` container (the template in a file, no capture, no outputs) against
// `baton -- /bin/true`. 9b: spawn -> exit, interleaved. 9c: RssAnon of baton while its command runs (memprobe.c reads
// its parent's /proc/<pid>/status), interleaved.
function plainContainers(ctx) {
  const root = ctx.tempDir("argo-plain-");
  writeFileSync(join(root, "template"), JSON.stringify({ name: "main", container: { image: "x", command: ["/bin/true"] } }));
  const env = { ...CLEAN_ENV, BATON_ARGO_ROOT: root, ARGO_CONTAINER_NAME: "main", ARGO_INCLUDE_SCRIPT_OUTPUT: "false" };
  return {
    root,
    contenders: [
      { label: "baton emissary -- CMD", args: ["emissary", "--loglevel", "info", "--log-format", "text", "--gloglevel", "0", "--"], env },
      { label: "baton -- CMD", args: ["--"], env: CLEAN_ENV },
    ],
  };
}

export async function argoStartup(ctx) {
  const { baton, reps } = ctx;
  const { root, contenders } = plainContainers(ctx);
  const samples = new Map(contenders.map((c) => [c.label, []]));
  for (let r = -2; r < reps.startup; r++) {
    for (const c of contenders) {
      const t0 = now();
      await run(baton, [...c.args, "/bin/true"], { env: c.env });
      if (r >= 0) samples.get(c.label).push(msBetween(t0, now())); // the first two rounds warm the caches
    }
  }
  rmSync(root, { recursive: true, force: true });
  const [emissary, step] = contenders.map((c) => summarize(samples.get(c.label)));
  return {
    id: "9b",
    figure: "start-up: baton emissary -- /bin/true (Argo's main)",
    unit: "ms",
    stats: emissary,
    samples: samples.get(contenders[0].label),
    target: `<= 1.1 x baton -- /bin/true (${(1.1 * step.median).toFixed(1)} ms)`,
    pass: emissary.median <= 1.1 * step.median,
    references: [{ label: "baton -- /bin/true", stats: step, samples: samples.get(contenders[1].label) }],
    note: `spawn -> exit on dist/baton.cjs; ${(emissary.median / step.median).toFixed(2)} x a plain step`,
  };
}

export async function argoMemory(ctx) {
  const { baton, probes, reps } = ctx;
  const { root, contenders } = plainContainers(ctx);
  const samples = new Map(contenders.map((c) => [c.label, []]));
  for (let r = 0; r < reps.memory; r++) {
    for (const c of contenders) {
      await run(baton, [...c.args, probes.memprobe, join(root, "status")], { env: c.env });
      samples.get(c.label).push(Number(/RssAnon:\s+(\d+)/.exec(readFileSync(join(root, "status"), "utf8"))[1]) / 1024);
    }
  }
  rmSync(root, { recursive: true, force: true });
  const [emissary, step] = contenders.map((c) => summarize(samples.get(c.label)));
  return {
    id: "9c",
    figure: "memory: RssAnon of baton emissary while its command runs (Argo's main)",
    unit: "MiB",
    stats: emissary,
    samples: samples.get(contenders[0].label),
    target: `<= a plain step + 2 MiB (${(step.median + 2).toFixed(1)} MiB)`,
    pass: emissary.median <= step.median + 2,
    references: [{ label: "baton -- CMD", stats: step, samples: samples.get(contenders[1].label) }],
    note: "RssAnon from /proc/<baton>/status, read by its command (memprobe.c), on dist/baton.cjs",
  };
}
