import type { StdioOptions } from "node:child_process";
import { EventEmitter } from "node:events";
import { constants } from "node:os";
import type { Readable } from "node:stream";
import { loadNativeAddon, type NativeAddon } from "../addon/load-addon.js";
import { warn } from "../base/warn.js";
import { exactBytes, readGivenBytes, type ExactLaunch } from "./exact-bytes.js";
import { lazyBuiltin } from "../base/builtin.js";

// Starts a program in a session of its own (setsid). With inherited stdio (every step that does not capture its output)
// the native addon starts it (posix_spawnp): loading node:child_process would cost every step's start-up ~14 M
// instructions and a waiting step ~0.7 MiB of RssAnon (it pulls in net, stream and dgram); the addon is loaded anyway.
// Piped stdio (captured output), or no addon, use child_process, loaded only then. docs/design.md, "Starting the
// command", says how each was measured.

/** The part of a ChildProcess that run-command uses; a real ChildProcess is one. */
export interface SpawnedProcess {
  /** undefined when the program could not be started: 'error' follows. */
  readonly pid?: number | undefined;
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  once(event: "error", listener: (error: NodeJS.ErrnoException) => void): this;
  once(event: "exit", listener: (code: number | null, signal: NodeJS.Signals | null) => void): this;
}

// Eager: on the wake-up path (docs/design.md#eager-functions).
export const spawnProcess = (function spawnProcess(program: string, args: readonly string[], stdio: StdioOptions = "inherit"): SpawnedProcess {
  const inherited = stdio === "inherit" || (Array.isArray(stdio) && stdio.every((s) => s === "inherit"));
  // Bytes that are not UTF-8 in baton's argv or environment: only the addon can pass them on (exact-bytes.ts).
  const exact = exactBytes([program, ...args]);
  if (inherited) {
    const addon = addonOrUndefined(exact ? "baton's argv or environment is not UTF-8, and without its addon (%s) the command gets them as decoded text" : undefined);
    if (addon) return startWithAddon(addon, exact ?? textLaunch(program, args));
  } else if (exact) warn("baton's argv or environment is not UTF-8, and a captured command gets them as decoded text");
  try {
    return childProcess().spawn(program, args, { stdio, detached: true });
  } catch (error) {
    // child_process throws, instead of emitting 'error', for all but five errnos: E2BIG (a substituted argument over
    // 128 KiB), ENOMEM, EINVAL. Then it is an 'error' too, reported as any spawn failure (it was an internal error).
    if (typeof (error as NodeJS.ErrnoException).code !== "string") throw error;
    return new FailedProcess(error as NodeJS.ErrnoException);
  }
});

/** The addon, or undefined when it cannot load (a bundle copied without baton-reaper.node: child_process does it). */
// Eager: on the wake-up path (docs/design.md#eager-functions).
const addonOrUndefined = (function addonOrUndefined(warning?: string): NativeAddon | undefined {
  try {
    return loadNativeAddon();
  } catch (error) {
    if (warning) warn(warning.replace("%s", error instanceof Error ? error.message : String(error)));
    return undefined;
  }
});

/** The command and baton's environment as UTF-8 bytes, as child_process would pass them. */
// Eager: on the wake-up path (docs/design.md#eager-functions).
const textLaunch = (function textLaunch(program: string, args: readonly string[]): ExactLaunch {
  const env: Buffer[] = [];
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env.push(Buffer.from(`${key}=${value}`));
  const argv: Buffer[] = [];
  for (const word of [program, ...args]) argv.push(Buffer.from(word)); // a loop: a callback would compile now
  return { argv, env };
});

