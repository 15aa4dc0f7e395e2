import type { StdioOptions } from "node:child_process";
import { EventEmitter } from "node:events";
import { constants } from "node:os";
import type { Readable } from "node:stream";
import { loadNativeAddon, type NativeAddon } from "../addon/load-addon.js";
import { warn } from "../base/warn.js";
import { exactBytes, type ExactLaunch } from "./exact-bytes.js";

// Starts a program in a process group of its own (setsid). With inherited stdio (every step that does not capture
// its output) it goes through `process_wrap`, the binding that child_process.spawn itself calls: loading
// node:child_process would cost every step's start-up ~14 M instructions (it pulls in net, stream and dgram), the
// binding almost nothing (docs/design.md, "Starting the command", says how both are measured).
// process.binding() is a documentation-only deprecation (DEP0111), but the binding is internal:
// its arguments change between majors, so it is used only on the major checked here. Piped stdio, or another Node
// (the standalone build's), use child_process, loaded only then.

/** The part of a ChildProcess that run-command uses; a real ChildProcess is one. */
export interface SpawnedProcess {
  /** undefined when the program could not be started: 'error' follows. */
  readonly pid?: number | undefined;
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  once(event: "error", listener: (error: NodeJS.ErrnoException) => void): this;
  once(event: "exit", listener: (code: number | null, signal: NodeJS.Signals | null) => void): this;
}

interface ProcessHandle {
  pid: number;
  onexit: (exitCode: number, signalCode: string) => void;
  spawn(options: object): number;
  close(): void;
}

/** The Node major whose process_wrap.spawn(options) baton has checked; Node 24's takes other arguments (it aborts). */
const CHECKED_NODE_MAJOR = 20;

/** Loaded with the module, not at the first start: a waiting step loads it while idle, off the handoff path. */
const ProcessWrap = loadProcessWrap();

function loadProcessWrap(): (new () => ProcessHandle) | null {
  if (Number(process.versions.node.split(".")[0]) !== CHECKED_NODE_MAJOR) return null;
  const quiet = process.noDeprecation;
  process.noDeprecation = true; // --pending-deprecation in a user's NODE_OPTIONS must not print in their step's log
  try {
    return (process as unknown as { binding(name: string): { Process: new () => ProcessHandle } }).binding("process_wrap").Process;
  } catch {
    return null;
  } finally {
    process.noDeprecation = quiet;
  }
}

const INHERIT = [0, 1, 2].map((fd) => ({ type: "inherit", fd }));

export function spawnProcess(program: string, args: readonly string[], stdio: StdioOptions = "inherit"): SpawnedProcess {
  const inherited = stdio === "inherit" || (Array.isArray(stdio) && stdio.every((s) => s === "inherit"));
  // Bytes that are not UTF-8 in baton's argv or environment: only the addon can pass them on (exact-bytes.ts).
  const exact = exactBytes([program, ...args]);
  if (exact && !inherited) warn("baton's argv or environment is not UTF-8, and a captured command gets them as decoded text");
  else if (exact) {
    const addon = addonOrWarn();
    if (addon) return new ExactProcess(addon, exact);
  }
  if (inherited && ProcessWrap) return new InheritedProcess(ProcessWrap, program, args);
  try {
    return childProcess().spawn(program, args, { stdio, detached: true });
  } catch (error) {
    // child_process throws, instead of emitting 'error', for all but five errnos: E2BIG (a substituted argument over
    // 128 KiB), ENOMEM, EINVAL. Then it is an 'error' too, reported as any spawn failure (it was an internal error).
    if (typeof (error as NodeJS.ErrnoException).code !== "string") throw error;
    return new FailedProcess(error as NodeJS.ErrnoException);
  }
}

function addonOrWarn(): NativeAddon | undefined {
  try {
    return loadNativeAddon();
  } catch (error) {
    warn(`baton's argv or environment is not UTF-8, and without its addon (${error instanceof Error ? error.message : String(error)}) the command gets them as decoded text`);
    return undefined;
  }
}

