// Row 9: an Argo container set's hand-off (docs/argo.md): container A's command exits -> container B's command starts,
// B depending on A. Each container is `baton emissary` with the files under a /var/run/argo of its own
// (BATON_ARGO_ROOT): B waits for ctr/a/exitcode, which A's baton writes once it has reaped its command. A's command
// is the stamp probe, which writes the clock and exits; B's is the stamp probe too.
// Reference: A under Argo's reaping (scripts/bench/argoreap.c: wait4(-1, WNOHANG) then a one-second sleep, the
// exitcode written in place), its command ending at a random phase of that second, as a real command does; B is
// baton in both, so the two figures differ only by A's reaping.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLEAN_ENV, expectExit, msBetween, readStamp, start, summarize, waitUntilWatching } from "./lib.mjs";

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
