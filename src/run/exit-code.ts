import { constants } from "node:os";

// tini's rule: a child that exited gives its own code; one killed by signal N gives 128+N.

export const EXIT_TIMEOUT = 124;
export const EXIT_NOT_EXECUTABLE = 126;
export const EXIT_NOT_FOUND = 127;

/** A signal's number; a real-time signal, which has no name, is its number already. */
export function signalNumber(signal: NodeJS.Signals | number): number {
  return typeof signal === "number" ? signal : constants.signals[signal];
}

export function exitCodeOf(code: number | null, signal: NodeJS.Signals | null): number {
  if (signal) return 128 + signalNumber(signal);
  return code ?? 1;
}

/** The exit code for a command that could not be started, as a shell would give it. */
export function spawnErrorExitCode(errno: string | undefined): number {
  return errno === "ENOENT" ? EXIT_NOT_FOUND : EXIT_NOT_EXECUTABLE;
}

/**
 * Spawn errors that say nothing about the command: the pod is out of processes or memory, or baton out of descriptors
 * (fork or pipe failed). Reporting them as 126 "not executable" would blame the command for baton's failure.
 */
const BATON_FAULTS: ReadonlySet<string> = new Set(["EAGAIN", "EMFILE", "ENFILE", "ENOMEM"]);

export function isBatonFault(errno: string | undefined): boolean {
  return errno !== undefined && BATON_FAULTS.has(errno);
}
