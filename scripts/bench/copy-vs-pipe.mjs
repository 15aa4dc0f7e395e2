// The output copy (src/run/output-tee.ts) against Node's own pipe(), on the Node that runs this script: a child
// writes MiB of output to a pipe; it is copied to a file and to fd 1 (point it at /dev/null), both as WriteStreams by
// descriptor, as baton does. Prints MiB/s per way, best and median of N interleaved runs, and the CPU time used. A
// third way, `sync`, writes both with writeSync on the main thread: what the thread pool's hand-offs cost the copy
// (docs/performance.md, row 6; baton does not block its main thread on a write).
//   node scripts/bench/copy-vs-pipe.mjs GEN [MIB=200] [N=5] > /dev/null   (GEN: scripts/bench/gen.c, built by make bench)
import { spawn } from "node:child_process";
import { createWriteStream, mkdtempSync, openSync, rmSync, statSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [gen, mibText = "200", runsText = "5"] = process.argv.slice(2);
const mib = Number(mibText);
const QUEUE_LIMIT = 1024 * 1024;

function copyLoop(source, sinks, done) {
  const full = () => sinks.some((s) => s.writableLength >= QUEUE_LIMIT);
  for (const sink of sinks) sink.on("drain", () => source.isPaused() && !full() && source.resume());
  source.on("data", (chunk) => {
    for (const sink of sinks) sink.write(chunk);
    if (full()) source.pause();
  });
  source.on("end", done);
}

function syncWay(source, sinks, done) {
  const fds = sinks.map((sink) => sink.fd);
  source.on("data", (chunk) => {
    for (const fd of fds) for (let at = 0; at < chunk.length; ) at += writeSync(fd, chunk, at);
  });
  source.on("end", done);
}

function pipeWay(source, sinks, done) {
  for (const sink of sinks) source.pipe(sink, { end: false });
  source.on("end", done);
}

async function once(way) {
  const dir = mkdtempSync(join(tmpdir(), "copy-"));
  const file = join(dir, "out.log");
  const sinks = [createWriteStream("", { fd: openSync(file, "a") }), createWriteStream("", { fd: 1, autoClose: false })];
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const child = spawn(gen, [String(mib)], { stdio: ["ignore", "pipe", "inherit"] });
  await new Promise((resolve) => ({ loop: copyLoop, pipe: pipeWay, sync: syncWay })[way](child.stdout, sinks, resolve));
  await Promise.all(sinks.map((s) => new Promise((resolve) => s.write(Buffer.alloc(0), resolve)))); // after every queued write
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const cpu = process.cpuUsage(cpu0);
  sinks[0].end();
  const size = statSync(file).size;
  rmSync(dir, { recursive: true, force: true });
  if (size !== mib * 2 ** 20) throw new Error(`${way}: ${size} bytes copied, expected ${mib * 2 ** 20}`);
  return { rate: mib / (ms / 1000), cpuMs: (cpu.user + cpu.system) / 1000 };
}

const results = { loop: [], pipe: [], sync: [] };
for (let r = 0; r < Number(runsText); r++) for (const way of Object.keys(results)) results[way].push(await once(way));
for (const [way, list] of Object.entries(results)) {
  const rates = list.map((x) => x.rate).sort((a, b) => a - b);
  const cpu = list.map((x) => x.cpuMs).sort((a, b) => a - b);
  process.stderr.write(`Node ${process.versions.node} ${way}: median ${rates[rates.length >> 1].toFixed(0)} MiB/s, best ${rates.at(-1).toFixed(0)} MiB/s, median CPU ${cpu[cpu.length >> 1].toFixed(0)} ms\n`);
}
