import { every } from "../base/clock.js";
import { waitForWriter, type WriterWait } from "./liveness-lock.js";
import { watchFolderOf, type FolderWatch } from "./watch-folder.js";
import { machineOf, WAIT_TRANSITIONS, type WaitEffect, type WaitEvent, type WaitState } from "./wait-states.js";

// Waits for a file and tells the caller what a look at it found. When to look, two ways, one at a time:
// - The file's writer is a baton (its liveness file, FILE.baton-live, is there): the waiter blocks on the writer's
//   lock in a thread of the addon and looks once, when the writer lets go: it has handed on (FILE or FILE.err is in
//   place) or it died. No inotify instance, no timer: the kernel wakes the waiter (docs/design.md "Waiting"). The
//   writer's wake FIFO (FILE.baton-wake) usually wakes the event loop a moment before the thread does: one more look.
// - Until then (the writer has not started yet, or it is not a baton: the downward-API ready file, a user's `touch`):
//   a folder watch (watch-folder.ts: inotify, or a poll when the node has no instance left) and a safety poll. Each
//   look also looks for the liveness file; once it is found the folder watch and the safety poll end.
// Which of those a wait is in, and what moves it: WAIT_TRANSITIONS in wait-states.ts. This file runs the effects.

export interface HandOffWait<T> {
  /** Aborting ends the wait: the promise rejects with signal.reason. */
  signal: AbortSignal;
  /** Follow the writer's liveness lock (a post file); false for a file no baton writes (a cancel file). */
  followWriter: boolean;
  /** Interval of the safety poll while no writer is followed. */
  safetyPollMs: number;
  warn: (message: string) => void;
  /** The error the wait rejects with when a folder on the way can never be watched. */
  refused: (path: string, error: NodeJS.ErrnoException) => Error;
  /** The answer when the writer let go of its lock and `look` still finds nothing: it died. */
  died: T;
}

/** What one wait holds. Declared whole before the functions that use it. */
interface HandOff<T> {
  readonly file: string;
  readonly look: () => T | undefined;
  readonly options: HandOffWait<T>;
  readonly resolve: (value: T) => void;
  readonly reject: (error: unknown) => void;
  folderWatch: FolderWatch | undefined;
  safetyPoll: NodeJS.Timeout | undefined;
  /** The writer whose lock a thread waits on now. */
  writer: WriterWait | undefined;
  /**
   * The writer last seen letting go, kept until the wait ends (the caller's command has started by then) or another
   * writer takes its place: a writer that handed on exits once its waiters let go of its wake FIFO, so its exit does
   * not compete with this step's start (docs/design.md "Stepping aside").
   */
  goneWriter: WriterWait | undefined;
  /** The inode of the liveness file whose lock was last seen free: that writer is not followed again. */
  goneIno: number | undefined;
  /** What the last look found, or why it failed. */
  found: T | undefined;
  error: unknown;
  dispatch: (event: WaitEvent) => void;
  onAbort: () => void;
}

/**
 * Resolves with the first value `look()` returns, with `options.died` when the file's baton writer let go of its lock
 * and no other writer took its place while `look()` still finds nothing, rejects with what `look` throws, the
 * refusal, or the abort reason. Both a step's wait and Argo's dependency wait use it.
 */
export function waitForHandOff<T>(file: string, look: () => T | undefined, options: HandOffWait<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    const handOff: HandOff<T> = {
      file, look, options, resolve, reject,
      folderWatch: undefined, safetyPoll: undefined, writer: undefined, goneWriter: undefined, goneIno: undefined,
      found: undefined, error: undefined, dispatch: () => {}, onAbort: () => {},
    };
    const machine = machineOf<WaitState, WaitEvent, WaitEffect>(WAIT_TRANSITIONS, "starting", (effect) => runEffect(handOff, effect));
    handOff.dispatch = machine.dispatch;
    handOff.onAbort = () => machine.dispatch("aborted");
    options.signal.addEventListener("abort", handOff.onAbort);
    if (options.signal.aborted) return handOff.onAbort();
    machine.dispatch(options.followWriter ? "start" : "start-stranger");
  });
}

