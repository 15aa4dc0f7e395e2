// Shared helpers for integration tests: run the built bundle as a real process, optionally as PID 1 of a new PID
// namespace, and observe it from outside (files, /proc, exit status). No fakes.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmdirSync, readFileSync, existsSync, readdirSync, readlinkSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after } from "node:test";
import { inMountNamespace, readOnlyFolder } from "../../scripts/bench/namespaces.mjs";

/** The bundle under test; BATON_TEST_BUNDLE points at another build (to see a regression test fail on older code). */
export const BATON = process.env.BATON_TEST_BUNDLE || resolve(import.meta.dirname, "../../dist/baton.cjs");
/** The standalone folder from `make sea` and its launcher (docs/standalone.md). */
export const STANDALONE_DIR = resolve(import.meta.dirname, "../../dist/baton-linux-x64");
export const STANDALONE = join(STANDALONE_DIR, "baton");
export const IS_ROOT = process.getuid?.() === 0;

/** Words that run what follows as nobody (uid and gid 65534, no groups). */
export const AS_NOBODY: string[] = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"];

/** Words that run what follows as nobody, with `dir` mounted read-only: a neighbour that may only read the folder. */
export function readOnlyNeighbour(dir: string): string[] {
  return [...inMountNamespace(readOnlyFolder(dir)), ...AS_NOBODY];
}

/**
 * `make check`, the quick loop, sets BATON_TEST_QUICK=1: a stress case then plays its race once instead of many times
 * (`repetitions`), a test that pushes a large volume through baton is skipped (`SKIP_WHEN_QUICK` says why), so is a
 * case that repeats another's path with other input (`SKIP_REPEAT_WHEN_QUICK`), and so are the standalone halves of
 * the bundle's files (`NO_STANDALONE`).
 * `make test` runs them in full.
 */
const QUICK = process.env.BATON_TEST_QUICK === "1";
/**
 * Why a test of the standalone build is skipped here: `make check` tests the bundle only, even when a standalone
 * folder is there from an earlier `make test` (which builds and tests it); otherwise, it is not built (`make sea`
 * builds it). false when it is tested.
 */
export const NO_STANDALONE: string | false = QUICK
  ? "make check (BATON_TEST_QUICK=1) tests the bundle; make test tests the standalone build"
  : !existsSync(STANDALONE) && `no standalone build at ${STANDALONE_DIR}: \`make sea\` builds it`;
export const SKIP_WHEN_QUICK: string | false = QUICK && "a large volume: make test runs it, make check (BATON_TEST_QUICK=1) does not";
/** For a case that repeats another one's path with other input: make check runs one of them. */
export const SKIP_REPEAT_WHEN_QUICK: string | false = QUICK && "the same path as another case: make test runs it, make check (BATON_TEST_QUICK=1) does not";
export function repetitions(full: number): number {
  return QUICK ? 1 : full;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface Baton {
  /** The process we spawned: baton itself, or `unshare` when running as PID 1. */
  child: ChildProcess;
  exited: Promise<Exit>;
  /** baton's pid as seen from here (not 1, even when it is PID 1 in its namespace). */
  hostPid(): Promise<number>;
  /**
   * SIGKILL, as a killed container's baton gets it; then the processes it started, which a real container's end takes
   * along, while here they would live on in sessions of their own (a `sleep 1000` for 1000 s). Baton goes first, so
   * it never sees its command die.
   */
  kill(): void;
}

export interface StartOptions {
  /** Run baton as PID 1 of a new PID namespace (unshare --pid --fork --mount-proc). */
  pid1?: boolean;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Extra words put before `node BATON`, e.g. another unshare. */
  prefix?: string[];
  /** Words put before everything, the PID namespace's unshare included (e.g. a user namespace that runs arm64 code). */
  outer?: string[];
  stdin?: "ignore" | "pipe";
  /** The words that start baton (default: `node dist/baton.cjs`), e.g. [STANDALONE]. */
  baton?: string[];
  /** With pid1: also enter this folder as the root (unshare --root), like a container's image. */
  root?: string;
}

/** A clean environment, as a pod would give: no NODE_OPTIONS or NODE_EXTRA_CA_CERTS of this machine. */
export function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin", ...extra };
}

/**
 * Every baton a test file started and that has not closed yet. A test that times out never reaches its own clean-up,
 * and what it left (baton, or orphans holding baton's stdout and stderr) would keep the file's process alive until
 * they end on their own (a `sleep 1000`): the suite would stall instead of failing.
 */
