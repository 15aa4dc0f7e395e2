import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readSync, statSync, unlinkSync, writeSync, type Stats } from "node:fs";
import { basename, dirname, join } from "node:path";
import { NAME_MAX } from "./files.js";
import { lazyBuiltin } from "./builtin.js";

// The run folders are shared by containers of different images and authors: any path baton did not create may be a
// symlink to another step's secret, a FIFO that blocks open(2) for ever, a device that never ends, or a folder. The one
// way baton touches such a path is here:
// - reading: open with O_NOFOLLOW (a symlink as the last component is refused, ELOOP) and O_NONBLOCK (opening a FIFO
//   returns at once; O_NONBLOCK changes nothing for a regular file), fstat, refuse anything but a regular file, then
//   read at most a documented number of bytes: more is an error, never a silent truncation;
// - creating: O_CREAT|O_EXCL|O_NOFOLLOW under a name with 64 random bits, then rename into place (rename replaces a
//   planted symlink or FIFO itself, never what it points to);
// - writing in place where rename cannot (a bind-mounted file): O_NOFOLLOW|O_NONBLOCK, and only into a regular file;
// - a wake FIFO (src/handoff/liveness-lock.ts): O_NOFOLLOW|O_NONBLOCK, a FIFO only, never read.
// Every call is synchronous and none of them can block on a FIFO. docs/reference.md#files-baton-did-not-write lists
// what each kind of file is allowed.

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_APPEND, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } = constants;

const READ_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
const CREATE_FLAGS = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY;

/** Bounds on what baton reads from a file it did not write, in bytes, by kind (docs/reference.md lists them). */
export const READ_LIMIT = {
  /** A result file, a step result, a `$(steps...)` result, an artifacts provenance.json. */
  result: 1024 * 1024,
  /**
   * What is already in the termination message file: the kubelet keeps 4096 bytes, so more is not a message baton
   * or Tekton wrote.
   */
  terminationMessage: 4096,
  /** A credential file: a Kubernetes Secret holds at most 1 MiB. */
  secret: 1024 * 1024,
  /** A script under <root>/scripts: a pod spec (which carries it) is at most 1.5 MiB in etcd (its request limit). */
  script: 2 * 1024 * 1024,
  /** A debug breakpoint's exit-code file: an integer. */
  exitCode: 4096,
} as const;

/**
 * A refusal of a path baton did not write. Its message says what the path is, as a phrase that follows "PATH is"
 * ("a FIFO, not a regular file", "larger than N bytes, ..."); its code is the closest errno (ELOOP, EISDIR, EINVAL for
 * another type, EFBIG for the size).
 */
export class UnsafeFileError extends Error {
  constructor(message: string, readonly code: string) {
    super(message);
  }
}

/** `followSymlink`: only for a folder the kubelet mounted read-only (a Secret's keys are symlinks into ..data/). */
export interface ReadOptions {
  followSymlink?: boolean;
}

/**
 * Opens `path` for reading without following a symlink at its last component and without blocking, and checks it is
 * a regular file. ENOENT and other errors from open(2) are thrown as they are (ELOOP becomes a clear refusal).
 */
export function openRegularFile(path: string, options: ReadOptions = {}): { fd: number; stats: Stats } {
  return openOfType(path, options.followSymlink ? READ_FLAGS & ~O_NOFOLLOW : READ_FLAGS, (stats) => stats.isFile(), "a regular file");
}

/**
 * Opens the FIFO at `path` (`O_RDONLY`, or `O_RDWR` for its writer: opening a FIFO read-write never blocks) without
 * following a symlink and without blocking, and checks it is a FIFO: a folder, a file or a device planted at that name
 * is closed again and refused (UnsafeFileError). A wake FIFO is never read: there is no bound to keep.
 */
export function openFifo(path: string, access: number): number {
  return openOfType(path, access | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, (stats) => stats.isFIFO(), "a FIFO").fd;
}