function runEffect<T>(handOff: HandOff<T>, effect: WaitEffect): WaitEvent | undefined {
  switch (effect) {
    case "find-writer":
      return findWriter(handOff, undefined);
    case "find-new-writer":
      return findWriter(handOff, handOff.goneIno);
    case "watch-folder":
      return watchFolder(handOff);
    case "stop-watching-folder":
      return stopWatchingFolder(handOff);
    case "keep-gone-writer":
      handOff.goneWriter?.forget();
      handOff.goneWriter = handOff.writer;
      handOff.writer = undefined;
      return undefined;
    case "forget-gone-writer":
      handOff.goneWriter?.forget();
      handOff.goneWriter = undefined;
      return undefined;
    case "look":
      return lookOnce(handOff) ?? undefined;
    case "last-look":
      return lookOnce(handOff) ?? "file-missing";
    case "answer-found":
      handOff.resolve(handOff.found!);
      return undefined;
    case "answer-died":
      handOff.resolve(handOff.options.died);
      return undefined;
    case "answer-error":
      handOff.reject(handOff.error);
      return undefined;
    case "answer-aborted":
      handOff.reject(handOff.options.signal.reason);
      return undefined;
    case "tidy-up-soon":
      // Once the caller has moved on: its command is already starting. This is code run for the first time, which
      // would otherwise sit between the post file and the next command (docs/performance.md, row 1).
      setImmediate(tidyUp, handOff);
      return undefined;
  }
}

/**
 * Looks for the file's baton writer (passing over the liveness file numbered `notIno`): writer-found once a thread
 * waits on its lock (the thread is waiting before the look that follows: a writer that hands on after it opened the
 * file wakes it), lock-free when its lock was seen free without one, no-writer otherwise.
 */
function findWriter<T>(handOff: HandOff<T>, notIno: number | undefined): WaitEvent {
  const found = waitForWriter(
    handOff.file,
    notIno,
    (ino, ok) => handOff.dispatch(writerLetGo(handOff, ino, ok)),
    () => handOff.dispatch("woken"),
  );
  if (found === undefined) return "no-writer";
  if ("freeIno" in found) return writerLetGo(handOff, found.freeIno, true);
  handOff.writer = found;
  return "writer-found";
}

/** The one way a free lock reaches the wait, from the thread or from a look without one. */
function writerLetGo<T>(handOff: HandOff<T>, ino: number, ok: boolean): WaitEvent {
  const event = ok ? "lock-free" : "lock-failed";
  if (ok) handOff.goneIno = ino;
  return event;
}

/** file-seen (what the look found is kept for the answer), look-failed, or undefined: nothing yet. */
function lookOnce<T>(handOff: HandOff<T>): WaitEvent | undefined {
  try {
    handOff.found = handOff.look();
    return handOff.found === undefined ? undefined : "file-seen";
  } catch (error) {
    handOff.error = error;
    return "look-failed";
  }
}

function watchFolder<T>(handOff: HandOff<T>): undefined {
  const changed = () => handOff.dispatch("folder-changed");
  handOff.folderWatch = watchFolderOf(handOff.file, changed, handOff.options.warn, (path, error) => {
    handOff.error = handOff.options.refused(path, error);
    handOff.dispatch("unsearchable");
  });
  handOff.safetyPoll = every(handOff.options.safetyPollMs, changed);
  return undefined;
}

function stopWatchingFolder<T>(handOff: HandOff<T>): undefined {
  handOff.folderWatch?.close();
  handOff.folderWatch = undefined;
  clearInterval(handOff.safetyPoll);
  handOff.safetyPoll = undefined;
  return undefined;
}

function tidyUp<T>(handOff: HandOff<T>): void {
  stopWatchingFolder(handOff);
  handOff.writer?.forget();
  handOff.goneWriter?.forget();
  handOff.options.signal.removeEventListener("abort", handOff.onAbort);
}