/**
 * A command started from bytes by the addon (posix_spawnp, setsid, stdio inherited). Its exit status is not libuv's
 * to collect: each SIGCHLD asks the addon for it (the reaper leaves a tracked pid alone, src/run/children.ts).
 */
class ExactProcess extends EventEmitter implements SpawnedProcess {
  readonly pid: number | undefined;
  readonly stdout = null;
  readonly stderr = null;

  constructor(addon: NativeAddon, { argv, env }: ExactLaunch) {
    super();
    const pid = addon.spawnBytes(argv[0]!, argv, env);
    if (pid < 0) {
      const code = errnoName(pid);
      const program = argv[0]!.toString();
      const error: NodeJS.ErrnoException = Object.assign(new Error(`spawn ${program} ${code}`), { errno: pid, code, syscall: `spawn ${program}`, path: program });
      process.nextTick(() => this.emit("error", error));
      return;
    }
    this.pid = pid;
    const collect = () => {
      const status = addon.waitStatus(pid);
      if (status === -1) return;
      process.removeListener("SIGCHLD", collect);
      const signal = status & 0x7f;
      const name = signal === 0 ? null : (Object.keys(constants.signals).find((n) => constants.signals[n as NodeJS.Signals] === signal) as NodeJS.Signals);
      this.emit("exit", signal === 0 ? (status >> 8) & 0xff : null, name ?? null);
    };
    process.on("SIGCHLD", collect);
    setImmediate(collect); // in case it ended before the listener was there
  }
}

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

/** A command with inherited stdio, started through process_wrap; events as a ChildProcess gives them. */
class InheritedProcess extends EventEmitter implements SpawnedProcess {
  readonly pid: number | undefined;
  readonly stdout = null;
  readonly stderr = null;

  constructor(Process: new () => ProcessHandle, program: string, args: readonly string[]) {
    super();
    const handle = new Process();
    handle.onexit = (exitCode, signalCode) => {
      this.emit("exit", signalCode ? null : exitCode, signalCode || null);
      handle.close();
    };
    const envPairs: string[] = [];
    for (const [key, value] of Object.entries(process.env)) if (value !== undefined) envPairs.push(`${key}=${value}`);
    // As child_process does: the program is looked up in PATH (libuv's execvp), argv[0] is the name as given.
    const err = handle.spawn({ file: program, args: [program, ...args], envPairs, stdio: INHERIT, detached: true });
    if (err === 0) {
      this.pid = handle.pid;
      return;
    }
    handle.close();
    const code = errnoName(err);
    const error: NodeJS.ErrnoException = Object.assign(new Error(`spawn ${program} ${code}`), { errno: err, code, syscall: `spawn ${program}`, path: program });
    process.nextTick(() => this.emit("error", error)); // after the caller has added its listeners, as Node does
  }
}

/**
 * Loads now what the next spawnProcess() will need, for a step about to wait: child_process (net, stream, dgram:
 * ~14 M instructions on Node 22 and 24) is then paid while the step is idle, not between the previous step's
 * post file and its own command (make bench, row 1c). Nothing to load where process_wrap serves inherited stdio.
 */
export function prepareToSpawn(piped: boolean): void {
  if (piped || !ProcessWrap) childProcess();
}

let loadedChildProcess: typeof import("node:child_process") | undefined;

function childProcess(): typeof import("node:child_process") {
  // Not a static import: loading child_process (net, stream, dgram) would cost every step's start-up. Nor node:module's
  // createRequire, which loads the ESM loader at start-up. getBuiltinModule is Node >= 20.16; before, the bundle's own
  // CommonJS require.
  const getBuiltin = (process as unknown as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  loadedChildProcess ??= (getBuiltin ? getBuiltin("node:child_process") : require("node:child_process")) as typeof import("node:child_process");
  return loadedChildProcess;
}

function errnoName(err: number): string {
  for (const [name, value] of Object.entries(constants.errno)) if (value === -err) return name;
  return `E${-err}`;
}

/** For tests: whether inherited stdio goes through process_wrap on this Node. */
export const usesProcessWrap = ProcessWrap !== null;
