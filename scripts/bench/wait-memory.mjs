// What a waiting baton holds beyond an idle `node`: RssAnon of COUNT batons waiting for a file that never comes,
// against COUNT idle `node -e 'setInterval(()=>{},1e9)'` of the same Node, started together, read once every event
// loop is idle (and 1.5 s more). --heap adds V8's heap spaces (resident) of both, read by a preload (not for the
// standalone build, which takes no -r). Each --bundle FILE is measured on the pinned Nodes (before/after figures).
//   node scripts/bench/wait-memory.mjs [--runtimes 20,22,24,sea] [--bundle FILE]... [--count 5] [--heap]
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { sleep, start, statusKiB, summarize, waitUntilIdle } from "./lib.mjs";
import { findRuntimes } from "./runtimes.mjs";

const ROOT = resolve(import.meta.dirname, "../..");
const args = process.argv.slice(2);
const values = (name) => args.flatMap((a, i) => (a === name ? [args[i + 1]] : []));
const count = Number(values("--count")[0] ?? 5);
const heap = args.includes("--heap");
const bundles = values("--bundle").map((b) => resolve(b));
const runtimeKeys = values("--runtimes")[0]?.split(",");

const HEAP_PRELOAD = `
const { getHeapSpaceStatistics } = require("v8");
setTimeout(() => {
  const spaces = Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, s.physical_space_size >> 10]));
  require("fs").writeFileSync(process.env.HEAP_OUT, JSON.stringify(spaces));
}, 1000).unref();`;

const dir = mkdtempSync(join(tmpdir(), "baton-wait-memory-"));
const preload = join(dir, "heap.js");
writeFileSync(preload, HEAP_PRELOAD);
const log = (m) => process.stderr.write(`${m}\n`);

async function measure(rt, label) {
  const withHeap = heap && rt.key !== "sea";
  const env = (name) => ({ PATH: "/usr/local/bin:/usr/bin:/bin", ...(withHeap ? { HEAP_OUT: join(dir, name) } : {}) });
  const pre = withHeap ? ["-r", preload] : [];
  const batons = [];
  const nodes = [];
  for (let k = 0; k < count; k++) {
    const argv = rt.key === "sea" ? rt.baton : [rt.baton[0], ...pre, ...rt.baton.slice(1)];
    batons.push(start(argv[0], [...argv.slice(1), "--wait-file", join(dir, "never"), "--", "/bin/true"], { env: env(`baton-${k}`) }));
    nodes.push(start(rt.node, [...pre, "-e", "setInterval(() => {}, 1e9)"], { env: env(`node-${k}`) }));
  }
  await waitUntilIdle([...batons, ...nodes]);
  await sleep(1500);
  const rss = (list) => summarize(list.map((c) => statusKiB(c.pid, "RssAnon") / 1024)).median;
  const result = { label, baton: rss(batons), node: rss(nodes) };
  if (withHeap) {
    const spaces = (prefix) => JSON.parse(readFileSync(join(dir, `${prefix}-0`), "utf8"));
    result.heap = { baton: spaces("baton"), node: spaces("node") };
  }
  for (const c of [...batons, ...nodes]) c.kill("SIGKILL");
  await Promise.allSettled([...batons, ...nodes].map((c) => c.exited));
  return result;
}

try {
  const lines = [];
  for (const bundle of bundles.length > 0 ? bundles : [undefined]) {
    const runtimes = findRuntimes(ROOT, { only: runtimeKeys, bundle, log }).filter((rt) => !(bundle && rt.key === "sea" && bundles.length > 1));
    for (const rt of runtimes) {
      const r = await measure(rt, `${rt.label}${bundle && rt.key !== "sea" ? ` ${bundle}` : ""}`);
      lines.push(`${r.label}: RssAnon waiting ${r.baton.toFixed(2)} MiB, idle node ${r.node.toFixed(2)} MiB: +${(r.baton - r.node).toFixed(2)} MiB (medians of ${count})`);
      if (r.heap) {
        for (const space of Object.keys(r.heap.baton)) {
          const [b, n] = [r.heap.baton[space], r.heap.node[space]];
          if (b || n) lines.push(`  ${space}: ${b} KiB, idle node ${n} KiB`);
        }
      }
      log(lines.at(-1));
    }
  }
  process.stdout.write(`${lines.join("\n")}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
