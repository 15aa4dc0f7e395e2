// What the liveness lock (src/handoff/liveness-lock.ts) costs a step, once: load the addon (dlopen), open, flock, rename; and
// what one look at a held lock costs a waiter (open, flock LOCK_SH|LOCK_NB, close). Each sample is a fresh Node
// process with a clean environment, as a step starts. Usage: node scripts/bench/liveness-cost.mjs [runs]
import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const addon = resolve(import.meta.dirname, "../../dist/baton-reaper.node");
const runs = Number(process.argv[2] ?? 21);
const dir = mkdtempSync(join(tmpdir(), "baton-lock-"));
const probe = `
const fs = require("fs"); const [addon, dir] = process.argv.slice(1);
const t0 = process.hrtime.bigint();
const m = { exports: {} }; process.dlopen(m, addon);
const tl = process.hrtime.bigint();
const tmp = dir + "/.out.lock." + process.pid + ".0.tmp";
const fd = fs.openSync(tmp, "w", 0o644); m.exports.flock(fd, 2 | 4); fs.renameSync(tmp, dir + "/out.lock");
const t1 = process.hrtime.bigint();
const r = fs.openSync(dir + "/out.lock", "r"); const held = m.exports.flock(r, 1 | 4) !== 0; fs.closeSync(r);
const t2 = process.hrtime.bigint();
if (!held) throw new Error("the lock was not held");
console.log(Number(tl - t0) / 1e6, Number(t1 - tl) / 1e6, Number(t2 - t1) / 1e6);`;
const load = [];
const holder = [];
const look = [];
for (let i = 0; i < runs; i++) {
  const out = execFileSync(process.execPath, ["-e", probe, addon, dir], { env: { PATH: "/usr/bin:/bin" }, encoding: "utf8" });
  const [d, h, l] = out.trim().split(" ").map(Number);
  load.push(d);
  holder.push(h);
  look.push(l);
}
const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`liveness lock, median of ${runs} fresh processes (Node ${process.versions.node}):`);
console.log(`  loading the addon (dlopen; as PID 1 the reaper loads it anyway): ${median(load).toFixed(3)} ms, once`);
console.log(`  taking the lock (open + flock + rename): ${median(holder).toFixed(3)} ms, once`);
console.log(`  a waiter looks at a held lock (open + flock + close): ${median(look).toFixed(3)} ms, every 500 ms`);
