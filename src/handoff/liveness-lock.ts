import { closeSync, constants, fchmodSync, fstatSync, ftruncateSync, lstatSync, readSync, renameSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { monotonicMs } from "../base/clock.js";
import { NAME_MAX } from "../base/files.js";
import { BatonError, describeSystemError } from "../base/errors.js";
import { createTemporaryBeside, openFifo, openRegularFile, removeQuietly, temporaryName } from "../base/safe-files.js";
import { withSpareDescriptor } from "../base/spare-descriptor.js";
import { loadNativeAddon, type NativeAddon, type ReadableHandle, type WaitHandle } from "../addon/load-addon.js";

// A killed step must not hang the chain. Each baton holds an advisory lock (flock) on POST.baton-live, beside its post
// file, from its start until it has written POST or POST.err; the kernel drops the lock when the process dies, however
// it dies (SIGKILL, the OOM killer, a crash). A waiter that finds the file there, its lock free, and still no POST or
// POST.err, knows the step it waits for died without handing on. flock works across PID namespaces and needs only
// read access: Tekton mounts the other steps' folders read-only. The file's name is baton's own (a Gemfile.lock beside
// an awaited Gemfile is not a lock of ours), and a waiter trusts it only when it is a regular file that says so
// (LIVENESS_MARK): a folder, a FIFO or a user's file at that name tells nothing. flock() is not in Node: baton's
// native addon (src/addon/) has it.
//
// The lock tells a waiter when to look, but through a thread of the waiter's that must then wake its event loop: two
// wake-ups in a row, each waiting for a CPU on a busy node. So beside the lock the writer keeps a FIFO,
// POST.baton-wake, and puts one byte in it as it hands on, before it lets go of the lock. A waiter's event loop polls
// the FIFO directly (never reading it: every waiter sees the byte) and looks at once. The FIFO only speeds the look
// up: a FIFO that is missing, planted, full or silent leaves the waiter with its lock thread, as before.
//
// The FIFO also orders the two batons' last moments. A Node process's exit unmaps ~40 MiB, milliseconds of the
// kernel's CPU that a kernel without preemption does not give up, and it came just as the next step was starting its
// command. So a waiter keeps the FIFO open until its command has started, and the writer, handed on, exits only once
// no reader is left (letWaitersStart), WAITERS_START_MS at most: whoever holds the FIFO open can delay an exit, never
// stop it, and the post file is in place long before.

const LIVENESS_SUFFIX = ".baton-live";
const WAKE_SUFFIX = ".baton-wake";
/** The liveness file's content: what tells a waiter that the file is baton's. */
const LIVENESS_MARK = "baton liveness lock\n";

const LOCK_SH = 1;
const LOCK_EX = 2;
const LOCK_NB = 4;

/**
 * Errors that say the post file's folder can take no new file (read-only, out of inodes, not ours to write): then
 * neither POST nor POST.err could be written, and running the command would lose its outcome. A disk out of data
 * blocks still takes the empty POST.err (hand-on.ts): there the command runs, as before.
 */
const CANNOT_CREATE = new Set(["EROFS", "ENOSPC", "EDQUOT", "EACCES", "EPERM"]);

/** POST.baton-live; POST's name cut (by bytes, on a character boundary) where the whole would be over NAME_MAX. */
export function livenessFileOf(file: string): string {
  return companionOf(file, LIVENESS_SUFFIX);
}

/** POST.baton-wake, cut as livenessFileOf. */
export function wakeFileOf(file: string): string {
  return companionOf(file, WAKE_SUFFIX);
}

function companionOf(file: string, suffix: string): string {
  let name = basename(file);
  while (Buffer.byteLength(name) + suffix.length > NAME_MAX) name = name.slice(0, -1);
  return join(dirname(file), `${name}${suffix}`);
}

/** What this process holds beside a file it will hand on: the lock's descriptor, and the wake FIFO's if it has one. */
const held = new Map<string, { lock: number; wake: number | undefined }>();

/** The wake FIFOs of the files this process has handed on, kept open until letWaitersStart. */
const handedOn: number[] = [];

/** The writers this process waits for, or waited for and has not forgotten yet (it holds their wake FIFOs). */
const followed = new Set<WriterWait>();

/**
 * The longest a step that has handed on waits, at its exit, for its waiters to start their commands: a hand-on on a
 * node short of CPUs takes tens of ms (make bench, row 8: p95 ~35 ms, the slowest ~100 ms). Only the step's own end
 * waits (its post file is in place): a waiter that is stopped, or a neighbour holding the FIFO, costs this once.
 */
export const WAITERS_START_MS = 250;

/**
 * Takes the lock beside `file` until releaseLivenessLock (or this process's end). Made under a temporary name
 * (createTemporaryBeside: O_EXCL, O_NOFOLLOW, unpredictable), marked, made 0644 whatever the umask (a waiter of
 * another uid must be able to open it), locked, then renamed into place, so no waiter ever sees a living baton's file unlocked. The descriptor is not
 * inherited (O_CLOEXEC). Throws a BatonError when the folder can take no new file (CANNOT_CREATE): the step must not
 * run its command for an outcome it cannot hand on. Any other failure (no addon, a full disk) costs only the
 * detection: one line, and the step goes on.
 */
export function holdLivenessLock(file: string, warn: (message: string) => void): void {
  if (held.has(file)) return;
  // Before the lock file: a waiter that finds the lock finds the FIFO too.
  const wake = makeWakeFifo(file);
  const lockFile = livenessFileOf(file);
  let fd: number;
  let temporary: string;
  try {
    ({ fd, temporary } = createTemporaryBeside(lockFile));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== undefined && CANNOT_CREATE.has(code)) {
      throw new BatonError(`cannot hand on through ${file}: its folder takes no new file (${describeSystemError(error)}); not running the command`);
    }
    if (wake !== undefined) closeQuietly(wake);
    warn(`cannot hold the liveness lock ${lockFile} (${describeSystemError(error)}); a step waiting on ${file} will not notice if this one is killed`);
    return;
  }
  try {
    fchmodSync(fd, 0o644);
    writeSync(fd, LIVENESS_MARK);
    const failed = loadNativeAddon().flock(fd, LOCK_EX | LOCK_NB);
    if (failed !== 0) throw Object.assign(new Error(`flock: errno ${failed}`), { code: `errno ${failed}` });
    renameSync(temporary, lockFile);
    held.set(file, { lock: fd, wake });
  } catch (error) {
    closeQuietly(fd);
    if (wake !== undefined) closeQuietly(wake);
    removeQuietly(temporary);
    warn(`cannot hold the liveness lock ${lockFile} (${describeSystemError(error)}); a step waiting on ${file} will not notice if this one is killed`);
  }
}

