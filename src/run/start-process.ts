import type { StdioOptions } from "node:child_process";
import { EventEmitter } from "node:events";
import { constants } from "node:os";
import type { Readable } from "node:stream";
import { loadNativeAddon, type NativeAddon } from "../addon/load-addon.js";
import { warn } from "../base/warn.js";
import { exactBytes, readGivenBytes, type ExactLaunch } from "./exact-bytes.js";
import { lazyBuiltin } from "../base/builtin.js";
import { commandEnv } from "../process/kept-env.js";

// Starts a program in a session of its own (setsid). The native addon starts it (posix_spawnp), its output captured
// or not: loading node:child_process would cost every step's start-up and a waiting step's RssAnon (it pulls in
// net, stream and dgram); the addon is loaded anyway. And the addon gives the raw wait status: Node's child_process
// reports a death by a real-time signal (no name in os.constants) as exit code 0, so a captured command killed by
// SIGRTMIN+N would hand on a success. A captured command's pipes are read as net.Sockets, loaded only then. Without
// the addon (a bundle copied alone), and for stdio "ignore", child_process does it.
// docs/design.md, "Starting the command", says how each was measured.

/** How a command is started, beyond its stdio. */
export interface SpawnOptions {
  /**
   * false: a file the kernel will not execute (ENOEXEC: no #! line, another architecture's binary) is a failure to
   * start (126), as Go's exec makes it for Tekton's entrypoint and Argo's emissary. true (the default): it runs under
   * /bin/sh, as execvp and every shell do. Only the addon can refuse: child_process always runs it under /bin/sh.
   */
  shellForScripts?: boolean;
}

/** The part of a ChildProcess that run-command uses; a real ChildProcess is one. */
export interface SpawnedProcess {
  /** undefined when the program could not be started: 'error' follows. */
  readonly pid?: number | undefined;
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  once(event: "error", listener: (error: NodeJS.ErrnoException) => void): this;
  once(event: "exit", listener: (code: number | null, signal: NodeJS.Signals | null) => void): this;
}

export function spawnProcess(program: string, args: readonly string[], stdio: StdioOptions = "inherit", options: SpawnOptions = {}): SpawnedProcess {
  const pipes = addonPipes(stdio);
  // The step's environment, with what the standalone launcher kept from baton's Node given back (kept-env.ts).
  const env = commandEnv(process.env);
  // Bytes that are not UTF-8 in baton's argv or environment: only the addon can pass them on (exact-bytes.ts).
  const exact = exactBytes([program, ...args], env);
  if (pipes !== undefined) {
    const addon = addonOrUndefined(exact ? "baton's argv or environment is not UTF-8, and without its addon (%s) the command gets them as decoded text" : undefined);
    // An addon older than spawnWith can start only uncaptured commands.
    if (addon && (pipes === 0 || addon.spawnWith)) {
      const flags = pipes | (options.shellForScripts === false ? SPAWN_NO_SHELL : 0);
      return startWithAddon(addon, exact ?? textLaunch(program, args, env), flags);
    }
  } else if (exact) warn("baton's argv or environment is not UTF-8, and a command whose stdio is ignored gets them as decoded text");
  try {
    return childProcess().spawn(program, args, { stdio, detached: true, env });
  } catch (error) {
    // child_process throws, instead of emitting 'error', for all but five errnos: E2BIG (a substituted argument over
    // 128 KiB), ENOMEM, EINVAL. Then it is an 'error' too, reported as any spawn failure (it was an internal error).
    if (typeof (error as NodeJS.ErrnoException).code !== "string") throw error;
    return new FailedProcess(error as NodeJS.ErrnoException);
  }
}

/** spawnWith's flags (src/addon/addon.c). */
const SPAWN_PIPE_STDOUT = 1;
const SPAWN_PIPE_STDERR = 2;
const SPAWN_NO_SHELL = 4;

/** The addon's pipe flags for `stdio`: stdin inherited, stdout and stderr each inherited or a pipe; else undefined. */
function addonPipes(stdio: StdioOptions): number | undefined {
  if (stdio === "inherit") return 0;
  if (!Array.isArray(stdio) || stdio.length !== 3 || stdio[0] !== "inherit") return undefined;
  let flags = 0;
  for (let fd = 1; fd <= 2; fd++) {
    if (stdio[fd] === "pipe") flags |= fd === 1 ? SPAWN_PIPE_STDOUT : SPAWN_PIPE_STDERR;
    else if (stdio[fd] !== "inherit") return undefined;
  }
  return flags;
}

