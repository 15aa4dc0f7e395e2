import { spawn } from "node:child_process";
import { exitCodeOf, spawnErrorExitCode } from "./exit-code.js";

// Runs the command in a process group of its own (detached: setsid), so a signal or a kill reaches everything it
// started, grandchildren included. The price: the command has no controlling terminal, which a pod's step never has.
// stdio is inherited, not piped: piped output would keep baton waiting for every grandchild that holds the pipe.

export interface CommandResult {
  exitCode: number;
  /** The signal that killed the command, if one did. */
  signal: NodeJS.Signals | null;
  /** Set when the command could not be started at all (exit code 126 or 127). */
  spawnError?: string;
}

export interface RunHooks {
  /** Called once the command runs; its pid is also its process group id. */
  onStart?(pid: number): void;
}

export function runCommand(argv: readonly string[], hooks: RunHooks = {}): Promise<CommandResult> {
  const [program, ...args] = argv as [string, ...string[]];
  return new Promise((resolve) => {
    const child = spawn(program, args, { stdio: "inherit", detached: true });
    let settled = false;
    child.once("error", (error: NodeJS.ErrnoException) => {
      if (settled) return;
      settled = true;
      const exitCode = spawnErrorExitCode(error.code);
      const why = exitCode === 127 ? "command not found" : "command cannot be executed";
      resolve({ exitCode, signal: null, spawnError: `${why}: ${program} (${error.code})` });
    });
    child.once("exit", (code, signal) => {
      if (settled) return;
      settled = true;
      resolve({ exitCode: exitCodeOf(code, signal), signal });
    });
    if (child.pid !== undefined) hooks.onStart?.(child.pid);
  });
}

/** Sends `signal` to the command's whole process group; a group that is already gone is not an error. */
export function signalGroup(pid: number, signal: NodeJS.Signals | number): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: every member has exited.
  }
}