/**
 * Makes FILE.baton-wake (a FIFO, mode 0644 whatever the umask) under a temporary name and renames it into place; its
 * descriptor (read-write: opening it never blocks, and the byte written stays while it is open). undefined when it
 * cannot be made (no addon, a file system without FIFOs, the folder refuses): the lock alone then wakes the waiters.
 */
function makeWakeFifo(file: string): number | undefined {
  const wakeFile = wakeFileOf(file);
  const temporary = join(dirname(wakeFile), temporaryName(basename(wakeFile)));
  let fd: number | undefined;
  try {
    if (loadNativeAddon().makeFifo(temporary) !== 0) return undefined;
    // Checked as any shared path: the folder is shared, and the name could be swapped in between.
    fd = openFifo(temporary, constants.O_RDWR);
    fchmodSync(fd, 0o644);
    renameSync(temporary, wakeFile);
    return fd;
  } catch {
    if (fd !== undefined) closeQuietly(fd);
    removeQuietly(temporary);
    return undefined;
  }
}

/**
 * Lets go of the lock once `file` (or its .err) is in place: a waiter need not wait for this process to end. The
 * wake byte goes first, so a waiter's event loop is woken by the FIFO before its lock thread wakes. The FIFO stays
 * open for letWaitersStart.
 */
// Eager: on the hand-on path (docs/design.md#eager-functions).
export const releaseLivenessLock = (function releaseLivenessLock(file: string): void {
  const fds = held.get(file);
  if (fds === undefined) return;
  held.delete(file);
  if (fds.wake !== undefined) {
    try {
      writeSync(fds.wake, WAKE_BYTE);
    } catch {
      // EAGAIN: someone filled it; the waiters still have the lock
    }
  }
  closeQuietly(fds.lock);
  if (fds.wake !== undefined) handedOn.push(fds.wake);
});

const WAKE_BYTE = Buffer.from("w");

/**
 * The last resort of the last resort: a folder out of inodes takes no new file, not even an empty POST.err. But this
 * process already owns one inode there, its liveness file: emptied and renamed to `target`, it is the empty POST.err
 * the next step needs (readers take an empty post file). Only the file this process made and still holds (the same
 * inode at that name). Waiters blocked on its lock wake when the lock goes, as always, and find `target`. false when
 * there is none, or the rename failed.
 */
