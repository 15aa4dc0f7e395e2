// 10. What tracing costs a step (docs/tracing.md): `baton --post-file P -- memprobe FILE` with tracing off, exporting
// to a file (BATON_TRACES_DIR) and exporting to an OTLP/HTTP collector on 127.0.0.1 (a sink in the bench's process
// that answers 200 at once), interleaved. Spawn -> exit (the export included: it is the last thing baton does), and
// RssAnon while the command runs, read by the command (the trace chunk is loaded before the command starts).
import { readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { CLEAN_ENV, msBetween, now, run, summarize } from "./lib.mjs";

export async function tracingCost(ctx, rt) {
  const { probes, reps } = ctx;
  let received = 0;
  const sink = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      received++;
      response.writeHead(200).end();
    });
  });
  await new Promise((resolve) => sink.listen(0, "127.0.0.1", resolve));
  const endpoint = `http://127.0.0.1:${sink.address().port}`;
  const folder = ctx.tempDir("traces-");
  const ways = [
    { label: "off", env: CLEAN_ENV },
    { label: "to a file", env: { ...CLEAN_ENV, BATON_TRACES_DIR: folder } },
    { label: "to an HTTP collector", env: { ...CLEAN_ENV, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint } },
  ];
  const time = new Map(ways.map((w) => [w.label, []]));
  const anon = new Map(ways.map((w) => [w.label, []]));
  for (let r = -2; r < reps.startup; r++) {
    for (const way of ways) {
      const dir = ctx.tempDir("tracing-");
      const t0 = now();
      await run(rt.baton[0], [...rt.baton.slice(1), "--post-file", join(dir, "out"), "--", probes.memprobe, join(dir, "status")], { env: way.env });
      const ms = msBetween(t0, now());
      if (r >= 0) {
        time.get(way.label).push(ms);
        anon.get(way.label).push(Number(/RssAnon:\s*(\d+)/.exec(readFileSync(join(dir, "status"), "utf8"))[1]) / 1024);
      }
      rmSync(dir, { recursive: true, force: true });
    }
  }
  await new Promise((resolve) => sink.close(resolve));
  rmSync(folder, { recursive: true, force: true });
  if (received < reps.startup) throw new Error(`row 10: the collector received ${received} exports of ${reps.startup + 2}`);
  const stats = summarize(time.get("off"));
  const ref = (label, unit, samples) => ({ label, unit, stats: summarize(samples), samples });
  return {
    id: "10",
    figure: `tracing: start-up, baton --post-file P -- CMD, tracing off, ${rt.label}`,
    runtime: rt.label,
    unit: "ms",
    stats,
    samples: time.get("off"),
    target: "(info; off is row 3 with a post file)",
    references: [
      ref("start-up, tracing to a file", "ms", time.get("to a file")),
      ref("start-up, tracing to an HTTP collector", "ms", time.get("to an HTTP collector")),
      ref("RssAnon while the command runs, tracing off", "MiB", anon.get("off")),
      ref("RssAnon while the command runs, tracing to a file", "MiB", anon.get("to a file")),
      ref("RssAnon while the command runs, tracing to an HTTP collector", "MiB", anon.get("to an HTTP collector")),
    ],
    note: "spawn -> exit, the export included; RssAnon read by the command; the three interleaved",
  };
}
