import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readlinkSync, readSync, statSync, type BigIntStats, writeSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";
import { createWriteStream } from "node:fs";
import { userAndGroupNames } from "./user-names.js";
import { BLOCK, padding, tarHeader, type TarEntry } from "./tar-header.js";

// An output artifact as Argo's util/archive TarGzToWriter writes it: a file becomes one entry named by its base name;
// a folder is walked as filepath.Walk walks it (lstat, names in byte order, symlinks not followed) and every entry is
// named BASE/RELATIVE, folders without a trailing slash. Headers as Go's archive/tar writes them (tar-header.ts).
// Compressed at gzip's default level with Go's gzip header (no name, no time, OS byte 255); the DEFLATE bytes are
// zlib's, not Go's compress/flate's: the same archive, not the same compressed bytes.

const READ_SIZE = 64 * 1024;
/** The gzip header's OS byte, which Go's compress/gzip writes as 255 ("unknown") and zlib as 3 ("Unix"). */
const GZIP_OS_OFFSET = 9;

/** Writes the .tgz of `source` into `fd` (a new file the caller opened, and closes). */
export async function writeTarGz(source: string, fd: number): Promise<void> {
  const absolute = resolve(source);
  const stats = statSync(absolute);
  if (!stats.isFile() && !stats.isDirectory()) throw new Error(`${absolute} is not a regular file or directory`);
  const blocks = stats.isDirectory() ? walkFolder(absolute) : singleFile(absolute);
  const file = createWriteStream("", { fd, autoClose: false });
  await pipeline(Readable.from(archive(blocks)), createGzip({ level: 6 }), file);
  writeSync(fd, Buffer.from([0xff]), 0, 1, GZIP_OS_OFFSET);
}

function* archive(entries: Generator<Buffer>): Generator<Buffer> {
  yield* entries;
  yield Buffer.alloc(2 * BLOCK); // the end: two zero blocks, and no padding to a record size (Go writes none)
}

/** tarFile: the file opened (a symlink followed), its header from fstat, named by the path's base name. */
function* singleFile(path: string): Generator<Buffer> {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stats = fstatSync(fd, { bigint: true });
    if (!stats.isFile()) throw new Error(`${path} is not a regular file or directory`);
    yield tarHeader(entryOf(stats, basename(path), ""));
    yield* contents(fd, Number(stats.size), path);
  } finally {
    closeSync(fd);
  }
}

/** tarDir: filepath.Walk from the folder, each entry named BASE/RELATIVE. */
function* walkFolder(root: string): Generator<Buffer> {
  const base = basename(root);
  function* visit(path: string, stats: BigIntStats): Generator<Buffer> {
    const rel = relative(root, path);
    const name = rel === "" ? base : `${base}/${rel}`;
    const link = stats.isSymbolicLink() ? readlinkSync(path) : "";
    yield tarHeader(entryOf(stats, name, link));
    if (stats.isFile()) {
      const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
      try {
        if (!fstatSync(fd).isFile()) throw new Error(`${path} changed while it was archived`);
        yield* contents(fd, Number(stats.size), path);
      } finally {
        closeSync(fd);
      }
    }
    if (!stats.isDirectory()) return;
    const names = readdirSync(path).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    for (const child of names) {
      const childPath = join(path, child);
      yield* visit(childPath, lstatSync(childPath, { bigint: true }));
    }
  }
  yield* visit(root, lstatSync(root, { bigint: true }));
}

/** Exactly `size` bytes, padded to a block: a file that shrank or grew meanwhile fails, as Go's writer fails it. */
function* contents(fd: number, size: number, path: string): Generator<Buffer> {
  let left = size;
  while (left > 0) {
    const chunk = Buffer.allocUnsafe(Math.min(READ_SIZE, left));
    const n = readSync(fd, chunk, 0, chunk.length, null);
    if (n === 0) throw new Error(`archive/tar: missed writing ${left} bytes of ${path}`);
    left -= n;
    yield chunk.subarray(0, n);
  }
  if (readSync(fd, Buffer.allocUnsafe(1), 0, 1, null) > 0) throw new Error(`archive/tar: write too long (${path} grew)`);
  const pad = padding(size);
  if (pad > 0) yield Buffer.alloc(pad);
}

/** tar.FileInfoHeader's fields for a file. */
function entryOf(stats: BigIntStats, name: string, linkname: string): TarEntry {
  let typeflag: string;
  if (stats.isFile()) typeflag = "0";
  else if (stats.isDirectory()) typeflag = "5";
  else if (stats.isSymbolicLink()) typeflag = "2";
  else if (stats.isCharacterDevice()) typeflag = "3";
  else if (stats.isBlockDevice()) typeflag = "4";
  else if (stats.isFIFO()) typeflag = "6";
  else throw new Error("archive/tar: sockets not supported");
  const names = userAndGroupNames(Number(stats.uid), Number(stats.gid));
  const rdev = stats.rdev;
  const device = typeflag === "3" || typeflag === "4";
  return {
    name,
    typeflag,
    linkname,
    mode: Number(stats.mode & 0o7777n),
    uid: Number(stats.uid),
    gid: Number(stats.gid),
    uname: names.user,
    gname: names.group,
    size: typeflag === "0" ? Number(stats.size) : 0,
    mtime: roundedSeconds(stats.mtimeNs),
    // Linux's dev_t encoding (golang.org/x/sys/unix Major, Minor).
    devmajor: device ? Number(((rdev & 0xfff00n) >> 8n) | ((rdev >> 32n) & 0xfffff000n)) : 0,
    devminor: device ? Number((rdev & 0xffn) | ((rdev >> 12n) & 0xffffff00n)) : 0,
  };
}

/** time.Time.Round(time.Second): the nearest second, halves up. */
function roundedSeconds(ns: bigint): number {
  const second = 1_000_000_000n;
  let seconds = ns / second;
  let rest = ns % second;
  if (rest < 0n) {
    seconds -= 1n;
    rest += second;
  }
  return Number(rest >= second / 2n ? seconds + 1n : seconds);
}
