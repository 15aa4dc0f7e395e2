import { describeSystemError } from "../base/errors.js";
import { UnsafeFileError } from "../base/safe-files.js";

/** Why `path` could not be read or opened, naming it: "P is a FIFO, not a regular file", "P: no such file (ENOENT)". */
export function whyNot(path: string, error: unknown): string {
  return error instanceof UnsafeFileError ? `${path} is ${error.message}` : `${path}: ${describeSystemError(error)}`;
}
