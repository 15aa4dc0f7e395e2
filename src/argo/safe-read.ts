import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";

// Reading a file that someone else put in a shared folder: never through a symlink (unless asked), never a FIFO or a
// device (open with O_NONBLOCK, then fstat: nothing can block the main thread), and never more than `limit` bytes.

export class NotRegularFile extends Error {
  constructor(readonly path: string, readonly kind: string) {
    super(`${path} is ${kind}, not a regular file`);
  }
}

export interface SafeReadOptions {
  /** Follow a symlink at the path itself (a ConfigMap's files are symlinks); folders on the way are always followed. */
  follow?: boolean;
}

/** The file's bytes; throws ENOENT and the like as they come, NotRegularFile, or an Error when over `limit`. */
export function readRegularFile(path: string, limit: number, options: SafeReadOptions = {}): Buffer {
  const flags = constants.O_RDONLY | constants.O_NONBLOCK | (options.follow ? 0 : constants.O_NOFOLLOW);
  let fd: number;
  try {
    fd = openSync(path, flags);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ELOOP" && !options.follow) throw new NotRegularFile(path, "a symlink");
    throw error;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new NotRegularFile(path, kindOf(stats));
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(64 * 1024, limit + 1 - total));
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      chunks.push(chunk.subarray(0, n));
      total += n;
      if (total > limit) throw new Error(`${path} is larger than ${limit} bytes`);
    }
    return Buffer.concat(chunks, total);
  } finally {
    closeSync(fd);
  }
}

export function kindOf(stats: { isDirectory(): boolean; isFIFO(): boolean; isSymbolicLink(): boolean; isSocket(): boolean }): string {
  if (stats.isDirectory()) return "a directory";
  if (stats.isFIFO()) return "a FIFO";
  if (stats.isSymbolicLink()) return "a symlink";
  if (stats.isSocket()) return "a socket";
  return "a device";
}
