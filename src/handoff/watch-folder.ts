import { watch, lstatSync, statSync, type FSWatcher } from "node:fs";
import { basename, dirname } from "node:path";
import { statOrUndefined } from "../base/files.js";

// Calls onChange whenever something may have happened to `file`, using one inotify watch on the nearest folder
// of the file that exists. Event names and filenames are ignored: the caller re-stats the file (docs/design.md
// "How it waits": this catches create, write, rename-into-place and the Kubernetes
// ..data symlink swap). On every event the watch is re-armed on the deepest existing folder, so a folder that
// appears later, or is removed and made again, is followed.

/** Polling interval when the kernel refuses a watch (inotify limits are per user and shared by a whole node). */
export const FALLBACK_POLL_MS = 100;

export interface FolderWatch {
  close(): void;
}

/**
 * `refused` is told when the file may not even be looked up (a folder on the way not searchable: EACCES, EPERM):
 * polling would wait forever on a file that baton can never see (Tekton's waiter returns that error too). Any other
 * refusal (the inotify limits, a folder that may be searched but not read) falls back to polling.
 */
export function watchFolderOf(
  file: string,
  onChange: () => void,
  warn: (message: string) => void,
  refused: (path: string, error: NodeJS.ErrnoException) => void,
): FolderWatch {
  const folder = dirname(file);
  let watcher: FSWatcher | undefined;
  let watched: { path: string; ino: number } | undefined;
  let linkWatchers: FSWatcher[] = [];
  let poll: NodeJS.Timeout | undefined;
  let givenUp = false;

  const fallBackToPolling = (path: string, error: NodeJS.ErrnoException) => {
    close();
    // A search-only folder (0711) may not be watched but its files may be looked at: poll those.
    if ((error.code === "EACCES" || error.code === "EPERM") && !canLookAt(file)) {
      givenUp = true;
      return refused(path, error);
    }
    warn(`cannot watch ${path} (${error.code ?? error.message}); polling every ${FALLBACK_POLL_MS} ms instead`);
    poll = setInterval(onChange, FALLBACK_POLL_MS);
  };

  const arm = () => {
    for (;;) {
      if (poll || givenUp) return;
      const target = nearestFolder(folder);
      if (!(watcher && watched && !watchedGone && sameFolder(target, watched))) {
        watchedGone = false;
        watcher?.close();
        watcher = undefined;
        try {
          watcher = watch(target.path, { persistent: true }, onEvent);
        } catch (error) {
          const e = error as NodeJS.ErrnoException;
          // ENOENT/ENOTDIR: the folder went away between the stat and the watch; look for its parent again.
          if (e.code === "ENOENT" || e.code === "ENOTDIR") continue;
          return fallBackToPolling(target.path, e);
        }
        watcher.on("error", onEvent);
        watched = target;
        watchLinkFolders(target.path);
      }
      // A folder made between finding `target` and arming its watch gave no event: make sure none was.
      if (sameFolder(nearestFolder(folder), target)) return;
    }
  };

  // A folder reached through a symlink (lk/post with lk -> a) changes when that link is retargeted, and only the
  // folder holding the link gets an event for it: watch those folders too. Best effort: the safety poll remains.
  function watchLinkFolders(path: string) {
    for (const linkWatcher of linkWatchers) linkWatcher.close();
    linkWatchers = [];
    for (let part = path; part !== dirname(part); part = dirname(part)) {
      if (!isSymlink(part)) continue;
      try {
        const linkWatcher = watch(dirname(part), { persistent: true }, onEvent);
        linkWatcher.on("error", () => linkWatcher.close());
        linkWatchers.push(linkWatcher);
      } catch {
        // Not watchable (inotify limit): the safety poll still sees the retargeted link.
      }
    }
  }

  // One look per turn of the event loop, however many events one read of inotify brought: a post file written as
  // temp + rename is 3-4 events, and every step waiting in that folder wakes for them. In a chain of 31 steps those
  // looks were most of the handoff (make bench, row 1c). setImmediate runs right after this turn's I/O callbacks.
  let lookPending = false;
  // The watched folder itself was removed (its watch then ends: inotify names the folder itself in the event). A
  // folder made again at that path can have the same inode number (ext4, overlay reuse them): watch it anew.
  let watchedGone = false;
  function onEvent(_event?: unknown, name?: unknown) {
    if (watched && typeof name === "string" && name === basename(watched.path)) watchedGone = true;
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
  }

  let closed = false;
  function close() {
    closed = true;
    watcher?.close();
    watcher = undefined;
    for (const linkWatcher of linkWatchers) linkWatcher.close();
    linkWatchers = [];
    if (poll) clearInterval(poll);
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