const running = new Set<ChildProcess>();
after(() => {
  for (const child of running) {
    killWithTree(child);
    child.stdout?.destroy();
    child.stderr?.destroy();
    child.unref();
  }
});

/**
 * SIGKILL to `child`, then to every process below it. The command runs in a session of its own: killing baton alone
 * would leave it (a sidecar's endless loop) to init, running after the suite. Its tree is read while it can still be
 * found from baton's pid, and only while baton has not exited: one that exited may have a pid that is another
 * process's by now (pid_max is 32768 here), whose tree is not ours to kill.
 */
function killWithTree(child: ChildProcess): void {
  const alive = child.exitCode === null && child.signalCode === null;
  const tree = alive && child.pid !== undefined ? descendantsOf(child.pid) : [];
  child.kill("SIGKILL");
  for (const pid of tree) killQuietly(pid);
}

export function startBaton(args: string[], options: StartOptions = {}): Baton {
  const words = [...(options.prefix ?? []), ...(options.baton ?? [process.execPath, BATON]), ...args];
  const root = options.root ? [`--root=${options.root}`] : [];
  const inner = options.pid1 ? ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child", ...root, ...words] : words;
  const argv = [...(options.outer ?? []), ...inner];
  const child = spawn(argv[0]!, argv.slice(1), {
    env: options.env ?? cleanEnv(),
    cwd: options.cwd,
    stdio: [options.stdin ?? "ignore", "pipe", "pipe"],
  });
  running.add(child);
  child.on("close", () => running.delete(child));
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const exited = new Promise<Exit>((done) => {
    child.on("close", (code, signal) => done({ code, signal, stdout, stderr }));
  });
  const hostPid = async () => {
    if (!options.pid1 && !options.prefix) return child.pid!;
    // unshare --fork: baton is the child of unshare (through any prefix or outer words that exec). Outer words may
    // start helpers of their own before they exec: wait until the process runs the inner command line.
    const innerLine = inner.join("\0");
    return waitFor(() => {
      if (options.outer && !readOr(`/proc/${child.pid}/cmdline`, "").startsWith(innerLine)) return undefined;
      const children = readOr(`/proc/${child.pid}/task/${child.pid}/children`, "").trim();
      return children ? Number(children.split(" ")[0]) : undefined;
    }, "baton's process to start");
  };
  return { child, exited, hostPid, kill: () => killWithTree(child) };
}

/**
 * A shell loop, for a command a test runs under baton, that waits until `file` exists. It also ends once that baton is
 * gone (the shell is re-parented), so that a predecessor the test killed leaves no loop polling for the rest of the
 * machine's life; and after two minutes whatever happens: a baton killed before the shell started leaves it no parent
 * to tell ($PPID is already 1), and `kill -0 $PPID` would be fooled by a reused pid.
 */
export function shellWaitFor(file: string): string {
  return `n=0; while [ ! -e '${file}' ] && read -r _ _ _ p _ < /proc/$$/stat && [ "$p" = "$PPID" ] && [ $n -lt 2400 ]; do n=$((n + 1)); sleep 0.05; done`;
}

/** Runs baton to completion. */
export function runBaton(args: string[], options: StartOptions = {}): Promise<Exit> {
  return startBaton(args, options).exited;
}

/**
 * Waits until `probe` returns a value other than undefined. For state that has no event to wait on (a process's
 * signal mask, a file written by another process); the bound is generous because these machines are shared.
 */
export async function waitFor<T>(probe: () => T | undefined, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** True once `pid` has a handler for `signal` (SigCgt in /proc/PID/status). */
export function catches(pid: number, signalNumber: number): boolean {
  const status = readOr(`/proc/${pid}/status`, "");
  const match = /^SigCgt:\s*([0-9a-f]+)$/m.exec(status);
  return match ? (BigInt(`0x${match[1]}`) & (1n << BigInt(signalNumber - 1))) !== 0n : false;
}

/** Waits until baton's signal listeners are all installed: SIGHUP (1) is the last one it installs. */
export async function handlersInstalled(pid: number): Promise<void> {
  await waitFor(() => (catches(pid, 1) ? true : undefined), `pid ${pid} to install its signal handlers`);
}

/** Waits until an events file (BATON_EVENTS) has a line with this event name; returns that line's object. */
export async function eventSeen(eventsFile: string, event: string): Promise<Record<string, unknown>> {
  return waitFor(() => readEvents(eventsFile).find((e) => e.event === event), `event "${event}"`);
}

export function readEvents(eventsFile: string): Record<string, unknown>[] {
  return readOr(eventsFile, "")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "baton-test-"));
}

