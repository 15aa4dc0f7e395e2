// The native addon, dist/baton-reaper.node (src/addon/addon.c, wait-events.c): the system calls Node does not
// expose. Reaping orphans (src/run/reaper.ts), the liveness lock's flock and the waits (src/handoff/) and baton's
// _exit (src/process/exit.ts) share the one copy loaded here.
import { existsSync, mkdtempSync, rmdirSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { withSpareDescriptor } from "../base/spare-descriptor.js";

export interface NativeAddon {
  /** pid of an exited child that is not reaped yet (left unreaped), 0 if none */
  peekExited(): number;
  /** waitpid(pid, WNOHANG): pid when reaped, 0 when still running, -1 when not our child */
  reap(pid: number): number;
  /** prctl(PR_SET_CHILD_SUBREAPER, 1) */
  becomeSubreaper(): void;
  /** flock(fd, operation | LOCK_NB): 0, or the errno (EWOULDBLOCK: held by another process): the liveness lock */
  flock(fd: number, operation: number): number;
  /** _exit(code): ends the process without Node's platform shutdown (src/process/exit.ts). */
  exitNow(code: number): never;
  /** posix_spawnp of exactly these bytes, setsid, signals at default: the pid, or -errno (src/run/exact-bytes.ts) */
  spawnBytes(file: Buffer, argv: Buffer[], envp: Buffer[]): number;
  /** waitpid(pid, WNOHANG) of a spawnBytes child: -1 running, -2 not a child, else the raw wait status */
  waitStatus(pid: number): number;
  /**
   * posix_spawnp as spawnBytes, with flags: 1 stdout a pipe, 2 stderr a pipe, 4 no /bin/sh for a file the kernel will
   * not execute. [pid or -errno, stdout's read end or -1, stderr's or -1]. Older addons lack it.
   */
  spawnWith?(file: Buffer, argv: Buffer[], envp: Buffer[], flags: number): [number, number, number];
  /** malloc_trim(0) where the C library has it: 1 when memory went back to the kernel, else 0 (src/process/trim-memory.ts). */
  trimMemory(): number;
  /** V8's baseline compiler off (src/process/baseline-compiler.ts): 1 when done, 0 when V8's flag call is not found. Older addons lack it. */
  stopBaselineCompiler?(): number;
  /**
   * A thread blocks in fcntl(fd, F_OFD_SETLKW, F_RDLCK), closes fd, then calls back with 0 (or an errno): the writer
   * let go of its liveness lock. A handle for forgetWait, or a negative errno when no thread could start (fd is then still ours).
   */
  waitUnlocked(fd: number, callback: (error: number) => void): WaitHandle | number;
  /** The wait no longer keeps the event loop alive (before its callback only). */
  forgetWait(handle: WaitHandle): void;
  /**
   * A new liveness file, locked (fcntl's write lock, and a flock for older waiters) before it has a name, marked and
   * 0644, at `temporary` or another random name beside it: [fd, name], or [-errno, the system call that failed]
   * (src/addon/liveness.c). Older addons lack it.
   */
  makeLiveness?(temporary: string, mark: string): [number, string];
  /** Renames it into place: 0, -EADDRINUSE when a living baton holds the file there (ours is removed), or -errno. */
  placeLiveness(temporary: string, path: string, mark: string): number;
  /** 1 while a writer holds fd's file's write lock, 0 when nobody does, -errno when it cannot be told (a look only). */
  lockHeld(fd: number): number;
  /** mkfifo(path, 0600): 0, or the errno. */
  makeFifo(path: string): number;
  /**
   * Polls fd (taken) in the event loop, without reading, and calls back once when it is readable, with the bytes
   * waiting in it (0: hung up, no writer left); the poll stops then, but fd stays open until pollClose. It does not
   * keep the loop alive. A handle for pollClose, or a negative errno.
   * (Older addons have pollReadable instead, which closed fd at the callback: not used.)
   */
  pollWake?(fd: number, callback: (bytes: number) => void): ReadableHandle | number;
  /** Closes a poll and its fd, before or after its callback; once. */
  pollClose(handle: ReadableHandle): void;
  /**
   * fd, a FIFO held read-write, reopened write-only (/proc/self/fd) and closed; then waits until the FIFO has no reader
   * left, timeoutMs at most: 0, ETIMEDOUT (110) or the errno that kept it from waiting. Older addons lack it.
   */
  awaitNoReaders?(fd: number, timeoutMs: number): number;
  /**
   * Relays these signals (SIGPIPE and SIGXFSZ only when another process sent them) to callback, on the main thread:
   * 0, or an errno. Older addons lack it (src/process/signals.ts).
   */
  relaySignals?(numbers: number[], callback: (signal: number) => void): number;
  /** An inotify instance of one's own, read by the event loop: a handle, or a negative errno (EMFILE: none left). */
  inotifyOpen(callback: (endedWatches: number[]) => void): InotifyHandle | number;
  /** inotify_add_watch on a folder: the watch descriptor, or a negative errno. */
  inotifyAdd(handle: InotifyHandle, path: string): number;
  inotifyRemove(handle: InotifyHandle, wd: number): void;
  /** Closes the instance (it goes back to the node's budget); the handle is dead after. */
  inotifyClose(handle: InotifyHandle): void;
}

declare const waitHandle: unique symbol;
export type WaitHandle = { readonly [waitHandle]: true };
declare const readableHandle: unique symbol;
export type ReadableHandle = { readonly [readableHandle]: true };
declare const inotifyHandle: unique symbol;
export type InotifyHandle = { readonly [inotifyHandle]: true };

export const ADDON_FILE = "baton-reaper.node";

let loaded: NativeAddon | undefined;

/**
 * dlopen's the addon (once): beside the bundle; in the standalone build,
 * from its lib/ folder or else from its SEA assets.
 */
export function loadNativeAddon(): NativeAddon {
  if (loaded !== undefined) return loaded;
  try {
    loaded = loadAddonFile();
  } catch (error) {
    // Out of descriptors (EMFILE), dlopen cannot open the file: once more in the step's spare descriptor's slot, or
    // a waiter at the limit would have no lock to tell it that its writer died (src/handoff/liveness-lock.ts).
    try {
      loaded = withSpareDescriptor(loadAddonFile);
    } catch {
      // the same failure: the first one says it
    }
    if (loaded === undefined) throw error;
  }
  return loaded;
}

function loadAddonFile(): NativeAddon {
  const sea = process.getBuiltinModule?.("node:sea");
  if (sea?.isSea()) return loadFromSea(sea);
  // The bundle is CommonJS, where __dirname is its own folder (unbundled sources run from src/addon/).
  const folder = typeof __dirname === "string" ? __dirname : dirname(process.argv[1] ?? ".");
  return dlopen(join(folder, ADDON_FILE));
}

function loadFromSea(sea: typeof import("node:sea")): NativeAddon {
  // The standalone folder ships it as ROOT/lib/baton-reaper.node; execPath is ROOT/lib/ld-linux-x86-64.so.2 or
  // ROOT/lib/baton-node (started through the loader, or directly), or ROOT/baton where /proc is not mounted.
  const home = dirname(process.execPath);
  for (const file of [join(home, ADDON_FILE), join(home, "lib", ADDON_FILE)]) {
    if (existsSync(file)) return dlopen(file);
  }
  // Not shipped as a file: use the copy inside the executable (a SEA asset of the same name), if there is one.
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(sea.getAsset(ADDON_FILE));
  } catch {
    throw new Error(`${ADDON_FILE} is neither in ${home} nor among the executable's assets`);
  }
  // dlopen needs a file; once mapped it can go. The first folder that allows executable mappings wins
  // (a read-only root or a noexec /tmp refuses).
  const failures: string[] = [];
  for (const parent of [tmpdir(), "/dev/shm", home]) {
    let folder: string | undefined;
    let file: string | undefined;
    try {
      folder = mkdtempSync(join(parent, "baton-"));
      file = join(folder, ADDON_FILE);
      writeFileSync(file, bytes, { mode: 0o700 });
      return dlopen(file);
    } catch (error) {
      failures.push(`${parent}: ${messageOf(error)}`);
    } finally {
      if (folder !== undefined) removeQuietly(folder, file);
    }
  }
  throw new Error(failures.join("; "));
}

function removeQuietly(folder: string, file: string | undefined) {
  try {
    if (file !== undefined) unlinkSync(file);
  } catch {
    // never written
  }
  try {
    rmdirSync(folder);
  } catch {
    // a leftover empty folder in a temporary directory is harmless
  }
}

function dlopen(file: string): NativeAddon {
  const module = { exports: {} as NativeAddon };
  process.dlopen(module, file);
  return module.exports;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
