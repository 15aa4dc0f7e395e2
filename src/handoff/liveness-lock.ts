import { closeSync, constants, fchmodSync, fstatSync, ftruncateSync, lstatSync, readSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { monotonicMs } from "../base/clock.js";
import { NAME_MAX } from "../base/files.js";
import { BatonError, describeSystemError, errnoError } from "../base/errors.js";
import { openFifo, openRegularFile, removeQuietly, temporaryName } from "../base/safe-files.js";
import { withSpareDescriptor } from "../base/spare-descriptor.js";
import { loadNativeAddon, type NativeAddon, type ReadableHandle } from "../addon/load-addon.js";

// A killed step must not hang the chain. Each baton holds an advisory write lock (fcntl F_OFD_SETLK, F_WRLCK) on
// POST.baton-live, beside its post file, from its start until it has written POST or POST.err; the kernel drops the
// lock when the process dies, however it dies (SIGKILL, the OOM killer, a crash). A waiter that finds the file there,
// its lock free, and still no POST or POST.err, knows the step it waits for died without handing on. The lock works
// across PID namespaces, and a waiter needs only read access (a read lock, or a look): Tekton mounts the other steps'
// folders read-only. And only the writer can hold it: fcntl grants a write lock only through a descriptor open for
// writing, which a neighbour that may only read (another uid, a read-only mount) cannot have; a flock, which any reader
// can take, let such a neighbour hide a dead writer from every later waiter. The file's name is baton's own (a
// Gemfile.lock beside an awaited Gemfile is not a lock of ours), and a waiter trusts it only when it is a regular file
// that says so (LIVENESS_MARK): a folder, a FIFO or a user's file at that name tells nothing. Node has no OFD locks:
// baton's native addon (src/addon/liveness.c) makes and looks at the lock.
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
/**
 * The liveness file's content: what tells a waiter that the file is baton's, and that its lock is fcntl's write lock.
 * An older baton's file holds the first line only (its lock a flock, which any reader can take): a waiter does not
 * believe it, and waits for that writer's post file as for a writer that is not a baton. Older waiters read the first
 * line only, and the writer holds a flock for them as well.
 */
const LIVENESS_MARK = "baton liveness lock\nlock: fcntl F_WRLCK\n";

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

/** A wake FIFO this process made: its descriptor, its path and its inode (to remove it only while it is ours). */
interface WakeFifo {
  fd: number;
  path: string;
  ino: number;
}

/** What this process holds beside a file it will hand on: the lock's descriptor, and the wake FIFO if it has one. */
const held = new Map<string, { lock: number; wake: WakeFifo | undefined }>();

/** The files whose lock this process has tried to take, held or not. */
const tried = new Set<string>();

/** The wake FIFOs of the files this process has handed on, kept open until letWaitersStart. */
const handedOn: WakeFifo[] = [];

/** The writers this process waits for, or waited for and has not forgotten yet (it holds their wake FIFOs). */
const followed = new Set<WriterWait>();

/**
 * The longest a step that has handed on waits, at its exit, for its waiters to start their commands: a hand-on on a
 * node short of CPUs takes tens of ms (row 8's slowest, docs/performance.md). Only the step's own end
 * waits (its post file is in place): a waiter that is stopped, or a neighbour holding the FIFO, costs this once.
 */
export const WAITERS_START_MS = 250;

/**
 * Two steps were given one post file (a copy-paste error in a pod spec): a living baton already holds its liveness
 * file. The second must neither run its command nor write POST or POST.err, which would start the next step, or end
 * it, while the first still runs.
 */
export class PostFileTaken extends BatonError {}

/** A file system that keeps no locks: nothing could tell this step's death, whatever it did. */
const NO_LOCKS = new Set(["ENOLCK", "EOPNOTSUPP", "ENOTSUP", "EINVAL"]);

/**
 * Takes the lock beside `file` until releaseLivenessLock (or this process's end). The addon makes the liveness file
 * with no name (O_TMPFILE), locks it, marks it and makes it 0644 whatever the umask (a waiter of another uid must be
 * able to open it), and only then names it and renames it into place (src/addon/liveness.c): nobody can open it
 * before its lock is held. The descriptor is not inherited (O_CLOEXEC). Throws:
 * - PostFileTaken when a living baton holds the liveness file there;
 * - a BatonError when the folder can take no new file (CANNOT_CREATE): the step must not run its command for an
 *   outcome it cannot hand on;
 * - a BatonError when the lock cannot be held for any other reason (out of descriptors, a neighbour quicker every
 *   time): a step that ran unguarded and then died would leave the next one waiting for ever (docs/design.md "A step
 *   that dies").
 * Only where no lock can be had at all (no addon, a file system without locks) does the step warn and go on.
 */
export function holdLivenessLock(file: string, warn: (message: string) => void): void {
  // Once: main.ts takes it as early as it can, runStep again for callers that did not (a step goes on unguarded only
  // where no lock can be had: a second try would say so twice).
  if (tried.has(file)) return;
  tried.add(file);
  const lockFile = livenessFileOf(file);
  const unguarded = (why: string) =>
    warn(`cannot hold the liveness lock ${lockFile} (${why}); a step waiting on ${file} will not notice if this one is killed`);
  let addon: NativeAddon;
  try {
    addon = loadNativeAddon();
  } catch (error) {
    // Out of descriptors, dlopen could not even open the addon: the lock is not missing from this baton, only from
    // this moment, so the step refuses as for a lock that failed so.
    if (/too many open files/i.test(String((error as Error).message))) refuse(-EMFILE, "dlopen", file, lockFile, unguarded);
    return unguarded(describeSystemError(error));
  }
  if (typeof addon.makeLiveness !== "function") return unguarded("the addon is older than this baton");
  if (livingWriterOf(addon, file)) throw taken(file);
  // The lock before the FIFO: at the descriptor limit the lock is what must not be lost, the FIFO only speeds a wake-up.
  const [fd, temporary] = addon.makeLiveness(join(dirname(lockFile), temporaryName(basename(lockFile))), LIVENESS_MARK);
  if (fd < 0) return refuse(fd, temporary, file, lockFile, unguarded);
  // Before the liveness file is in place: a waiter that finds the lock finds the FIFO too.
  const wake = makeWakeFifo(file);
  const placed = addon.placeLiveness(temporary, lockFile, LIVENESS_MARK);
  if (placed === 0) {
    held.set(file, { lock: fd, wake });
    return;
  }
  closeQuietly(fd);
  if (wake !== undefined) closeQuietly(wake.fd);
  if (placed === -EADDRINUSE) throw taken(file);
  return refuse(placed, "rename", file, lockFile, unguarded);
}

/** Whether a living baton holds the liveness file of `file` now (looked at before this step makes its own). */
function livingWriterOf(addon: NativeAddon, file: string): boolean {
  const opened = openLivenessFile(file);
  if (opened === undefined) return false;
  try {
    return addon.lockHeld(opened.fd) === 1;
  } finally {
    closeQuietly(opened.fd);
  }
}

const EADDRINUSE = 98; // the addon's answer for a liveness file a living baton holds (src/addon/liveness.c)
const EMFILE = 24;

function taken(file: string): PostFileTaken {
  return new PostFileTaken(
    `another step's baton is running with the post file ${file} (it holds ${livenessFileOf(file)}): two steps were given one post file; not running the command, and writing neither ${file} nor ${file}.err`,
  );
}

function refuse(negativeErrno: number, syscall: string, file: string, lockFile: string, unguarded: (why: string) => void): void {
  const error = errnoError(negativeErrno, syscall, lockFile);
  const code = error.code ?? "";
  // A disk out of data blocks: the file is there, with no room for its mark. The step runs, as it did before it had
  // a lock, and hands on the empty POST.err that needs no data block (post-file.ts).
  if (syscall === "write" && (code === "ENOSPC" || code === "EDQUOT")) return unguarded(describeSystemError(error));
  if (CANNOT_CREATE.has(code)) {
    throw new BatonError(`cannot hand on through ${file}: its folder takes no new file (${describeSystemError(error)}); not running the command`);
  }
  if (NO_LOCKS.has(code)) return unguarded(describeSystemError(error));
  throw new BatonError(
    `cannot hold the liveness lock ${lockFile} (${describeSystemError(error)}); not running the command unguarded: were this step killed, a step waiting on ${file} would wait for ever`,
  );
}

/**
 * Makes FILE.baton-wake (a FIFO, mode 0644 whatever the umask) under a temporary name and renames it into place; its
 * descriptor (read-write: opening it never blocks, and the byte written stays while it is open). undefined when it
 * cannot be made (no addon, a file system without FIFOs, the folder refuses): the lock alone then wakes the waiters.
 */
function makeWakeFifo(file: string): WakeFifo | undefined {
  const wakeFile = wakeFileOf(file);
  const temporary = join(dirname(wakeFile), temporaryName(basename(wakeFile)));
  let fd: number | undefined;
  try {
    if (loadNativeAddon().makeFifo(temporary) !== 0) return undefined;
    // Checked as any shared path: the folder is shared, and the name could be swapped in between.
    fd = openFifo(temporary, constants.O_RDWR);
    fchmodSync(fd, 0o644);
    const { ino } = fstatSync(fd);
    renameSync(temporary, wakeFile);
    return { fd, path: wakeFile, ino };
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
export function releaseLivenessLock(file: string): void {
  const fds = held.get(file);
  if (fds === undefined) return;
  held.delete(file);
  if (fds.wake !== undefined) {
    try {
      writeSync(fds.wake.fd, WAKE_BYTE);
    } catch {
      // EAGAIN: someone filled it; the waiters still have the lock
    }
  }
  closeQuietly(fds.lock);
  if (fds.wake !== undefined) handedOn.push(fds.wake);
}

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
export function letWaitersStart(timeoutMs = WAITERS_START_MS): void {
  for (const wait of followed) wait.forget();
  if (handedOn.length === 0) return;
  const addon = loadAddonOrUndefined();
  const deadline = monotonicMs() + timeoutMs;
  for (const wake of handedOn.splice(0)) {
    if (typeof addon?.awaitNoReaders !== "function") closeQuietly(wake.fd);
    else addon.awaitNoReaders(wake.fd, Math.max(0, Math.ceil(deadline - monotonicMs())));
    removeWakeFifo(wake);
  }
}

/**
 * A wake FIFO whose writer is gone is a trap for whoever reads every file of the folder (`cat /run/*`): opening a
 * FIFO to read waits for a writer, and none will come. So it goes with its writer, once its waiters have started:
 * those that hold it keep it, and a waiter that comes later follows the lock alone (free by then: one look). Only
 * while the name is still this FIFO's (a new baton's, after a restart, is not ours to remove).
 */
function removeWakeFifo(wake: WakeFifo): void {
  try {
    if (lstatSync(wake.path).ino === wake.ino) unlinkSync(wake.path);
  } catch {
    // gone already, or the folder refuses: it stays, as it did before
  }
}

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
 * `ok` false: the lock failed (a file system without locks), so nothing can be told from it.
 * Without a thread the lock is looked at once, without blocking, and a free one is the answer `{ freeIno }` (a writer
 * gone, told as the thread would tell it; the caller, still watching its folder, calls again at its next look):
 * - no thread could start (a full PID limit);
 * - this process is out of descriptors (EMFILE): it borrows the step's spare descriptor for that one look.
 * undefined when there is nothing to wait on: no liveness file of baton's, the one numbered `notIno` (a writer already
 * seen gone), no addon, or a held lock and no thread.
 */
export function waitForWriter(
  file: string,
  notIno: number | undefined,
  onGone: (ino: number, ok: boolean) => void,
  onWake: () => void = () => {},
): WriterWait | { freeIno: number } | undefined {
  const opened = tryOpenLivenessFile(file);
  if (opened === "no-descriptor") return withSpareDescriptor(() => lookAtWriter(file, notIno));
  if (opened === "absent") return undefined;
  const addon = opened.ino === notIno ? undefined : loadAddonOrUndefined();
  if (addon === undefined) return closeQuietly(opened.fd);
  let pending = true;
  const handle = addon.waitUnlocked(opened.fd, (error) => {
    pending = false;
    // Out of the addon's callback: the step's promises then settle in a turn of their own.
    setImmediate(onGone, opened.ino, error === 0);
  });
  // No thread could start (EAGAIN: the pod's PID limit is full). Without this look a writer that died would never be
  // noticed: the waiter would wait for ever.
  if (typeof handle === "number") return lookedAt(addon, opened);
  // Opened after the thread is waiting: a byte written before this open is still in the FIFO while its writer lives,
  // and a writer already gone has let go of its lock, which wakes the thread.
  let wake = pollWakeFifo(addon, file, () => {
    // Not once the lock has told. A byte: the writer is handing on. A hang-up (no writer left, no byte): it exited;
    // its lock went at the same moment and wakes the thread. Either way one look, and the lock decides.
    if (pending) onWake();
  });
  const wait: WriterWait = {
    forget() {
      followed.delete(wait);
      if (pending) addon.forgetWait(handle);
      pending = false;
      if (wake !== undefined) addon.pollClose(wake);
      wake = undefined;
    },
  };
  followed.add(wait);
  return wait;
}

/** One look at the lock of `file`'s liveness file, without blocking (see waitForWriter). */
function lookAtWriter(file: string, notIno: number | undefined): { freeIno: number } | undefined {
  const opened = tryOpenLivenessFile(file);
  if (typeof opened === "string") return undefined;
  const addon = opened.ino === notIno ? undefined : loadAddonOrUndefined();
  if (addon === undefined) return closeQuietly(opened.fd);
  return lookedAt(addon, opened);
}

/** `{ freeIno }` when nobody holds the lock on the opened liveness file (which this closes). */
function lookedAt(addon: NativeAddon, opened: { fd: number; ino: number }): { freeIno: number } | undefined {
  const free = lockIsFree(addon, opened.fd);
  closeQuietly(opened.fd);
  return free ? { freeIno: opened.ino } : undefined;
}

/** The one test of a writer's death: nobody holds the lock (a look: no lock taken). */
function lockIsFree(addon: NativeAddon, fd: number): boolean {
  return addon.lockHeld(fd) === 0;
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

function loadAddonOrUndefined(): NativeAddon | undefined {
  try {
    return loadNativeAddon();
  } catch {
    return undefined;
  }
}

/**
 * true when the baton that writes `file` has died: its liveness file is there and nobody holds the lock. false while
 * it lives, before it started, or when this cannot be known (no addon, no liveness file of baton's).
 */
export function holderDied(file: string): boolean {
  return lookAtWriter(file, undefined) !== undefined;
}

function closeQuietly(fd: number): undefined {
  try {
    closeSync(fd);
  } catch {
    // already closed
  }
}