export function readOr(path: string, fallback: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return fallback;
  }
}

/** Whether `pid` holds `post`'s wake FIFO (or what was planted at its name) open: a waiter polling it, or holding it. */
export function holdsWakeFile(pid: number, post: string): boolean {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false; // ended
  }
  return fds.some((fd) => readlinkOr(`/proc/${pid}/fd/${fd}`).startsWith(`${post}.baton-wake`));
}

/** The kernel function `pid`'s main thread sleeps in (/proc/PID/wchan): epoll for an idle event loop; "" once ended. */
export function sleepingIn(pid: number): string {
  return readOr(`/proc/${pid}/wchan`, "");
}

export function readJson(path: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
}

export { existsSync, join };

/** Waits until `path` exists (written by another process: there is no event to wait on from here). */
export async function fileAppears(path: string, timeoutMs?: number): Promise<void> {
  await waitFor(() => (existsSync(path) ? true : undefined), `${path} to appear`, timeoutMs);
}

/** A TCP port that was free a moment ago on 127.0.0.1 (the kernel picks it; the test binds it later). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Every process below `root`, read from /proc (children before grandchildren). */
function descendantsOf(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readOr(`/proc/${name}/stat`, "");
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
  }
  const found: number[] = [];
  for (let next = [root]; next.length > 0; ) {
    next = next.flatMap((pid) => children.get(pid) ?? []);
    found.push(...next);
  }
  return found;
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // gone already
  }
}

/** True while `pid` runs: it exists and is not a zombie (a zombie holds no namespace and runs nothing; who reaps it is
 * up to the host's init, which on some machines, CI's among them, never does). */
export function isRunning(pid: number | string): boolean {
  const stat = readOr(`/proc/${pid}/stat`, "");
  return stat !== "" && stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
}

/** The processes of process group `pgid` that are still alive (zombies are dead; this machine's init may not reap them). */
export function liveGroupMembers(pgid: number): number[] {
  const alive: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readOr(`/proc/${name}/stat`, "");
    // Fields after "(comm)": state, ppid, pgrp, ...
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) === pgid && fields[0] !== "Z") alive.push(Number(name));
  }
  return alive;
}

/** A process's peak resident set size (VmHWM), in KiB. */
export function peakRssKiB(pid: number): number {
  const match = /^VmHWM:\s+(\d+) kB$/m.exec(readOr(`/proc/${pid}/status`, ""));
  if (!match) throw new Error(`no VmHWM for pid ${pid}`);
  return Number(match[1]);
}

/** Local TCP ports on which `pid` holds a listening socket (matched by socket inode, so other processes never count). */
export function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    const match = /^socket:\[(\d+)\]$/.exec(readlinkOr(`/proc/${pid}/fd/${fd}`));
    if (match) inodes.add(match[1]!);
  }
  const ports: number[] = [];
  for (const table of ["tcp", "tcp6"]) {
    for (const line of readOr(`/proc/${pid}/net/${table}`, "").split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      // sl local_address rem_address st ... inode: state 0A is LISTEN
      if (fields[3] === "0A" && inodes.has(fields[9]!)) ports.push(parseInt(fields[1]!.split(":")[1]!, 16));
    }
  }
  return ports;
}

function readlinkOr(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return "";
  }
}

/**
 * A pids cgroup of the test file's own (v1 here; v2 where that is what the machine has), removed when the file ends,
 * or undefined when there is none to make. A process joins it by writing its pid to cgroup.procs; pids.max limits it.
 */
export function pidsCgroup(): string | undefined {
  if (!IS_ROOT) return undefined;
  const name = `baton-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  for (const root of ["/sys/fs/cgroup/pids", "/sys/fs/cgroup"]) {
    if (!existsSync(join(root, "cgroup.procs"))) continue;
    if (root === "/sys/fs/cgroup" && !readOr(join(root, "cgroup.subtree_control"), "").includes("pids")) continue;
    try {
      mkdirSync(join(root, name));
      after(() => {
        try {
          rmdirSync(join(root, name));
        } catch {
          // EBUSY: a process of it killed a moment ago is not gone yet; an empty cgroup left behind is harmless
        }
      });
      if (existsSync(join(root, name, "pids.max"))) return join(root, name);
    } catch {
      // not allowed here
    }
  }
  return undefined;
}
