// Reaping orphans, like tini: as PID 1 (or a child subreaper) baton inherits every process its command leaves behind,
// and Node only ever waits for the children it spawned itself. On SIGCHLD we peek at an exited child without reaping
// it (waitid WNOWAIT); a pid that Node spawned is left for libuv, which is waiting for its status, and anything else
// is reaped. The native part is dist/baton-reaper.node (src/run/reaper.c), loaded on the first SIGCHLD so that a
// step pays nothing for it before its command runs.
import { existsSync, mkdtempSync, rmdirSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

export interface ReaperAddon {
  /** pid of an exited child that is not reaped yet (left unreaped), 0 if none */
  peekExited(): number;
  /** waitpid(pid, WNOHANG): pid when reaped, 0 when still running, -1 when not our child */
  reap(pid: number): number;
  /** prctl(PR_SET_CHILD_SUBREAPER, 1) */
  becomeSubreaper(): void;
  /** flock(fd, operation | LOCK_NB): 0, or the errno (EWOULDBLOCK: held by another process). See liveness-lock.ts. */
  flock(fd: number, operation: number): number;
  /** _exit(code): ends the process without Node's platform shutdown (src/exit.ts). */
  exitNow(code: number): never;
}

export interface ReapingOptions {
  /** true for a pid that Node spawned and has not reported as exited yet: its status belongs to libuv */
  isOurChild: (pid: number) => boolean;
  /** told once when reaping cannot work (the addon does not load); baton carries on without it */
  warn: (message: string) => void;
  /** ask to be a child subreaper when not PID 1 (opt-in: see shouldBecomeSubreaper) */
  subreaper?: boolean;
  loadAddon?: () => ReaperAddon;
}

export interface Reaper {
  /** orphans reaped so far */
  readonly reaped: number;
  stop(): void;
}

export const ADDON_FILE = "baton-reaper.node";
/** how long to wait before looking again when the exited child is one libuv has still to reap */
const RETRY_MS = 5;

/**
 * Outside PID 1, orphans go to the real init (or the nearest subreaper), which reaps them; becoming a subreaper
 * there is opt-in (BATON_SUBREAPER=1), as with tini's TINI_SUBREAPER.
 */
export function shouldBecomeSubreaper(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.BATON_SUBREAPER;
  return value !== undefined && value !== "" && value !== "0" && value !== "false";
}

/**
 * Starts reaping when baton is PID 1 or asked to be a subreaper; otherwise does nothing and returns undefined.
 * Call it before spawning the child: a subreaper must be one before orphans appear, and the SIGCHLD listener
 * is cheap (the addon is loaded only when the first child exits, or at once for a subreaper).
 */
export function startReaping(options: ReapingOptions): Reaper | undefined {
  const asSubreaper = process.pid !== 1 && options.subreaper === true;
  if (process.pid !== 1 && !asSubreaper) return undefined;
  const load = options.loadAddon ?? loadReaperAddon;
  let addon: ReaperAddon | undefined;
  let failed = false;
  let reaped = 0;
  let retry: NodeJS.Timeout | undefined;

  const giveUp = (message: string) => {
    failed = true;
    stop();
    options.warn(`${message}; orphaned processes will not be reaped`);
  };
  const ready = (): ReaperAddon | undefined => {
    if (addon === undefined && !failed) {
      try {
        addon = load();
      } catch (error) {
        giveUp(`cannot load the reaper (${messageOf(error)})`);
      }
    }
    return addon;
  };
  const lookAgain = () => {
    retry = undefined;
    reapOrphans();
  };
  const reapOrphans = () => {
    const native = ready();
    if (native === undefined) return;
    try {
      for (;;) {
        const pid = native.peekExited();
        if (pid <= 0) return;
        if (options.isOurChild(pid)) {
          // libuv reaps it on this same SIGCHLD; until then waitid keeps reporting it first, so look again soon.
          retry ??= setTimeout(lookAgain, RETRY_MS).unref();
          return;
        }
        if (native.reap(pid) === pid) reaped++;
      }
    } catch (error) {
      giveUp(`reaping failed (${messageOf(error)})`);
    }
  };
  function stop() {
    process.removeListener("SIGCHLD", reapOrphans);
    if (retry !== undefined) clearTimeout(retry);
    retry = undefined;
  }

  process.on("SIGCHLD", reapOrphans);
  if (asSubreaper) {
    const native = ready();
    if (native !== undefined) {
      try {
        native.becomeSubreaper();
      } catch (error) {
        giveUp(`cannot become a subreaper (${messageOf(error)})`);
      }
    }
  }
  return {
    get reaped() {
      return reaped;
    },
    stop,
  };
}

let loaded: ReaperAddon | undefined;

/**
 * dlopen's the addon (once: the reaper and the liveness lock share it): beside the bundle; in the standalone build,
 * from its lib/ folder or else from its SEA assets.
 */
export function loadReaperAddon(): ReaperAddon {
  loaded ??= loadAddonFile();
  return loaded;
}

function loadAddonFile(): ReaperAddon {
  const sea = process.getBuiltinModule?.("node:sea");
  if (sea?.isSea()) return loadFromSea(sea);
  // The bundle is CommonJS, where __dirname is its own folder (unbundled sources run from src/run/).
  const folder = typeof __dirname === "string" ? __dirname : dirname(process.argv[1] ?? ".");
  return dlopen(join(folder, ADDON_FILE));
}

function loadFromSea(sea: typeof import("node:sea")): ReaperAddon {
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

function dlopen(file: string): ReaperAddon {
  const module = { exports: {} as ReaperAddon };
  process.dlopen(module, file);
  return module.exports;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
