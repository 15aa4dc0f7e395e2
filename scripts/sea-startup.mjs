// Start-up of the bundle and of the standalone folder, side by side (docs/standalone.md): each variant runs
// `baton --version` and a step `baton -- /bin/true` N times, interleaved so that machine load hits all alike; prints
// the median and the fastest run (wall clock from spawn to exit, in a clean environment) and the mean CPU time of the
// run (user + system, all threads; from this process's children totals in /proc/self/stat, so less hit by other load).
//
// Usage: node scripts/sea-startup.mjs [N] [NAME=PATH ...]   (default: the bundle on this Node and dist/baton-linux-x64)
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

const TICK_MS = 10; // USER_HZ is 100 on Linux
function childrenCpuMs() {
  const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ");
  return (Number(fields[13]) + Number(fields[14])) * TICK_MS; // cutime, cstime
}

const [count, ...extra] = process.argv.slice(2);
const runs = Number(count ?? 50);
const variants = {
  [`dist/baton.cjs on Node ${process.versions.node}`]: [process.execPath, "dist/baton.cjs"],
  "dist/baton-linux-x64/baton": ["dist/baton-linux-x64/baton"],
  ...Object.fromEntries(extra.map((pair) => pair.split("=")).map(([name, path]) => [name, [path]])),
};
const cases = { "--version": ["--version"], "-- /bin/true": ["--", "/bin/true"] };
const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };

const times = new Map();
const cpu = new Map();
for (let i = 0; i < runs; i++) {
  for (const [name, command] of Object.entries(variants)) {
    for (const [label, args] of Object.entries(cases)) {
      const cpuBefore = childrenCpuMs();
      const start = process.hrtime.bigint();
      const result = spawnSync(command[0], [...command.slice(1), ...args], { env, stdio: "ignore" });
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      cpu.set(`${name}\t${label}`, (cpu.get(`${name}\t${label}`) ?? 0) + childrenCpuMs() - cpuBefore);
      if (result.status !== 0) throw new Error(`${name} ${label}: exit ${result.status ?? result.error}`);
      const key = `${name}\t${label}`;
      times.set(key, [...(times.get(key) ?? []), ms]);
    }
  }
}
console.log(`${runs} runs each, milliseconds: wall median / fastest, mean CPU`);
for (const [key, list] of times) {
  list.sort((a, b) => a - b);
  const [name, label] = key.split("\t");
  const median = list[list.length >> 1].toFixed(1).padStart(6);
  const meanCpu = (cpu.get(key) / runs).toFixed(1).padStart(6);
  console.log(`${name.padEnd(34)} ${label.padEnd(14)} ${median} / ${list[0].toFixed(1).padStart(5)}   ${meanCpu}`);
}