export function turnLivenessFileInto(file: string, target: string): boolean {
  const fds = held.get(file);
  if (fds === undefined) return false;
  try {
    const lockFile = livenessFileOf(file);
    if (fstatSync(fds.lock).ino !== lstatSync(lockFile).ino) return false; // not ours any more
    ftruncateSync(fds.lock, 0);
    renameSync(lockFile, target);
    return true;
  } catch {
    return false;
  }
}

/**
 * Just before this process exits. First lets go of the FIFOs of the writers it waited for (one that exits without
 * starting a command, after a failed step, must not keep its own writer waiting). Then waits until the waiters on
 * what it handed on have let go of its wake FIFOs (each lets go once its command has started), `timeoutMs` at most
 * in all, so that this process's unmapping does not compete with their start. Returns at once when nobody waits, or
 * with no addon that can tell.
 */
// Eager: on the hand-on path (docs/design.md#eager-functions).
export const letWaitersStart = (function letWaitersStart(timeoutMs = WAITERS_START_MS): void {
  for (const wait of followed) wait.forget();
  if (handedOn.length === 0) return;
  const addon = loadAddonOrUndefined();
  const deadline = monotonicMs() + timeoutMs;
  for (const fd of handedOn.splice(0)) {
    if (typeof addon?.awaitNoReaders !== "function") {
      closeQuietly(fd);
      continue;
    }
    addon.awaitNoReaders(fd, Math.max(0, Math.ceil(deadline - monotonicMs())));
  }
});

/**
 * Opens the liveness file of `file` if it is one of baton's: a regular file (never followed through a symlink, never
 * a FIFO's blocking open) that starts with the mark. undefined otherwise (not there yet, not readable, not ours).
 */
export function openLivenessFile(file: string): { fd: number; ino: number } | undefined {
  const opened = tryOpenLivenessFile(file);
  return typeof opened === "string" ? undefined : opened;
}

/** Out of descriptors, the process's (EMFILE) or the node's (ENFILE): the file may well be there. */
const NO_DESCRIPTOR = new Set(["EMFILE", "ENFILE"]);

function tryOpenLivenessFile(file: string): { fd: number; ino: number } | "absent" | "no-descriptor" {
  let opened;
  try {
    opened = openRegularFile(livenessFileOf(file));
  } catch (error) {
    if (NO_DESCRIPTOR.has((error as NodeJS.ErrnoException).code ?? "")) return "no-descriptor";
    return "absent"; // not there yet, or not a regular file of its own (a symlink, a FIFO, a folder, a socket)
  }
  const { fd, stats } = opened;
  try {
    const mark = Buffer.alloc(LIVENESS_MARK.length);
    if (readSync(fd, mark, 0, mark.length, 0) === mark.length && mark.toString() === LIVENESS_MARK) return { fd, ino: stats.ino };
  } catch {
    // unreadable: nothing to say
  }
  closeQuietly(fd);
  return "absent";
}

export interface WriterWait {
  /**
   * The wait is over: its thread no longer keeps baton alive (it ends with the writer's lock), and the writer's wake
   * FIFO is let go (the writer, handed on, may exit now).
   */
  forget(): void;
}

/**
 * Waits, in a thread of the addon, for the baton that writes `file` to let go of its lock (it handed on, or died):
 * then `onGone(ino, ok)` on the main thread, ino being its liveness file's. `onWake()`, at most once and usually just
 * before: the writer's wake FIFO says it is handing on (the caller looks; a wake with nothing to see is left alone).
 * The FIFO stays open until forget(), also after onGone: the caller forgets the wait once its command has started.
 * undefined when there is nothing to wait on: no liveness file of baton's, the one numbered `notIno` (a writer already
 * seen gone), or no addon or thread.
 * `ok` false: flock failed (a file system without locks), so nothing can be told from it.
 * With no thread (a full PID limit), each call looks at the lock once without blocking instead, and a free lock is
 * told to `onGone` all the same: the caller keeps its folder watch and safety poll, and calls again at each look.
 */
