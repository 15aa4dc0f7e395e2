// Shared pieces of the benchmark: the clean environment, process helpers, the clock, statistics.
import { spawn } from "node:child_process";
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readlinkSync, readSync, watch } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { hasInotifyWatch } from "./inotify.mjs";
import { PROC } from "./proc.mjs";

export { sleep };
export { hasInotifyWatch, inotifyInstances } from "./inotify.mjs";
export { withInotifyLimit } from "./namespaces.mjs";
export { withOwnProc } from "./proc.mjs";

/**
 * Every timed process gets exactly this environment, as `env -i PATH=/usr/local/bin:/usr/bin:/bin` would
 * give it (passed to spawn directly, so no extra exec of env(1) lands inside the figures).
 */
export const CLEAN_ENV = Object.freeze({ PATH: "/usr/local/bin:/usr/bin:/bin" });

/** CLOCK_MONOTONIC in ns: the same clock in every process on Linux, so the C probes' stamps compare with it. */
export const now = () => process.hrtime.bigint();
export const msBetween = (from, to) => Number(to - from) / 1e6;

/** Reads the nanosecond stamp a probe wrote. */
export function readStamp(path) {
  return BigInt(readFileSync(path, "utf8").trim());
}

/** Every process the bench started and has not seen end: killed with all below it if the bench stops early (a failed row). */
const running = new Set();
process.on("exit", () => {
  for (const child of running) killTree(child.pid);
});

/**
 * SIGKILL to `pid` and every process below it, the tree read first. A baton killed alone leaves its command running:
 * the command has a session of its own, and outside a PID namespace nothing else ends it (row 8's `sleep`s did).
 * Through /proc, not PROC: row 8's own procfs may be gone by then.
 */
export function killTree(pid) {
  const tree = [];
  const visit = (p) => {
    tree.push(p);
    for (const child of childrenOf(p, "/proc")) visit(child);
  };
  if (pid !== undefined) visit(pid);
  for (const p of tree) {
    try {
      process.kill(p, "SIGKILL");
    } catch {
      // ended already
    }
  }
}

/** The pids of the children of every thread of `pid`, through `proc`; none once it has ended. */
export function childrenOf(pid, proc = PROC) {
  let threads;
  try {
    threads = readdirSync(`${proc}/${pid}/task`);
  } catch {
    return [];
  }
  return threads.flatMap((tid) => {
    try {
      return readFileSync(`${proc}/${pid}/task/${tid}/children`, "utf8").split(" ").filter(Boolean).map(Number);
    } catch {
      return [];
    }
  });
}
for (const [signal, number] of [["SIGINT", 2], ["SIGTERM", 15], ["SIGHUP", 1]]) process.on(signal, () => process.exit(128 + number));

/** Starts a process with the clean environment. stdin and stdout are ignored unless given; stderr is kept for errors. */
export function start(command, args, { stdio = ["ignore", "ignore", "pipe"], env = CLEAN_ENV } = {}) {
  const child = spawn(command, args, { stdio, env });
  running.add(child);
  child.on("exit", () => running.delete(child));
  let stderr = "";
  child.stderr?.on("data", (chunk) => (stderr += chunk));
  child.stderrSoFar = () => stderr;
  child.exited = new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stderr }));
  });
  return child;
}

/** Runs a process to its end and fails loudly if it did not exit with one of `okCodes`. */
export async function run(command, args, options = {}, okCodes = [0]) {
  const result = await start(command, args, options).exited;
  if (!okCodes.includes(result.code)) {
    throw new Error(`${command} ${args.join(" ")}: exit ${result.code ?? result.signal}\n${result.stderr}`);
  }
  return result;
}

/** Rejects if `child` ends with a code outside `okCodes`. */
export async function expectExit(child, what, okCodes = [0]) {
  const result = await child.exited;
  if (!okCodes.includes(result.code)) throw new Error(`${what}: exit ${result.code ?? result.signal}\n${result.stderr}`);
  return result;
}

/**
 * Resolves once every process in `children` is waiting on an inotify watch or on its predecessor's lock (checked from
 * /proc every 5 ms), then lets them settle for `settleMs`, as a step that waits for its turn is idle. A baton that
 * polls instead (the kernel refused a watch: inotify instances are a per-user limit) says so on stderr and counts as
 * ready; after `timeoutMs` we go on anyway and say so once.
 */
