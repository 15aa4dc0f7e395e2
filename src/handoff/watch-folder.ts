import { lstatSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { loadNativeAddon, type InotifyHandle, type NativeAddon } from "../addon/load-addon.js";
import { statOrUndefined } from "../base/files.js";
import { errnoError } from "../base/errors.js";
import { FOLDER_TRANSITIONS, machineOf, type FolderEffect, type FolderEvent, type FolderState } from "./wait-states.js";

// Calls onChange whenever something may have happened to `file`, using an inotify watch on the nearest folder of the
// file that exists. Event names and filenames are ignored: the caller re-stats the file (docs/design.md "Waiting":
// this catches create, write, rename-into-place and the Kubernetes ..data symlink swap). On every event the watch is
// re-armed on the deepest existing folder, so a folder that appears later, or is removed and made again, is followed.
// The inotify instance is this watch's own (the addon's, src/addon/wait-events.c) and is closed with it: inotify
// instances are a per-user budget of the whole node (128 by default), and Node's fs.watch keeps its one until exit.
// Its states (watching, polling, refused) and what moves it between them: FOLDER_TRANSITIONS in wait-states.ts; this
// file runs the effects, which are the system calls.

/** First interval of the poll that replaces the watch when there is none (no instance left, no addon). */
export const FALLBACK_POLL_MS = 100;
/** The poll slows down to this: a waiting step must cost the node next to nothing (docs/design.md "Waiting"). */
export const FALLBACK_POLL_MAX_MS = 1000;

export interface FolderWatch {
  close(): void;
}

/** A folder and its inode (to notice a folder removed and made again at the same path). */
interface Folder {
  path: string;
  ino: number;
}

/** What one folder watch holds. Declared whole before the functions that use it. */
interface Watching {
  readonly file: string;
  readonly onChange: () => void;
  readonly warn: (message: string) => void;
  readonly refused: (path: string, error: NodeJS.ErrnoException) => void;
  addon: NativeAddon | undefined;
  instance: InotifyHandle | undefined;
  /** The folder the inotify watch (`wd`) is on now. */
  target: (Folder & { wd: number }) | undefined;
  /** The target itself was removed or moved (its watch then ends): a folder made again there may have its inode. */
  targetGone: boolean;
  /** The watches on the folders that hold a symlink on the way to the target. */
  linkWatches: number[];
  poll: NodeJS.Timeout | undefined;
  /** The next poll's interval: FALLBACK_POLL_MS, doubled at each tick up to FALLBACK_POLL_MAX_MS. */
  pollMs: number;
  /** A next-turn is due: one look per turn of the event loop, however many events one read brought. */
  turnPending: boolean;
  /** Why the watch failed, for warn-polling and refuse. */
  failure: { path: string; error: NodeJS.ErrnoException } | undefined;
  dispatch: (event: FolderEvent) => void;
}

/**
 * `refused` is told when the file may not even be looked up (a folder on the way not searchable: EACCES, EPERM):
 * polling would wait forever on a file that baton can never see (Tekton's waiter returns that error too). Any other
 * refusal (the inotify limits, a folder that may be searched but not read, no addon) falls back to polling.
 */
export function watchFolderOf(
  file: string,
  onChange: () => void,
  warn: (message: string) => void,
  refused: (path: string, error: NodeJS.ErrnoException) => void,
): FolderWatch {
  const watching: Watching = {
    file, onChange, warn, refused,
    addon: undefined, instance: undefined, target: undefined, targetGone: false, linkWatches: [],
    poll: undefined, pollMs: FALLBACK_POLL_MS, turnPending: false, failure: undefined, dispatch: () => {},
  };
  const machine = machineOf<FolderState, FolderEvent, FolderEffect>(FOLDER_TRANSITIONS, "opening", (effect) => runEffect(watching, effect));
  watching.dispatch = machine.dispatch;
  machine.dispatch(open(watching));
  return {
    close: function close() {
      machine.dispatch("close");
    },
  };
}

/** Opens this watch's inotify instance: opened, or why not. */
function open(watching: Watching): FolderEvent {
  try {
    watching.addon = loadNativeAddon();
    const opened = watching.addon.inotifyOpen(
      function onEvents(endedWatches: number[]) {
        if (watching.target && endedWatches.includes(watching.target.wd)) watching.targetGone = true;
        watching.dispatch("events");
      },
    );
    if (typeof opened === "number") throw errnoError(opened, "inotify_init1", dirname(watching.file));
    watching.instance = opened;
    return "opened";
  } catch (error) {
    return failed(watching, dirname(watching.file), error as NodeJS.ErrnoException);
  }
}

function runEffect(watching: Watching, effect: FolderEffect): FolderEvent | undefined {
  switch (effect) {
    case "arm":
      return arm(watching);
    case "next-turn-once":
      if (watching.turnPending) return undefined;
      watching.turnPending = true;
      // setImmediate runs right after this turn's I/O callbacks. A post file written as temp + rename is 3-4 events,
      // and every step waiting in that folder wakes for them; in a chain of 31 steps those looks were most of the
      // handoff (make bench, row 1c).
      setImmediate(nextTurn, watching);
      return undefined;
    case "stop-inotify":
      return stopInotify(watching);
    case "warn-polling":
      watching.warn(`cannot watch ${watching.failure!.path} (${watching.failure!.error.code ?? watching.failure!.error.message}); polling every ${FALLBACK_POLL_MS} ms instead, slowing down to every ${FALLBACK_POLL_MAX_MS} ms`);
      return undefined;
    case "poll":
      // A file written soon after the wait began is seen soon, and a long wait costs one wake-up a second.
      watching.poll = setTimeout(() => watching.dispatch("tick"), watching.pollMs);
      watching.pollMs = Math.min(watching.pollMs * 2, FALLBACK_POLL_MAX_MS);
      return undefined;
    case "stop-poll":
      if (watching.poll) clearTimeout(watching.poll);
      return undefined;
    case "tell-caller":
      watching.onChange();
      return undefined;
    case "refuse":
      watching.refused(watching.failure!.path, watching.failure!.error);
      return undefined;
  }
}

function nextTurn(watching: Watching) {
  watching.turnPending = false;
  watching.dispatch("next-turn");
}

function stopInotify(watching: Watching): undefined {
  if (watching.instance !== undefined) watching.addon!.inotifyClose(watching.instance);
  watching.instance = undefined;
  watching.target = undefined;
  watching.linkWatches = [];
  return undefined;
}

/**
 * Moves the inotify watch to the deepest existing folder on the way to the file, unless it is there already: undefined,
 * or the event that says why it cannot be.
 */
function arm(watching: Watching): FolderEvent | undefined {
  const folder = dirname(watching.file);
  try {
    for (;;) {
      const nearest = nearestFolder(folder);
      const target = watching.target;
      if (!(target && !watching.targetGone && sameFolder(nearest, target))) {
        const failure = watchAnew(watching, nearest);
        if (failure === "moved") continue;
        if (failure !== undefined) return failure;
      }
      // A folder made between finding `nearest` and arming its watch gave no event: make sure none was.
      if (sameFolder(nearestFolder(folder), nearest)) return undefined;
    }
  } catch (error) {
    return failed(watching, folder, error as NodeJS.ErrnoException);
  }
}

/** Puts the inotify watch on `folder` (and on the folders of the symlinks on its way); "moved" when it went away. */
function watchAnew(watching: Watching, folder: Folder): FolderEvent | "moved" | undefined {
  watching.targetGone = false;
  if (watching.target) watching.addon!.inotifyRemove(watching.instance!, watching.target.wd);
  watching.target = undefined;
  let wd: number;
  try {
    wd = addWatch(watching, folder.path);
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    // ENOENT/ENOTDIR: the folder went away between the stat and the watch; look for its parent again.
    if (e.code === "ENOENT" || e.code === "ENOTDIR") return "moved";
    return failed(watching, folder.path, e);
  }
  watching.target = { ...folder, wd };
  watchLinkFolders(watching, folder.path);
  return undefined;
}

/**
 * A folder reached through a symlink (lk/post with lk -> a) changes when that link is retargeted, and only the folder
 * holding the link gets an event for it: watch those folders too. Best effort: the safety poll remains.
 */
function watchLinkFolders(watching: Watching, path: string) {
  for (const wd of watching.linkWatches) if (wd !== watching.target?.wd) watching.addon!.inotifyRemove(watching.instance!, wd);
  watching.linkWatches = [];
  for (let part = path; part !== dirname(part); part = dirname(part)) {
    if (!isSymlink(part)) continue;
    try {
      watching.linkWatches.push(addWatch(watching, dirname(part)));
    } catch {
      // Not watchable (the watch limit): the safety poll still sees the retargeted link.
    }
  }
}

function addWatch(watching: Watching, path: string): number {
  const wd = watching.addon!.inotifyAdd(watching.instance!, path);
  if (wd < 0) throw errnoError(wd, "inotify_add_watch", path);
  return wd;
}

/** A watch that failed on `path`: unsearchable when the file cannot even be looked up, watch-failed (poll) otherwise. */
function failed(watching: Watching, path: string, error: NodeJS.ErrnoException): FolderEvent {
  watching.failure = { path, error };
  // A search-only folder (0711) may not be watched but its files may be looked at: poll those.
  const unsearchable = (error.code === "EACCES" || error.code === "EPERM") && !canLookAt(watching.file);
  return unsearchable ? "unsearchable" : "watch-failed";
}

function sameFolder(a: Folder, b: Folder): boolean {
  return a.path === b.path && a.ino === b.ino;
}

/** The deepest existing folder on the way to `folder` (at worst "/"), with its inode to notice a re-creation. */
function nearestFolder(folder: string): Folder {
  for (let path = folder; ; path = dirname(path)) {
    const stats = statOrUndefined(path);
    if (stats?.isDirectory()) return { path, ino: stats.ino };
    if (path === dirname(path)) throw Object.assign(new Error(`no folder of ${folder} exists`), { code: "ENOENT" });
  }
}

/** Whether `file` may be looked up (its folders searchable), whether or not it exists. */
function canLookAt(file: string): boolean {
  try {
    statSync(file);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ENOENT" || code === "ENOTDIR";
  }
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}