export function waitForWriter(
  file: string,
  notIno: number | undefined,
  onGone: (ino: number, ok: boolean) => void,
  onWake: () => void = () => {},
): WriterWait | undefined {
  const opened = tryOpenLivenessFile(file);
  if (opened === "no-descriptor") {
    lookThroughSpare(file, notIno, onGone);
    return undefined;
  }
  if (opened === "absent") return undefined;
  let pending = false;
  let handle: WaitHandle | number = -1;
  let wake: ReadableHandle | undefined;
  const addon = opened.ino === notIno ? undefined : loadAddonOrUndefined();
  if (addon !== undefined) {
    handle = addon.waitUnlocked(opened.fd, (error) => {
      pending = false;
      // Out of the addon's callback: the step's promises then settle in a turn of their own.
      setImmediate(onGone, opened.ino, error === 0);
    });
  }
  if (typeof handle === "number") {
    // No thread could start (EAGAIN: the pod's PID limit is full). Without this look a writer that died would never
    // be noticed: the waiter would wait for ever.
    const free = addon !== undefined && addon.flock(opened.fd, LOCK_SH | LOCK_NB) === 0;
    closeQuietly(opened.fd);
    if (free) setImmediate(onGone, opened.ino, true);
    return undefined;
  }
  pending = true;
  // Opened after the thread is waiting: a byte written before this open is still in the FIFO while its writer lives,
  // and a writer already gone has let go of its lock, which wakes the thread.
  wake = pollWakeFifo(addon!, file, (bytes) => {
    // Not once the lock has told: a writer that died without its byte ends the FIFO at its exit, which is no news.
    if (!pending) return;
    if (bytes > 0) return onWake();
    // A hang-up without a byte: the writer held the FIFO open from before its liveness file was in place, so it has
    // exited (or handed on and let its waiters go). Told as the lock's release, which a neighbour could withhold: any
    // uid that can read the liveness file can take a lock on it once the writer has let go (flock needs only read
    // access), and a waiter would then wait on that neighbour's lock for ever. Only a writer's own uid can hold the
    // FIFO open in its place.
    pending = false;
    addon!.forgetWait(handle as WaitHandle);
    setImmediate(onGone, opened.ino, true);
  });
  const wait: WriterWait = {
    forget() {
      followed.delete(wait);
      if (pending) addon!.forgetWait(handle as WaitHandle);
      pending = false;
      if (wake !== undefined) addon!.pollClose(wake);
      wake = undefined;
    },
  };
  followed.add(wait);
  return wait;
}

/**
 * A waiter out of descriptors (EMFILE) can neither hold its writer's liveness file open nor watch the folder: it polls,
 * and at each look borrows the step's spare descriptor for one look at the lock without blocking. A free lock is told
 * to `onGone` as the thread would tell it, so a writer that died is noticed at the next poll instead of never.
 */
function lookThroughSpare(file: string, notIno: number | undefined, onGone: (ino: number, ok: boolean) => void): void {
  const addon = loadAddonOrUndefined();
  if (addon === undefined) return;
  const seen = withSpareDescriptor(() => {
    const opened = tryOpenLivenessFile(file);
    if (typeof opened === "string") return undefined;
    const free = addon.flock(opened.fd, LOCK_SH | LOCK_NB) === 0;
    closeQuietly(opened.fd);
    return { ino: opened.ino, free };
  });
  if (seen?.free && seen.ino !== notIno) setImmediate(onGone, seen.ino, true);
}

/**
 * The writer's wake FIFO, polled by the event loop; undefined when there is none of ours (a non-FIFO is not opened),
 * or with an older addon (its pollReadable closed the FIFO at the wake-up, so the writer would not wait for us).
 */
function pollWakeFifo(addon: NativeAddon, file: string, onReadable: (bytes: number) => void): ReadableHandle | undefined {
  if (typeof addon.pollWake !== "function") return undefined;
  let fd: number;
  try {
    fd = openFifo(wakeFileOf(file), constants.O_RDONLY);
  } catch {
    return undefined; // not there (a writer of an older baton, or one that could not make it), or not a FIFO
  }
  try {
    const handle = addon.pollWake(fd, onReadable);
    if (typeof handle !== "number") return handle;
  } catch {
    // fall through: the lock alone
  }
  closeQuietly(fd);
  return undefined;
}

// Eager: on the hand-on path (docs/design.md#eager-functions).
const loadAddonOrUndefined = (function loadAddonOrUndefined(): NativeAddon | undefined {
  try {
    return loadNativeAddon();
  } catch {
    return undefined;
  }
});

/**
 * true when the baton that writes `file` has died: its liveness file is there and nobody holds the lock. false while
 * it lives, before it started, or when this cannot be known (no addon, no liveness file of baton's).
 */
export function holderDied(file: string): boolean {
  const opened = openLivenessFile(file);
  if (opened === undefined) return false;
  try {
    return loadNativeAddon().flock(opened.fd, LOCK_SH | LOCK_NB) === 0; // free: the holder is gone
  } catch {
    return false;
  } finally {
    closeQuietly(opened.fd); // releases our shared lock at once
  }
}

// Eager: on the hand-on path (docs/design.md#eager-functions).
const closeQuietly = (function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // already closed
  }
});
