// What each library the design named (and baton does without) would add to every step's start-up: each is bundled
// by esbuild into a CommonJS file the way baton's own code is, and a fresh Node (clean environment) times loading
// that file (read, compile, evaluate, and the built-in modules it pulls in) against an empty bundle, interleaved.
// Timing the load inside the process leaves out the noise of starting one. README.md's Dependencies table cites it.
//
//   node scripts/bench/deps.mjs [ROUNDS]      (default 30; installs the pinned versions into .bench/deps first)
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { build } from "esbuild";

const ROOT = resolve(import.meta.dirname, "../..");
const DIR = join(ROOT, ".bench/deps");
const ROUNDS = Number(process.argv[2] ?? 30);
/** The versions the design considered; the import is what a step would load at start-up. */
const CANDIDATES = {
  "chokidar@5.0.0": `import { watch } from "chokidar"; globalThis.keep = watch;`,
  "execa@9.6.1": `import { execa } from "execa"; globalThis.keep = execa;`,
  "commander@14.0.3": `import { Command } from "commander"; globalThis.keep = Command;`,
  "signal-exit@4.1.0": `import { onExit } from "signal-exit"; globalThis.keep = onExit;`,
};

mkdirSync(DIR, { recursive: true });
if (!existsSync(join(DIR, "node_modules/.package-lock.json"))) {
  writeFileSync(join(DIR, "package.json"), "{}\n");
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--prefix", DIR, ...Object.keys(CANDIDATES)], { stdio: "inherit" });
}

async function bundle(name, source) {
  const entry = join(DIR, `${name}.entry.mjs`);
  writeFileSync(entry, source);
  const out = join(DIR, `${name}.cjs`);
  await build({ entryPoints: [entry], outfile: out, bundle: true, platform: "node", format: "cjs", target: "node20", logLevel: "error" });
  return out;
}

const files = { empty: await bundle("empty", "globalThis.keep = 0;") };
for (const [spec, source] of Object.entries(CANDIDATES)) files[spec] = await bundle(spec.split("@")[0], source);

// Loads the bundle given as argv[1] and prints how long that took, in ms.
const timer = join(DIR, "time-load.cjs");
writeFileSync(timer, `const t = process.hrtime.bigint(); require(process.argv[2]);
process.stdout.write(String(Number(process.hrtime.bigint() - t) / 1e6));
`);

const env = { PATH: "/usr/bin:/bin" }; // NODE_EXTRA_CA_CERTS and the like add to every start (docs/performance.md)
const samples = Object.fromEntries(Object.keys(files).map((k) => [k, []]));
for (let round = 0; round < ROUNDS + 2; round++) {
  for (const [name, file] of Object.entries(files)) {
    const run = spawnSync(process.execPath, [timer, file], { env, encoding: "utf8" });
    if (run.status !== 0) throw new Error(`${name}: exit ${run.status}: ${run.stderr}`);
    const ms = Number(run.stdout);
    if (round >= 2) samples[name].push(ms); // two warm-up rounds
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const base = median(samples.empty);
console.log(`node ${process.versions.node}, ${ROUNDS} interleaved rounds, load ${(await import("node:os")).loadavg()[0].toFixed(2)}`);
console.log(`empty bundle: ${base.toFixed(2)} ms to load`);
for (const name of Object.keys(CANDIDATES)) {
  console.log(`${name.padEnd(20)} +${(median(samples[name]) - base).toFixed(2)} ms`);
}
