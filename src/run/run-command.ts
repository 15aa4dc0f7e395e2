import { readdirSync, readFileSync } from "node:fs";
import type { Readable } from "node:stream";
import { trackChild } from "./children.js";
import { after, monotonicMs, sleep, type Deadline } from "../base/clock.js";
import { describeSystemError } from "../base/errors.js";
import { exitCodeOf, isBatonFault, spawnErrorExitCode } from "./exit-code.js";
import { spawnProcess, type SpawnOptions } from "./start-process.js";

// Runs the command in a process group of its own (detached: setsid), so a signal or a kill reaches everything it
// started, grandchildren included. The price: the command has no controlling terminal, which a pod's step never has.
// stdio is inherited unless the caller asks for a pipe (output capture): `done` follows the command's own exit, not
// the pipes' end, so a grandchild that holds a pipe open never keeps baton waiting here.

export interface CommandResult {
  exitCode: number;
  /** The signal that killed the command, if one did. */
  signal: NodeJS.Signals | null;
  /** Set when the command could not be started at all (exit code 126 or 127). */
  spawnError?: string;
  /** Set with spawnError when baton, not the command, is at fault: no process or descriptor left (EAGAIN, EMFILE...). */
  batonFault?: boolean;
  /** Set when stop() was called before the command ended: the signal it sent first. */
  stoppedWith?: NodeJS.Signals;
}

export interface RunningCommand {
  /** The command's pid, which is also its process group id; undefined if it could not start. */
  readonly pid: number | undefined;
  /** The command's stdout and stderr when they were asked for as pipes; null when inherited. */
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  /**
   * Settles when the command has exited and, after a stop(), once the rest of its process group is gone too
   * (killed when the grace period ended, and given up to KILL_SETTLE_MS to die).
   */
  readonly done: Promise<CommandResult>;
  /** Sends a signal to the whole process group. */
  /** A name, or the number of a real-time signal: kill(2) takes either. */
  signal(signal: NodeJS.Signals | number): void;
  /** Stops the command on purpose: `signal` to its group now, SIGKILL to the group `graceMs` later if any is left. */
  stop(signal: NodeJS.Signals, graceMs: number): void;
}

export interface RunOptions extends SpawnOptions {
  /** Where the command's stdout and stderr go (default: inherited). */
  stdio?: "inherit" | "ignore" | ["inherit", "inherit" | "pipe", "inherit" | "pipe"];
}

/** How often a stopped command's group is checked for members left behind once its leader has exited. */
const GROUP_CHECK_MS = 20;
/** SIGKILL is not instant (a process in the middle of I/O dies when it returns): how long to let the group die. */
const KILL_SETTLE_MS = 2000;

export function startCommand(argv: readonly string[], options: RunOptions = {}): RunningCommand {
  const [program, ...args] = argv as [string, ...string[]];
  const child = spawnProcess(program, args, options.stdio ?? "inherit", options);
  trackChild(child);
  const pid = child.pid;
  let stoppedWith: NodeJS.Signals | undefined;
  let killAt: number | undefined;
  let killTimer: Deadline | undefined;

  const killGroup = () => signalGroup(pid!, "SIGKILL");

  const exited = new Promise<CommandResult>(function settleOnExit(resolve: (result: CommandResult) => void) {
    let settled = false;
    child.once("error", (error: NodeJS.ErrnoException) => {
      if (settled) return;
      settled = true;
      const exitCode = spawnErrorExitCode(error.code);
      if (isBatonFault(error.code)) {
        resolve({ exitCode, signal: null, batonFault: true, spawnError: `cannot start the command ${program}: ${describeSystemError(error)}` });
        return;
      }
      const why =
        exitCode === 127 ? "command not found"
        : error.code === "E2BIG" ? "the arguments and environment are too long for exec(2)"
        : error.code === "ENOEXEC" ? "command cannot be executed (exec format error: no #! line, or another architecture's binary)"
        : "command cannot be executed";
      resolve({ exitCode, signal: null, spawnError: `${why}: ${program} (${error.code})` });
    });
    child.once("exit", function onExit(code: number | null, signal: NodeJS.Signals | null) {
      if (settled) return;
      settled = true;
      resolve({ exitCode: exitCodeOf(code, signal), signal });
    });
  });

  const done = exited.then(async function afterStop(result: CommandResult): Promise<CommandResult> {
    if (stoppedWith === undefined || pid === undefined) return result;
    // A stop is over when nothing of the group is left: grandchildren get the rest of the grace period, then SIGKILL.
    // The monotonic clock: a wall-clock step (NTP, a resumed VM) must not cut the grace period short.
    while (groupExists(pid) && monotonicMs() < killAt!) await sleep(GROUP_CHECK_MS);
    if (groupExists(pid)) killGroup();
    killTimer?.clear();
    // Settle only once the killed members are really gone, so whatever baton does next sees none of them.
    const settleBy = monotonicMs() + KILL_SETTLE_MS;
    while (groupExists(pid) && monotonicMs() < settleBy) await sleep(GROUP_CHECK_MS);
    return { ...result, stoppedWith };
  });

  return {
    pid,
    stdout: child.stdout,
    stderr: child.stderr,
    done,
    signal(signal) {
      if (pid !== undefined) signalGroup(pid, signal);
    },
    stop(signal, graceMs) {
      if (pid === undefined || stoppedWith !== undefined) return;
      stoppedWith = signal;
      killAt = monotonicMs() + graceMs;
      signalGroup(pid, signal);
      killTimer = after(graceMs, killGroup);
    },
  };
}

/** Sends `signal` to a whole process group; a group that is already gone is not an error. */
export function signalGroup(pgid: number, signal: NodeJS.Signals | number): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: every member has exited.
  }
}

function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  return hasLiveMember(pgid);
}

/**
 * kill(-pgid, 0) also finds zombies: dead members nobody reaps (an orphan under a PID 1 that reaps only its own
 * children). A stop must not wait out the grace period for them, so look at each member's state in /proc.
 */
function hasLiveMember(pgid: number): boolean {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return true; // no /proc: trust kill()
  }
  if (!entries.includes("self")) return true;
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // it just exited
    }
    // After "(comm)": state, ppid, pgrp, ...
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(pgrp) === pgid && state !== "Z" && state !== "X") return true;
  }
  return false;
}
