import { every } from "../base/clock.js";
import { waitForWriter, type WriterWait } from "./liveness-lock.js";
import { watchFolderOf } from "./watch-folder.js";

// Tells a waiter when to look at the file it waits for. Two ways, one at a time:
// - The file's writer is a baton (its liveness file, FILE.baton-live, is there): the waiter blocks on the writer's
//   lock in a thread of the addon and looks once, when the writer lets go: it has handed on (FILE or FILE.err is in
//   place) or it died. No inotify instance, no timer: the kernel wakes the waiter (docs/design.md "Waiting"). The
//   writer's wake FIFO (FILE.baton-wake) usually wakes the event loop a moment before the thread does: one more look.
// - Until then (the writer has not started yet, or it is not a baton: the downward-API ready file, a user's `touch`):
//   an inotify watch of the folder, a poll when the node has no instance left, and a safety poll. Each look also
//   looks for the liveness file; once it is found the watch and the polls end.

export interface HandOffWatch {
  close(): void;
}

export interface HandOffWait {
  /** Aborting ends the wait: the promise rejects with signal.reason. */
  signal: AbortSignal;
  followWriter: boolean;
  safetyPollMs: number;
  warn: (message: string) => void;
  /** The error the wait rejects with when a folder on the way can never be watched. */
  refused: (path: string, error: NodeJS.ErrnoException) => Error;
}

/**
 * The promise form of watchHandOff, the one both a step's wait and Argo's dependency wait use: resolves with the first
 * value `look(writerGone)` returns, rejects with what it throws, or with the abort reason.
 */
export function waitForHandOff<T>(file: string, look: (writerGone: boolean) => T | undefined, options: HandOffWait): Promise<T> {
  return new Promise((resolve, reject) => {
    let done = false;
    let watch: HandOffWatch | undefined;
    // Eager: on the wake-up path (docs/design.md#eager-functions).
    const finish = (function finish<V>(settle: (outcome: V) => void, outcome: V) {
      if (done) return;
      done = true;
      settle(outcome);
      // Tidy up once the caller has moved on: its command is already starting. This is ~1 ms of code run for the
      // first time, which would otherwise sit between the post file and the next command (make bench, row 1).
      setImmediate(
        // Eager: on the hand-on path (docs/design.md#eager-functions).
        (function tidyUp() {
          watch?.close();
          options.signal.removeEventListener("abort", onAbort);
        }),
      );
    });
    const onAbort = () => finish(reject, options.signal.reason);
    options.signal.addEventListener("abort", onAbort);
    if (options.signal.aborted) return onAbort();
    watch = watchHandOff(
      file,
      // Eager: on the wake-up path (docs/design.md#eager-functions).
      (function onLook(writerGone: boolean) {
        if (done) return;
        try {
          const value = look(writerGone);
          if (value !== undefined) finish(resolve, value);
        } catch (error) {
          finish(reject, error);
        }
      }),
      { ...options, refused: (path, error) => finish(reject, options.refused(path, error)) },
    );
  });
}

export interface HandOffOptions {
  /** Follow the writer's liveness lock (a post file); false for a file no baton writes (a cancel file). */
  followWriter: boolean;
  /** Interval of the safety poll while no writer is followed. */
  safetyPollMs: number;
  warn: (message: string) => void;
  /** The file can never be looked up (a folder on the way not searchable). */
  refused: (path: string, error: NodeJS.ErrnoException) => void;
}

/**
 * Calls `look(writerGone)` whenever the file may have appeared; `writerGone` is true when its baton writer let go of
 * its lock and no other writer took its place: a file still missing then will never come ("died"). Also calls it
 * once at the start (after the watch is armed, so that nothing written in between is missed).
 */
export function watchHandOff(file: string, look: (writerGone: boolean) => void, options: HandOffOptions): HandOffWatch {
  let closed = false;
  let writer: WriterWait | undefined;
  let lastWriter: number | undefined;
  // The writer last seen letting go, forgotten when this watch closes (the caller's command has started by then) or
  // another writer takes its place: a writer that handed on exits once its waiters let go of its wake FIFO, so its
  // exit does not compete with this step's start (docs/design.md "Stepping aside").
  let gone: WriterWait | undefined;
  const changed = () => {
    if (closed) return;
    if (followWriter && writer === undefined) follow();
    if (!closed) look(false);
  };
  // The thread is waiting before the look that follows: a writer that hands on after it opened the file wakes it.
  const follow = () => {
    writer = waitForWriter(file, lastWriter, onWriterGone, () => {
      if (!closed) look(false);
    });
    if (writer === undefined) return;
    watch?.close();
    watch = undefined;
    clearInterval(safety);
    safety = undefined;
  };
  const onWriterGone = (ino: number, ok: boolean) => {
    if (closed) return;
    gone?.forget();
    gone = writer;
    writer = undefined;
    if (!ok) {
      // flock failed (a file system that keeps no locks): the lock tells nothing; watch the folder as for a stranger.
      followWriter = false;
      watchFolder();
      return changed();
    }
    lastWriter = ino;
    // A new baton may have taken its place (a restarted container renames a new liveness file into place): the old
    // one's FIFO is then nobody's concern.
    follow();
    if (writer !== undefined) {
      gone?.forget();
      gone = undefined;
    }
    look(writer === undefined);
  };

  let followWriter = options.followWriter;
  let watch: { close(): void } | undefined;
  let safety: NodeJS.Timeout | undefined;
  const watchFolder = () => {
    watch = watchFolderOf(file, changed, options.warn, options.refused);
    safety = every(options.safetyPollMs, changed);
    if (closed) watch.close(); // refused at once: the caller has already closed this
    if (closed) clearInterval(safety);
  };
  // A writer that is already there needs no watch at all (not even an instance opened and closed: none may be left).
  if (followWriter) follow();
  if (writer === undefined) watchFolder();
  changed();
  return {
    // Eager: on the hand-on path (docs/design.md#eager-functions).
    close: (function close() {
      closed = true;
      watch?.close();
      clearInterval(safety);
      writer?.forget();
      gone?.forget();
    }),
  };
}
