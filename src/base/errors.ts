// Errors a user should see are values with a message and an exit code; only main.ts prints them.

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

/**
 * A chunk (src/process/chunks.ts) bundles its own copy of this module, so its BatonErrors fail `instanceof BatonError`
 * here: this turns one back into ours (message and exit code kept). Not Symbol.hasInstance on the class: defining it
 * makes V8 drop a fast path of every `instanceof`, which cost every step ~2% of its start-up instructions.
 */
export function fromChunk(error: unknown): unknown {
  if (error instanceof BatonError || !(error instanceof Error) || error.name !== "BatonError") return error;
  const exitCode = (error as { exitCode?: unknown }).exitCode;
  return new BatonError(error.message, typeof exitCode === "number" ? exitCode : EXIT_FAILURE);
}
