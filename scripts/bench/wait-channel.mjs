// The hand-off channels weighed for docs/design.md "Waiting": how long from the writer's act to the waiter's wake-up,
// what the writer pays to open its end, and what a waiter holds while it waits. Each channel is two fresh processes:
//   flock    the writer holds flock(LOCK_EX) on a file and closes it; the waiter blocks in flock(LOCK_SH) in a thread of
//            baton's addon (dist/baton-reaper.node), as baton waits
//   socket   the writer listens on a Unix socket beside the post file and exits; the waiter, connected, sees the end
//   inotify  the writer renames a file into the folder; the waiter has fs.watch on the folder
// Each trial stamps CLOCK_MONOTONIC (process.hrtime, shared by every process) at the writer's act and at the waiter's
// wake-up. Usage: node scripts/bench/wait-channel.mjs [trials] (needs `make build`).
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const trials = Number(process.argv[2] ?? 30);
const addonPath = resolve(import.meta.dirname, "../../dist/baton-reaper.node");

const WAITER = {
  flock: `
    const fs = require("fs"); const m = { exports: {} }; process.dlopen(m, ADDON);
    const fd = fs.openSync(DIR + "/live", "r");
    m.exports.waitUnlocked(fd, () => setImmediate(() => { console.log(String(process.hrtime.bigint())); process.exit(0); }));
    console.log("ready");`,
  socket: `
    const c = require("net").connect(DIR + "/sock");
    c.on("connect", () => console.log("ready"));
    c.on("close", () => { console.log(String(process.hrtime.bigint())); process.exit(0); });
    c.on("error", () => {});`,
  inotify: `
    const fs = require("fs");
    fs.watch(DIR, () => { if (fs.existsSync(DIR + "/post")) { console.log(String(process.hrtime.bigint())); process.exit(0); } });
    console.log("ready");`,
};
const WRITER = {
  flock: `
    const t0 = process.hrtime.bigint();
    const fs = require("fs"); const m = { exports: {} }; process.dlopen(m, ADDON);
    const fd = fs.openSync(DIR + "/live", "w"); m.exports.flock(fd, 2 | 4);
    console.log("open " + (process.hrtime.bigint() - t0));
    process.stdin.once("data", () => { const t = process.hrtime.bigint(); fs.closeSync(fd); console.log("act " + t); setTimeout(() => {}, 200); });`,
  socket: `
    const t0 = process.hrtime.bigint();
    const s = require("net").createServer((c) => { conns.push(c); }).listen(DIR + "/sock", () => {
      console.log("open " + (process.hrtime.bigint() - t0));
    });
    const conns = [];
    process.stdin.once("data", () => { const t = process.hrtime.bigint(); for (const c of conns) c.destroy(); console.log("act " + t); setTimeout(() => {}, 200); });`,
  inotify: `
    const fs = require("fs");
    console.log("open 0");
    process.stdin.once("data", () => { fs.writeFileSync(DIR + "/.post.tmp", "{}"); const t = process.hrtime.bigint(); fs.renameSync(DIR + "/.post.tmp", DIR + "/post"); console.log("act " + t); });`,
};

function run(code, dir) {
  const child = spawn(process.execPath, ["-e", `const ADDON = ${JSON.stringify(addonPath)}, DIR = ${JSON.stringify(dir)};\n${code}`], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = [];
  let waiting = [];
  let buffer = "";
  child.stdout.setEncoding("utf8").on("data", (d) => {
    buffer += d;
    for (let i; (i = buffer.indexOf("\n")) >= 0; buffer = buffer.slice(i + 1)) {
      lines.push(buffer.slice(0, i));
      const woken = waiting;
      waiting = [];
      for (const w of woken) w();
    }
  });
  const line = (predicate) =>
    new Promise((done) => {
      const check = () => {
        const found = lines.find(predicate);
        if (found !== undefined) done(found);
        else waiting.push(check);
      };
      check();
    });
  return { child, line };
}

function rssAnonKiB(pid) {
  return Number(/RssAnon:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
}

async function trial(channel) {
  const dir = mkdtempSync(join(tmpdir(), "channel-"));
  const writer = run(WRITER[channel], dir);
  const opened = Number((await writer.line((l) => l.startsWith("open "))).slice(5)) / 1e6;
  const waiter = run(WAITER[channel], dir);
  await waiter.line((l) => l === "ready");
  await new Promise((r) => setTimeout(r, 50));
  const rss = rssAnonKiB(waiter.child.pid);
  writer.child.stdin.write("go\n");
  const act = BigInt((await writer.line((l) => l.startsWith("act "))).slice(4));
  const woke = BigInt(await waiter.line((l) => /^\d+$/.test(l)));
  writer.child.kill();
  return { wake: Number(woke - act) / 1e6, opened, rss };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(`hand-off channels, medians of ${trials} trials (Node ${process.versions.node}):`);
for (const channel of ["flock", "socket", "inotify"]) {
  const results = [];
  for (let i = 0; i < trials; i++) results.push(await trial(channel));
  console.log(
    `  ${channel.padEnd(8)} act -> waiter awake ${median(results.map((r) => r.wake)).toFixed(3)} ms; ` +
      `writer opens its end ${median(results.map((r) => r.opened)).toFixed(3)} ms; waiter RssAnon ${median(results.map((r) => r.rss))} KiB`,
  );
}
