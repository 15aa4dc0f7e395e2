import { statSync } from "node:fs";

/** The longest file name Linux file systems take (NAME_MAX), in bytes. */
export const NAME_MAX = 255;

/** The longest path Linux system calls take (PATH_MAX), in bytes with its terminating NUL. */
export const PATH_MAX = 4096;

/** stat that follows symlinks; undefined for ENOENT, or ENOTDIR while a folder on the way is still a file. */
export function statOrUndefined(path: string) {
  try {
    return statSync(path, { throwIfNoEntry: false }); // no exception to build for the common ENOENT: waiters look often
  } catch {
    return undefined;
  }
}
