import { lstatSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { loadNativeAddon, type InotifyHandle, type NativeAddon } from "../addon/load-addon.js";
import { statOrUndefined } from "../base/files.js";
import { errnoError } from "../base/errors.js";

// Calls onChange whenever something may have happened to `file`, using an inotify watch on the nearest folder of the
// file that exists. Event names and filenames are ignored: the caller re-stats the file (docs/design.md "Waiting":
// this catches create, write, rename-into-place and the Kubernetes ..data symlink swap). On every event the watch is
// re-armed on the deepest existing folder, so a folder that appears later, or is removed and made again, is followed.
// The inotify instance is this watch's own (the addon's, src/addon/wait-events.c) and is closed with it: inotify
// instances are a per-user budget of the whole node (128 by default), and Node's fs.watch keeps its one until exit.

/** First interval of the poll that replaces the watch when there is none (no instance left, no addon). */
export const FALLBACK_POLL_MS = 100;
/** The poll slows down to this: a waiting step must cost the node next to nothing (docs/design.md "Waiting"). */
export const FALLBACK_POLL_MAX_MS = 1000;

export interface FolderWatch {
  close(): void;
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
  const folder = dirname(file);
  let addon: NativeAddon | undefined;
  let events: InotifyHandle | undefined;
  let watched: { path: string; ino: number; wd: number } | undefined;
  let linkWatches: number[] = [];
  let poll: NodeJS.Timeout | undefined;
  let givenUp = false;
  let closed = false;

  const fallBackToPolling = (path: string, error: NodeJS.ErrnoException) => {
    stopWatching();
    // A search-only folder (0711) may not be watched but its files may be looked at: poll those.
    if ((error.code === "EACCES" || error.code === "EPERM") && !canLookAt(file)) {
      givenUp = true;
      return refused(path, error);
    }
    warn(`cannot watch ${path} (${error.code ?? error.message}); polling every ${FALLBACK_POLL_MS} ms instead, slowing down to every ${FALLBACK_POLL_MAX_MS} ms`);
    pollEvery(FALLBACK_POLL_MS);
  };
  // Backs off to FALLBACK_POLL_MAX_MS: a file written soon after the wait began is seen soon, and a long wait costs
  // one wake-up a second.
  const pollEvery = (ms: number) => {
    poll = setTimeout(() => {
      if (closed) return;
      pollEvery(Math.min(ms * 2, FALLBACK_POLL_MAX_MS));
      onChange();
    }, ms);
  };

  const add = (path: string): number => {
    const wd = addon!.inotifyAdd(events!, path);
    if (wd < 0) throw errnoError(wd, "inotify_add_watch", path);
    return wd;
  };

  const arm = () => {
    for (;;) {
      if (poll || givenUp || closed) return;
      const target = nearestFolder(folder);
      if (!(watched && !watchedGone && sameFolder(target, watched))) {
        watchedGone = false;
        if (watched) addon!.inotifyRemove(events!, watched.wd);
        watched = undefined;
        let wd: number;
        try {
          wd = add(target.path);
        } catch (error) {
          const e = error as NodeJS.ErrnoException;
          // ENOENT/ENOTDIR: the folder went away between the stat and the watch; look for its parent again.
          if (e.code === "ENOENT" || e.code === "ENOTDIR") continue;
          return fallBackToPolling(target.path, e);
        }
        watched = { ...target, wd };
        watchLinkFolders(target.path);
      }
      // A folder made between finding `target` and arming its watch gave no event: make sure none was.
      if (sameFolder(nearestFolder(folder), target)) return;
    }
  };

  // A folder reached through a symlink (lk/post with lk -> a) changes when that link is retargeted, and only the
  // folder holding the link gets an event for it: watch those folders too. Best effort: the safety poll remains.
  function watchLinkFolders(path: string) {
    for (const wd of linkWatches) if (wd !== watched?.wd) addon!.inotifyRemove(events!, wd);
    linkWatches = [];
    for (let part = path; part !== dirname(part); part = dirname(part)) {
      if (!isSymlink(part)) continue;
      try {
        linkWatches.push(add(dirname(part)));
      } catch {
        // Not watchable (the watch limit): the safety poll still sees the retargeted link.
      }
    }
  }

  // One look per turn of the event loop, however many events one read of inotify brought: a post file written as
  // temp + rename is 3-4 events, and every step waiting in that folder wakes for them. In a chain of 31 steps those
  // looks were most of the handoff (make bench, row 1c). setImmediate runs right after this turn's I/O callbacks.
  let lookPending = false;
  // The watched folder itself was removed or moved (its watch then ends). A folder made again at that path can have
  // the same inode number (ext4, overlay reuse them): watch it anew.
  let watchedGone = false;
  // Eager: on the wake-up path (docs/design.md#eager-functions).
  const onEvents = (function onEvents(endedWatches: number[]) {
    if (watched && endedWatches.includes(watched.wd)) watchedGone = true;
    if (lookPending) return;
    lookPending = true;
    setImmediate(() => {
      lookPending = false;
      if (closed) return;
      try {
        arm();
      } catch (error) {
        fallBackToPolling(folder, error as NodeJS.ErrnoException);
      }
      onChange();
    });
  });

  // Eager: on the hand-on path (docs/design.md#eager-functions).
  const stopWatching = (function stopWatching() {
    if (events !== undefined) addon!.inotifyClose(events);
    events = undefined;
    watched = undefined;
    linkWatches = [];
  });

  // Eager: on the hand-on path (docs/design.md#eager-functions).
  const close = (function close() {
    closed = true;
    stopWatching();
    if (poll) clearTimeout(poll);
  });

  try {
    addon = loadNativeAddon();
    const opened = addon.inotifyOpen(onEvents);
    if (typeof opened === "number") throw errnoError(opened, "inotify_init1", folder);
    events = opened;
  } catch (error) {
    fallBackToPolling(folder, error as NodeJS.ErrnoException);
    return { close };
  }
  arm();
  return { close };
}

function sameFolder(a: { path: string; ino: number }, b: { path: string; ino: number }): boolean {
  return a.path === b.path && a.ino === b.ino;
}

/** The deepest existing folder on the way to `folder` (at worst "/"), with its inode to notice a re-creation. */
function nearestFolder(folder: string): { path: string; ino: number } {
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

