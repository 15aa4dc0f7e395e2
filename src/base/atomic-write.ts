import { closeSync, constants, fchmodSync, fstatSync, ftruncateSync, lstatSync, openSync, renameSync } from "node:fs";
import { dirname } from "node:path";
import { createTemporaryBeside, makeFolders, refusalOf, removeQuietly, typeName, UnsafeFileError, writeAll } from "./safe-files.js";

const { O_WRONLY, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } = constants;

/**
 * Writes `content` to `path` so that a reader sees either nothing or the whole file, and nothing planted at `path` or
 * beside it is followed: a new temporary file (createTemporaryBeside), then rename. Parent folders are created
 * (makeFolders). `mode`: exactly this mode (fchmod, whatever the umask); without it 0666 less the umask, as open(2) makes it. Throws the
 * system error (ENOSPC, EROFS, ...) on failure, leaving no temporary file behind.
 */
export function writeFileAtomic(path: string, content: string | Buffer, mode?: number): void {
  makeFolders(dirname(path));
  const { fd, temporary } = createTemporaryBeside(path, mode ?? 0o666);
  try {
    try {
      if (mode !== undefined) fchmodSync(fd, mode);
      writeAll(fd, typeof content === "string" ? Buffer.from(content) : content);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, path);
  } catch (error) {
    removeQuietly(temporary);
    throw error;
  }
}

/**
 * writeFileAtomic, except where `path` is a mount point: the kubelet bind-mounts a container's termination-message
 * file, and rename() onto a mount point fails with EBUSY. There the file is written in place (the kubelet reads it
 * only after the container has exited, so no reader can see it half-written), and only when it is a regular file;
 * and where `path` is a character device, written through it.
 */
export function writeFileAtomicOrInPlace(path: string, content: string): void {
  const device = deviceAt(path);
  // A device is written through, as Tekton's entrypoint writes it (`--termination-path /dev/null`), never replaced by
  // a regular file: as root, a rename would take the device node's place on the host. A block device is a disk.
  if (device === "block") throw new UnsafeFileError("a block device, not a regular file", "EINVAL");
  if (device === "character") return writeInPlace(path, content, true);
  try {
    writeFileAtomic(path, content);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EBUSY") throw error;
    writeInPlace(path, content);
  }
}

export function isCharacterDevice(path: string): boolean {
  return deviceAt(path) === "character";
}

function deviceAt(path: string): "character" | "block" | undefined {
  try {
    const stats = lstatSync(path);
    return stats.isCharacterDevice() ? "character" : stats.isBlockDevice() ? "block" : undefined;
  } catch {
    return undefined; // nothing there yet, or nothing baton may look at: the atomic write says what is wrong
  }
}

function writeInPlace(path: string, content: string, device = false): void {
  let fd: number;
  try {
    fd = openSync(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  } catch (error) {
    throw refusalOf(error);
  }
  try {
    const stats = fstatSync(fd);
    if (!(stats.isFile() || (device && stats.isCharacterDevice()))) throw new UnsafeFileError(`${typeName(stats)}, not a regular file`, "EINVAL");
    const bytes = Buffer.from(content);
    writeAll(fd, bytes);
    // Truncate after writing, not with O_TRUNC: a full disk then leaves the old message, not an empty file.
    if (stats.isFile()) ftruncateSync(fd, bytes.length);
  } finally {
    closeSync(fd);
  }
}