/** The addon, or undefined when it cannot load (a bundle copied without baton-reaper.node: child_process does it). */
function addonOrUndefined(warning?: string): NativeAddon | undefined {
  try {
    return loadNativeAddon();
  } catch (error) {
    if (warning) warn(warning.replace("%s", error instanceof Error ? error.message : String(error)));
    return undefined;
  }
}

/** The command and its environment as UTF-8 bytes, as child_process would pass them. */
function textLaunch(program: string, args: readonly string[], variables: NodeJS.ProcessEnv): ExactLaunch {
  const env: Buffer[] = [];
  for (const [key, value] of Object.entries(variables)) if (value !== undefined) env.push(Buffer.from(`${key}=${value}`));
  const argv: Buffer[] = [];
  for (const word of [program, ...args]) argv.push(Buffer.from(word)); // a loop: a callback would compile now
  return { argv, env };
}

function startWithAddon(addon: NativeAddon, launch: ExactLaunch, flags: number): SpawnedProcess {
  // A NUL byte cannot reach exec(2) (a substituted result can hold one): the error child_process gives for it.
  if (holdsNul(launch.argv) || holdsNul(launch.env)) {
    const error: NodeJS.ErrnoException = Object.assign(new TypeError(`spawn ${launch.argv[0]}: an argument or environment variable holds a NUL byte`), { code: "ERR_INVALID_ARG_VALUE" });
    return new FailedProcess(error);
  }
  return startedByAddon(addon, launch, flags);
}

function holdsNul(words: readonly Buffer[]): boolean {
  for (const bytes of words) if (bytes.includes(0)) return true;
  return false;
}

/**
 * A command started by the addon (posix_spawnp, setsid; stdout and stderr inherited or pipes). Its exit status is not
 * libuv's to collect: each SIGCHLD asks the addon for it (the reaper leaves a tracked pid alone, src/run/children.ts).
 * A function, not a class: a class's constructor cannot be compiled eagerly.
 */
function startedByAddon(addon: NativeAddon, { argv, env }: ExactLaunch, flags: number): SpawnedProcess {
  // spawnBytes is the older addon's form (no pipes, /bin/sh for scripts), and what a plain step needs.
  const [pid, outFd, errFd] = addon.spawnWith ? addon.spawnWith(argv[0]!, argv, env, flags) : [addon.spawnBytes(argv[0]!, argv, env), -1, -1];
  if (pid < 0) {
    const code = errnoName(pid);
    const program = argv[0]!.toString();
    return new FailedProcess(Object.assign(new Error(`spawn ${program} ${code}`), { errno: pid, code, syscall: `spawn ${program}`, path: program }));
  }
  const child: SpawnedProcess & EventEmitter = Object.assign(new EventEmitter(), { pid, stdout: pipeReader(outFd), stderr: pipeReader(errFd) });
  // A signal listener does not keep Node's event loop alive, and nothing else might while the command runs: without
  // this handle baton would end at once with 0. A timer that never fires costs no wake-up.
  const running = setInterval(() => {}, 2 ** 31 - 1);
  function collect() {
    const status = addon.waitStatus(pid);
    if (status === -1) return;
    process.removeListener("SIGCHLD", collect);
    clearInterval(running);
    const signal = status & 0x7f;
    const name = signal === 0 ? null : (Object.keys(constants.signals).find((n) => constants.signals[n as NodeJS.Signals] === signal) as NodeJS.Signals);
    // A real-time signal (32-64) has no name in os.constants: its death still gives 128+N, as a shell says.
    const code = signal === 0 ? (status >> 8) & 0xff : name ? null : 128 + signal;
    child.emit("exit", code, name ?? null);
  }
  process.on("SIGCHLD", collect);
  setImmediate(collect); // in case it ended before the listener was there
  return child;
}

/** The read end of a command's stdout or stderr pipe as a stream (as child_process gives it), or null for -1. */
function pipeReader(fd: number): Readable | null {
  if (fd < 0) return null;
  const { Socket } = lazyBuiltin<typeof import("node:net")>("node:net");
  return new Socket({ fd, readable: true, writable: false });
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

/**
 * Loads now what the next spawnProcess() will need, for a step about to wait: node:net for captured output's pipes,
 * child_process (net, stream, dgram) without the addon, and the bytes of
 * baton's argv and environment (exact-bytes.ts) are then paid while the step is idle, not between the previous step's
 * post file and its own command (make bench, rows 1c and 8).
 */
export function prepareToSpawn(piped: boolean): void {
  if (!addonOrUndefined()) childProcess();
  else if (piped) lazyBuiltin("node:net");
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