/** open(2) with `flags`, then fstat: what is there must be `wanted` (else closed again, UnsafeFileError "..., not WHAT"). */
function openOfType(path: string, flags: number, wanted: (stats: Stats) => boolean, what: string): { fd: number; stats: Stats } {
  let fd: number;
  try {
    fd = openSync(path, flags);
  } catch (error) {
    throw refusalOf(error);
  }
  let stats: Stats;
  try {
    stats = fstatSync(fd);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  if (!wanted(stats)) {
    closeSync(fd);
    throw new UnsafeFileError(`${typeName(stats)}, not ${what}`, stats.isDirectory() ? "EISDIR" : "EINVAL");
  }
  return { fd, stats };
}

/**
 * The whole content of the regular file at `path`, at most `limit` bytes: a longer file is an error (EFBIG), not a
 * prefix. Throws ENOENT as it is, so callers can tell a missing file.
 */
export function readBounded(path: string, limit: number, options: ReadOptions = {}): Buffer {
  const { fd, stats } = openRegularFile(path, options);
  try {
    return readOpened(fd, stats, limit);
  } finally {
    closeSync(fd);
  }
}

/** The rest of the regular file open at `fd` (its `stats` from openRegularFile), at most `limit` bytes (else EFBIG). */
export function readOpened(fd: number, stats: Stats, limit: number): Buffer {
  if (stats.size > limit) throw overLimit(limit);
  // Read to the end, not to stats.size: the file may grow while it is read.
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const chunk = Buffer.allocUnsafe(Math.min(limit + 1 - total, 64 * 1024));
    const n = readSync(fd, chunk, 0, chunk.length, null);
    if (n === 0) break;
    total += n;
    if (total > limit) throw overLimit(limit);
    chunks.push(n === chunk.length ? chunk : chunk.subarray(0, n));
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
}

export function readTextBounded(path: string, limit: number, options: ReadOptions = {}): string {
  return readBounded(path, limit, options).toString("utf8");
}

/** readTextBounded, or undefined when there is no file at `path`. */
export function readOptionalText(path: string, limit: number, options: ReadOptions = {}): string | undefined {
  try {
    return readTextBounded(path, limit, options);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/**
 * A new file beside `path`, under a name nobody can predict (`.NAME.<16 hex>.tmp`, NAME cut short to fit NAME_MAX),
 * created with O_EXCL|O_NOFOLLOW: whatever was planted in the folder is never opened. The caller writes `fd`, then
 * renames `temporary` onto `path` (or removes it).
 */
// Not called at start any more (the liveness file is the addon's), so first at the hand-on unless compiled eagerly.
export function createTemporaryBeside(path: string, mode = 0o644): { fd: number; temporary: string } {
  const temporary = join(dirname(path), temporaryName(basename(path)));
  return { fd: openSync(temporary, CREATE_FLAGS, mode), temporary };
}

/** `.NAME.<16 hex>.tmp`, NAME cut by bytes, on a character boundary, where the whole would be over NAME_MAX. */
export function temporaryName(name: string): string {
  const suffix = `.${randomBytes(8).toString("hex")}.tmp`;
  const room = NAME_MAX - 1 - suffix.length;
  let kept = name;
  while (Buffer.byteLength(kept) > room) kept = kept.slice(0, -1);
  return `.${kept}${suffix}`;
}

/**
 * `count` unpredictable bytes from the kernel's /dev/urandom (never blocks). Not node:crypto: loading it costs every
 * waiting step RssAnon (measured in docs/design.md#what-a-waiting-step-holds), and every step makes a name at its
 * start (its liveness file). node:crypto only where /dev/urandom cannot be read.
 */
function randomBytes(count: number): Buffer {
  const bytes = Buffer.alloc(count);
  try {
    const fd = openSync("/dev/urandom", "r");
    try {
      if (readSync(fd, bytes, 0, count, null) === count) return bytes;
    } finally {
      closeSync(fd);
    }
  } catch {
    // No /dev/urandom in this container: the module below reads the same kernel source (getrandom).
  }
  return lazyBuiltin<typeof import("node:crypto")>("node:crypto").randomBytes(count);
}

/**
 * Opens `path` to append to it, creating it when missing: never through a symlink, never blocking (a FIFO without a
 * reader is ENXIO), and only a regular file or a FIFO (whose writes stay non-blocking: the caller drops what does not
 * fit). The events file.
 */
export function openForAppend(path: string): number {
  let fd: number;
  try {
    fd = openSync(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0o644);
  } catch (error) {
    throw refusalOf(error);
  }
  const stats = fstatSync(fd);
  if (!stats.isFile() && !stats.isFIFO()) {
    closeSync(fd);
    throw new UnsafeFileError(`${typeName(stats)}, not a regular file or a FIFO`, "EINVAL");
  }
  return fd;
}

/**
 * mkdir -p that reports the real failure: Node's recursive mkdir reports ENOENT for a folder it could not create on a
 * read-only file system (it tries the parent, which exists). Each missing folder is made with `mode`; an existing
 * part that is not a folder is ENOTDIR.
 */
export function makeFolders(folder: string, mode = 0o777): void {
  try {
    mkdirSync(folder, { mode });
    return;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") {
      if (isFolder(folder)) return;
      throw Object.assign(new Error(`not a directory, mkdir '${folder}'`), { code: "ENOTDIR" });
    }
    if (code !== "ENOENT" || dirname(folder) === folder) throw error;
  }
  makeFolders(dirname(folder), mode);
  try {
    mkdirSync(folder, { mode });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST" || !isFolder(folder)) throw error;
  }
}

/**
 * A folder of baton's own at `folder` (made with `mode` when missing, its parents as makeFolders does) that is not a
 * symlink: files written into it cannot land elsewhere (credentials into $HOME/.ssh, $HOME/.docker).
 */
export function makeOwnFolder(folder: string, mode: number): void {
  makeFolders(dirname(folder));
  try {
    mkdirSync(folder, { mode });
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const stats = lstatSync(folder);
  if (stats.isSymbolicLink()) throw new UnsafeFileError(`${folder} is a symbolic link, which baton does not follow in shared folders`, "ELOOP");
  if (!stats.isDirectory()) throw new UnsafeFileError(`${folder} is ${typeName(stats)}, not a directory`, "ENOTDIR");
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

export function writeAll(fd: number, bytes: Buffer): void {
  for (let offset = 0; offset < bytes.length; ) offset += writeSync(fd, bytes, offset);
}

export function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone, or never made
  }
}

/** open(2)'s ELOOP under O_NOFOLLOW means the last component is a symlink: say so. */
export function refusalOf(error: unknown): unknown {
  if ((error as NodeJS.ErrnoException).code !== "ELOOP") return error;
  return new UnsafeFileError("a symbolic link, which baton does not follow in shared folders", "ELOOP");
}

function overLimit(limit: number): UnsafeFileError {
  return new UnsafeFileError(`larger than ${limit} bytes, the limit for this file`, "EFBIG");
}

export function typeName(stats: Stats): string {
  if (stats.isFIFO()) return "a FIFO";
  if (stats.isDirectory()) return "a directory";
  if (stats.isCharacterDevice()) return "a character device";
  if (stats.isBlockDevice()) return "a block device";
  if (stats.isSocket()) return "a socket";
  if (stats.isSymbolicLink()) return "a symbolic link";
  return stats.isFile() ? "a regular file" : "a file of an unknown type";
}