// Eager: on the wake-up path (docs/design.md#eager-functions).
const startWithAddon = (function startWithAddon(addon: NativeAddon, launch: ExactLaunch): SpawnedProcess {
  // A NUL byte cannot reach exec(2) (a substituted result can hold one): the error child_process gives for it.
  if (holdsNul(launch.argv) || holdsNul(launch.env)) {
    const error: NodeJS.ErrnoException = Object.assign(new TypeError(`spawn ${launch.argv[0]}: an argument or environment variable holds a NUL byte`), { code: "ERR_INVALID_ARG_VALUE" });
    return new FailedProcess(error);
  }
  return startedByAddon(addon, launch);
});

// Eager: on the wake-up path (docs/design.md#eager-functions).
const holdsNul = (function holdsNul(words: readonly Buffer[]): boolean {
  for (const bytes of words) if (bytes.includes(0)) return true;
  return false;
});

/**
 * A command started by the addon (posix_spawnp, setsid, stdio inherited). Its exit status is not libuv's to collect:
 * each SIGCHLD asks the addon for it (the reaper leaves a tracked pid alone, src/run/children.ts). A function, not a
 * class: a class's constructor cannot be compiled eagerly.
 */
// Eager: on the wake-up path (docs/design.md#eager-functions).
const startedByAddon = (function startedByAddon(addon: NativeAddon, { argv, env }: ExactLaunch): SpawnedProcess {
  const pid = addon.spawnBytes(argv[0]!, argv, env);
  if (pid < 0) {
    const code = errnoName(pid);
    const program = argv[0]!.toString();
    return new FailedProcess(Object.assign(new Error(`spawn ${program} ${code}`), { errno: pid, code, syscall: `spawn ${program}`, path: program }));
  }
  const child: SpawnedProcess & EventEmitter = Object.assign(new EventEmitter(), { pid, stdout: null, stderr: null });
  // A signal listener does not keep Node's event loop alive, and nothing else might while the command runs: without
  // this handle baton would end at once with 0. A timer that never fires costs no wake-up.
  const running = setInterval(() => {}, 2 ** 31 - 1);
  // Eager: on the hand-on path (docs/design.md#eager-functions).
  const collect = (function collect() {
    const status = addon.waitStatus(pid);
    if (status === -1) return;
    process.removeListener("SIGCHLD", collect);
    clearInterval(running);
    const signal = status & 0x7f;
    const name = signal === 0 ? null : (Object.keys(constants.signals).find((n) => constants.signals[n as NodeJS.Signals] === signal) as NodeJS.Signals);
    // A real-time signal (32-64) has no name in os.constants: its death still gives 128+N, as a shell says.
    const code = signal === 0 ? (status >> 8) & 0xff : name ? null : 128 + signal;
    child.emit("exit", code, name ?? null);
  });
  process.on("SIGCHLD", collect);
  setImmediate(collect); // in case it ended before the listener was there
  return child;
});

/** A program that could not be started: 'error' on the next tick, as Node emits it. */
class FailedProcess extends EventEmitter implements SpawnedProcess {
  readonly pid = undefined;
  readonly stdout = null;
  readonly stderr = null;

  constructor(error: NodeJS.ErrnoException) {
    super();
    process.nextTick(() => this.emit("error", error));
  }
}

/**
 * Loads now what the next spawnProcess() will need, for a step about to wait: child_process (net, stream, dgram:
 * ~14 M instructions on Node 22 and 24), needed only for captured output or without the addon, and the bytes of
 * baton's argv and environment (exact-bytes.ts) are then paid while the step is idle, not between the previous step's
 * post file and its own command (make bench, rows 1c and 8).
 */
export function prepareToSpawn(piped: boolean): void {
  if (piped || !addonOrUndefined()) childProcess();
  readGivenBytes();
}

let loadedChildProcess: typeof import("node:child_process") | undefined;

function childProcess(): typeof import("node:child_process") {
  loadedChildProcess ??= lazyBuiltin<typeof import("node:child_process")>("node:child_process"); // net, stream, dgram
  return loadedChildProcess;
}

function errnoName(err: number): string {
  for (const [name, value] of Object.entries(constants.errno)) if (value === -err) return name;
  return `E${-err}`;
}
