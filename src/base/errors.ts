// Errors a user should see are values with a message and an exit code; only main.ts prints them.
import { getSystemErrorMap } from "node:util";

export const EXIT_USAGE = 2;
export const EXIT_FAILURE = 1;

export class BatonError extends Error {
  constructor(message: string, readonly exitCode: number = EXIT_FAILURE) {
    super(message);
    this.name = "BatonError";
  }
}

export function usageError(message: string): BatonError {
  return new BatonError(message, EXIT_USAGE);
}

/** The short text of a system error: "ENOENT: no such file or directory, open '/x'" -> "no such file or directory". */
export function describeSystemError(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  if (e && typeof e.code === "string" && typeof e.message === "string") {
    const text = e.message.replace(/^[A-Z0-9]+: /, "").replace(/, \w+(?: '.*')?$/, "");
    return `${text} (${e.code})`;
  }
  return String(e && e.message ? e.message : error);
}

/** The error Node would have thrown for a system call that failed with -`negativeErrno` (the addon's answers). */
export function errnoError(negativeErrno: number, syscall: string, path: string): NodeJS.ErrnoException {
  const [code, text] = getSystemErrorMap().get(negativeErrno) ?? [`errno ${-negativeErrno}`, "unknown error"];
  return Object.assign(new Error(`${code}: ${text}, ${syscall} '${path}'`), { errno: negativeErrno, code, syscall, path });
}