export async function waitUntilWatching(children, { timeoutMs = 5_000, settleMs = 30 } = {}) {
  const deadline = Date.now() + timeoutMs;
  let pending = children.filter((c) => c.exitCode === null);
  while (pending.length > 0) {
    for (const child of pending) {
      if (child.exitCode !== null || child.signalCode !== null) {
        const r = await child.exited;
        throw new Error(`a waiting process ended early: exit ${r.code ?? r.signal}\n${r.stderr}`);
      }
    }
    for (const child of pending) {
      if (/polling/.test(child.stderrSoFar?.() ?? "")) warnOnce("a baton fell back to polling (inotify limit?): its figures include the poll interval");
    }
    pending = pending.filter((c) => !hasInotifyWatch(c.pid) && !waitsOnBaton(c.pid) && !/polling/.test(c.stderrSoFar?.() ?? ""));
    if (pending.length === 0) break;
    if (Date.now() > deadline) {
      warnOnce("no inotify watch seen in a waiting baton within the timeout; going on without it");
      break;
    }
    await sleep(5);
  }
  await sleep(settleMs);
}

/**
 * True when `pid` holds its predecessor's liveness file (`WAIT.baton-live`) open: a baton waiting on another baton's
 * post file waits on that file's lock and a wake FIFO, with no inotify watch (docs/design.md "The channel between two
 * batons").
 */
