import { closeSync, openSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { describeSystemError } from "../base/errors.js";
import { temporaryName } from "../base/atomic-write.js";
import { loadNativeAddon } from "../addon/load-addon.js";

// A killed step must not hang the chain. Each baton holds an advisory lock (flock) on POST.lock, beside its post
// file, from its start until it exits; the kernel drops the lock when the process dies, however it dies (SIGKILL, the
// OOM killer, a crash). A waiter that finds POST.lock there, its lock free, and still no POST or POST.err, knows the
// step it waits for died without handing on. flock works across PID namespaces and needs only read access: Tekton
// mounts the other steps' folders read-only. What it cannot see: a baton that dies before it takes the lock (the
// first milliseconds of its start), and a restarted container (its new baton takes the lock again).
// flock() is not in Node: baton's native addon (src/addon/) has it.

/** How often a waiter looks at the lock of the step it waits for: a death is noticed within this (and < 2 s). */
export const LIVENESS_POLL_MS = 500;

const LOCK_SH = 1;
const LOCK_EX = 2;
const LOCK_NB = 4;

export function lockFileOf(file: string): string {
  return `${file}.lock`;
}

/**
 * Takes the lock beside `file` for the rest of this process's life. Made under a temporary name, locked, then
 * renamed into place, so no waiter ever sees the lock file unlocked while this baton lives. The descriptor is never
 * closed (and not inherited: Node opens with O_CLOEXEC). Best effort: without it only the detection is lost.
 */
export function holdLivenessLock(file: string, warn: (message: string) => void): void {
  const lockFile = lockFileOf(file);
  const temporary = join(dirname(lockFile), temporaryName(basename(lockFile)));
  let fd: number | undefined;
  try {
    const addon = loadNativeAddon();
    fd = openSync(temporary, "w", 0o644);
    const failed = addon.flock(fd, LOCK_EX | LOCK_NB);
    if (failed !== 0) throw Object.assign(new Error(`flock: errno ${failed}`), { code: `errno ${failed}` });
    renameSync(temporary, lockFile);
  } catch (error) {
    if (fd !== undefined) closeQuietly(fd);
    rmSync(temporary, { force: true });
    warn(`cannot hold the liveness lock ${lockFile} (${describeSystemError(error)}); a step waiting on ${file} will not notice if this one is killed`);
  }
}

/**
 * true when the baton that writes `file` has died: its lock file is there and nobody holds the lock. false while it
 * lives, before it started, or when this cannot be known (no addon, an unreadable lock file).
 */
export function holderDied(file: string): boolean {
  let fd: number;
  try {
    fd = openSync(lockFileOf(file), "r");
  } catch {
    return false; // not there yet (or not readable): nothing to say
  }
  try {
    const result = loadNativeAddon().flock(fd, LOCK_SH | LOCK_NB);
    return result === 0; // free: the holder is gone (closing fd releases our shared lock at once)
  } catch {
    return false;
  } finally {
    closeQuietly(fd);
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // already closed
  }
}
