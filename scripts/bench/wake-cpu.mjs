// The CPU a waiting baton spends from its wake-up to its end: the wake, the command's spawn (the command is /bin/true,
// whose own CPU is counted too), the reaping, the post file and the exit. A chain of steps on a busy node pays it at
// every hand-off (row 8's "machine over the chain"). The baton waits WAIT_MS first, past its trim (TRIM_AFTER_MS); its
// CPU before the wake is its threads' schedstat, its whole life's is wait4's rusage (scripts/bench/maxrss.c).
// Each --bundle FILE is measured on each pinned Node, interleaved round by round (before/after figures).
//   node scripts/bench/wake-cpu.mjs [--runtimes 20,22,24] [--bundle FILE]... [--rounds 12]
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { compileProbes } from "./setup.mjs";
import { cpuTime, firstChildPid, sleep, start, summarize } from "./lib.mjs";
import { findRuntimes } from "./runtimes.mjs";

const ROOT = resolve(import.meta.dirname, "../..");
const args = process.argv.slice(2);
const values = (name) => args.flatMap((a, i) => (a === name ? [args[i + 1]] : []));
const rounds = Number(values("--rounds")[0] ?? 12);
const bundles = values("--bundle").map((b) => resolve(b));
const runtimeKeys = values("--runtimes")[0]?.split(",") ?? ["20", "22", "24"];
const WAIT_MS = 2000;

const log = (m) => process.stderr.write(`${m}\n`);
const probes = compileProbes(join(ROOT, ".bench/bin"));
const dir = mkdtempSync(join(tmpdir(), "baton-wake-cpu-"));
try {
  const cases = (bundles.length > 0 ? bundles : [join(ROOT, "dist/baton.cjs")]).flatMap((bundle) =>
    findRuntimes(ROOT, { only: runtimeKeys, bundle, log }).map((rt) => ({ label: `${rt.label} ${bundle}`, rt, ms: [] })));
  for (let round = 0; round < rounds; round++) {
    for (const c of round % 2 === 0 ? cases : [...cases].reverse()) c.ms.push(await wakeCpuMs(c.rt));
  }
  for (const c of cases) {
    const s = summarize(c.ms);
    console.log(`${c.label}: CPU from wake-up to exit, median ${s.median.toFixed(2)} ms (min ${s.min.toFixed(2)}, max ${s.max.toFixed(2)}, ${s.n} runs)`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

async function wakeCpuMs(rt) {
  const go = join(dir, "go");
  const post = join(dir, "post");
  rmSync(go, { force: true });
  rmSync(post, { force: true });
  const child = start(probes.maxrss, [...rt.baton, "--wait-file", go, "--post-file", post, "--", "/bin/true"]);
  await sleep(WAIT_MS);
  const before = cpuTime(firstChildPid(child.pid)).ns / 1e6;
  writeFileSync(go, "");
  const { stderr } = await child.exited;
  const total = Number(/cpu_us (\d+)/.exec(stderr)?.[1] ?? NaN) / 1000;
  if (!Number.isFinite(total)) throw new Error(`wake-cpu: no CPU figure from maxrss:\n${stderr}`);
  return total - before;
}
