// What the liveness lock (src/handoff/liveness-lock.ts, src/addon/liveness.c) costs a step, once: load the addon
// (dlopen), make the file locked before it has a name (O_TMPFILE, fcntl's write lock, the mark, linkat), rename it
// into place; and what one look at a held lock costs a waiter (open, F_OFD_GETLK, close). Each sample is a fresh Node
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
const mark = "baton liveness lock\\nlock: fcntl F_WRLCK\\n";
const t0 = process.hrtime.bigint();
const m = { exports: {} }; process.dlopen(m, addon);
const tl = process.hrtime.bigint();
const [fd, tmp] = m.exports.makeLiveness(dir + "/.out.baton-live." + process.pid.toString(16).padStart(16, "0") + ".tmp", mark);
if (fd < 0 || m.exports.placeLiveness(tmp, dir + "/out.baton-live", mark) !== 0) throw new Error("no lock");
const t1 = process.hrtime.bigint();
const r = fs.openSync(dir + "/out.baton-live", "r"); const held = m.exports.lockHeld(r) === 1; fs.closeSync(r);
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
console.log(`  taking the lock (O_TMPFILE + fcntl + mark + linkat + renameat2): ${median(holder).toFixed(3)} ms, once`);
console.log(`  a waiter looks at a held lock (open + F_OFD_GETLK + close): ${median(look).toFixed(3)} ms`);
