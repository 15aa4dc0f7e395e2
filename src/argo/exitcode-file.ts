import { describeSystemError } from "../base/errors.js";
import { writeFileAtomic } from "../base/atomic-write.js";
import { waitForHandOff } from "../handoff/watch-hand-off.js";
import { readBounded } from "../base/safe-files.js";
import { whyNot } from "./file-error.js";

// ctr/NAME/exitcode: the decimal exit code, no newline, mode 0644, as Argo writes it; but atomically (temp + rename),
// so a reader never sees it empty or half written. Beside it, exitcode.baton-live: this baton's liveness lock
// (liveness-lock.ts), so a container that waits on this one notices when it dies without writing its exitcode.

/** How often a dependency's exitcode is looked at besides the folder's events, while its writer is not a baton. */
const SAFETY_POLL_MS = 1000;

export function writeExitCode(path: string, code: number): void {
  writeFileAtomic(path, String(code), 0o644);
}

/** Go's strconv.Atoi(strings.TrimSpace(text)), or undefined where Go fails. */
export function parseGoInt(text: string): number | undefined {
  const trimmed = text.trim();
  if (!/^[+-]?\d+$/.test(trimmed)) return undefined;
  const value = Number(trimmed);
  return Number.isSafeInteger(value) ? value : undefined;
}

/** A dependency's exitcode: its code, undefined while it is absent or not a number yet. Throws on a hostile file. */
export function readExitCode(path: string): number | undefined {
  let text: string;
  try {
    text = readBounded(path, 64).toString("utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR" || code === "EFBIG") return undefined; // longer: not a number, as Argo sees it
    throw new Error(`cannot read ${whyNot(path, error)}`);
  }
  return parseGoInt(text);
}

export interface ExitCodeWait {
  signal: AbortSignal;
  warn: (message: string) => void;
}

/**
 * Waits until `path` holds an exit code (Argo: waitForDependencyExitCode), or its writer's liveness lock says that
 * baton died without writing one ("died"). Rejects with the abort reason, or an Error for a file that is not one.
 */
export function waitForExitCode(path: string, options: ExitCodeWait): Promise<number | "died"> {
  // "died": the dependency's baton let go of its lock (it writes its exitcode first) and left no exitcode.
  return waitForHandOff<number | "died">(path, () => readExitCode(path), {
    died: "died",
    signal: options.signal,
    followWriter: true,
    safetyPollMs: SAFETY_POLL_MS,
    warn: options.warn,
    refused: (folder, error) => new Error(`cannot watch ${folder} for ${path}: ${describeSystemError(error)}`),
  });
}