function waitsOnBaton(pid) {
  try {
    return readdirSync(`${PROC}/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`${PROC}/${pid}/fd/${fd}`).endsWith(".baton-live");
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

const warned = new Set();
export function warnOnce(message) {
  if (warned.has(message)) return;
  warned.add(message);
  process.stderr.write(`bench: ${message}\n`);
}

/** The host PID of the first child of `pid` (the PID 1 that `unshare --fork` started). */
export function firstChildPid(pid) {
  const [child] = childrenOf(pid);
  if (child === undefined) throw new Error(`process ${pid} has no child`);
  return child;
}

/** Median and 95th percentile (nearest rank) of a list of numbers. */
export function summarize(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = (q) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { median, p95: rank(0.95), min: sorted[0], max: sorted.at(-1), n: sorted.length };
}

/** Resolves when `line` shows up on a child's stdout. */
export function waitForLine(child, line, timeoutMs = 10_000) {
  return new Promise((resolve, reject) => {
    let seen = "";
    const timer = setTimeout(() => reject(new Error(`no "${line}" within ${timeoutMs} ms`)), timeoutMs);
    const onData = (chunk) => {
      seen += chunk;
      if (seen.split("\n").includes(line)) {
        clearTimeout(timer);
        child.stdout.off("data", onData);
        resolve();
      }
    };
    child.stdout.on("data", onData);
    child.exited.then((r) => reject(new Error(`ended before "${line}": exit ${r.code ?? r.signal}\n${r.stderr}`)));
  });
}

/** True while the main thread of `pid` sleeps in epoll_wait: its event loop has nothing to do. */
function eventLoopIdle(pid) {
  try {
    return /epoll/.test(readFileSync(`${PROC}/${pid}/wchan`, "utf8"));
  } catch {
    return false;
  }
}

/**
 * Resolves once every process in `children` has its event loop idle (main thread in epoll_wait) in `looks` looks in a
 * row, `everyMs` apart, or `isReady(child)` says so: a waiting step whatever it waits with (inotify, a poll, a
 * socket), its start-up over. A step that polls under a heavy load is often runnable, not in epoll_wait: `isReady`
 * can tell it by what it said. Rejects if one ends; resolves after `timeoutMs` anyway, with how many were not idle.
 */
export async function waitUntilIdle(children, { timeoutMs = 30_000, looks = 3, everyMs = 50, isReady = () => false } = {}) {
  const deadline = Date.now() + timeoutMs;
  const seen = new Map(children.map((c) => [c, 0]));
  while (seen.size > 0) {
    for (const [child, count] of seen) {
      if (child.exitCode !== null || child.signalCode !== null) {
        const r = await child.exited;
        throw new Error(`a waiting process ended early: exit ${r.code ?? r.signal}\n${r.stderr}`);
      }
      const next = eventLoopIdle(child.pid) ? count + 1 : 0;
      if (next >= looks || isReady(child)) seen.delete(child);
      else seen.set(child, next);
    }
    if (seen.size === 0) break;
    if (Date.now() > deadline) {
      warnOnce(`${seen.size} of ${children.length} processes not idle within ${timeoutMs} ms; going on without them`);
      return seen.size;
    }
    await sleep(everyMs);
  }
  return 0;
}

/**
 * CPU time `pid` has used, all its threads: { ns: the scheduler's exact sum (schedstat), ticks: utime + stime (stat),
 * wakeups: how often its threads went to sleep and were woken (voluntary context switches) }.
 */
export function cpuTime(pid) {
  let ns = 0;
  let wakeups = 0;
  for (const task of readdirSync(`${PROC}/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`${PROC}/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
      wakeups += Number(/^voluntary_ctxt_switches:\s*(\d+)/m.exec(readFileSync(`${PROC}/${pid}/task/${task}/status`, "utf8"))?.[1] ?? 0);
    } catch {
      // The thread ended while we looked.
    }
  }
  // The process's stat adds up its threads, live and ended; comm may hold spaces, so count fields after its ')'.
  const fields = readFileSync(`${PROC}/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return { ns, ticks: Number(fields[11]) + Number(fields[12]), wakeups };
}

/**
 * The whole machine's CPU time so far, every CPU, in ticks (/proc/stat's first line): busy (user, nice, system, irq,
 * softirq), idle (idle, iowait) and steal (time the hypervisor gave to others).
 */
export function machineTicks() {
  const [user, nice, system, idle, iowait, irq, softirq, steal = 0] = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
  return { busy: user + nice + system + irq + softirq, idle: idle + iowait, steal };
}

/**
 * How the file `pid` maps most of (its Node binary) sits in the page cache: of its pages `pid` maps, how many are in
 * large folios (/proc/PID/pagemap for each page's frame, /proc/kpageflags for the frame's compound bits). Exits and
 * starts of Node processes, and row 8's first hand-offs, depend on it (docs/performance.md). undefined without root.
 */
export function binaryFolios(pid) {
  const ranges = new Map();
  for (const line of readFileSync(`${PROC}/${pid}/maps`, "utf8").split("\n")) {
    const [span, , , , , path] = line.split(/\s+/);
    if (!path?.startsWith("/")) continue;
    const [from, to] = span.split("-").map((hex) => parseInt(hex, 16) / 4096);
    ranges.set(path, [...(ranges.get(path) ?? []), [from, to]]);
  }
  let pagemap;
  let flags;
  try {
    pagemap = openSync(`${PROC}/${pid}/pagemap`, "r");
    flags = openSync("/proc/kpageflags", "r");
    const entry = Buffer.alloc(8);
    let best = { file: "", mapped: 0, large: 0 };
    for (const [file, spans] of ranges) {
      let mapped = 0;
      let large = 0;
      for (const [from, to] of spans) {
        const entries = Buffer.alloc((to - from) * 8);
        readSync(pagemap, entries, 0, entries.length, from * 8);
        for (let i = 0; i < entries.length; i += 8) {
          const value = entries.readBigUInt64LE(i);
          if (!(value >> 63n)) continue; // not present
          mapped++;
          readSync(flags, entry, 0, 8, Number(value & ((1n << 55n) - 1n)) * 8);
          if ((entry.readBigUInt64LE(0) >> 15n) & 3n) large++; // KPF_COMPOUND_HEAD or KPF_COMPOUND_TAIL
        }
      }
      if (mapped > best.mapped) best = { file, mapped, large };
    }
    return best.mapped > 0 ? best : undefined;
  } catch {
    return undefined;
  } finally {
    if (pagemap !== undefined) closeSync(pagemap);
    if (flags !== undefined) closeSync(flags);
  }
}

/** A line of /proc/PID/status in KiB (RssAnon, VmHWM, ...). */
export function statusKiB(pid, key) {
  return Number(new RegExp(`^${key}:\\s*(\\d+)`, "m").exec(readFileSync(`${PROC}/${pid}/status`, "utf8"))?.[1] ?? NaN);
}

/** Resolves with the time a file appears in `dir` (fs.watch + stat), or rejects after `timeoutMs`. */
export function whenFileAppears(path, dir, timeoutMs) {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (!existsSync(path)) return;
      const at = now();
      watcher.close();
      clearTimeout(timer);
      resolve(at);
    };
    const watcher = watch(dir, check);
    const timer = setTimeout(() => {
      watcher.close();
      reject(new Error(`${path} did not appear within ${timeoutMs} ms`));
    }, timeoutMs);
    check();
  });
}
