import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { NAME_MAX } from "./files.js";

let counter = 0;

/**
 * Writes `content` to `path` so that a reader sees either nothing or the whole file: a temporary file in the same
 * folder, then rename. Parent folders are created. `mode` as open(2) takes it (the umask applies). Throws the system error (ENOSPC, EROFS, ...) on failure.
 */
export function writeFileAtomic(path: string, content: string, mode = 0o666): void {
  const folder = dirname(path);
  mkdirSync(folder, { recursive: true });
  const temporary = join(folder, temporaryName(basename(path)));
  try {
    writeFileSync(temporary, content, { mode });
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

/**
 * `.NAME.PID.N.tmp`, with NAME cut short where the whole would be over NAME_MAX: a post file named with 241-255 bytes
 * is valid, and its temporary name must be too (or the command runs and then nothing is handed on).
 */
export function temporaryName(name: string): string {
  const suffix = `.${process.pid}.${counter++}.tmp`;
  const room = NAME_MAX - 1 - suffix.length;
  let kept = name;
  // Cut by bytes, on a character boundary: names are UTF-8 on disk.
  while (Buffer.byteLength(kept) > room) kept = kept.slice(0, -1);
  return `.${kept}${suffix}`;
}

/**
 * writeFileAtomic, except where `path` is a mount point: the kubelet bind-mounts a container's termination-message
 * file, and rename() onto a mount point fails with EBUSY. There the file is written in place (the kubelet reads it
 * only after the container has exited, so no reader can see it half-written).
 */
export function writeFileAtomicOrInPlace(path: string, content: string): void {
  try {
    writeFileAtomic(path, content);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EBUSY") throw error;
    writeFileSync(path, content);
  }
}
