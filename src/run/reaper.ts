// Reaping orphans, like tini: as PID 1 (or a child subreaper) baton inherits every process its command leaves behind,
// and Node only ever waits for the children it spawned itself. On SIGCHLD we peek at an exited child without reaping
// it (waitid WNOWAIT); a pid that baton spawned is left for what collects its status (libuv, or the addon's spawn in
// src/run/start-process.ts), and anything else is reaped. The native part is the addon (src/addon/), loaded on the first SIGCHLD so that a step pays nothing
// for it before its command runs.
import { loadNativeAddon, type NativeAddon } from "../addon/load-addon.js";

export interface ReapingOptions {
  /** true for a pid that Node spawned and has not reported as exited yet: its status belongs to libuv */
  isOurChild: (pid: number) => boolean;
  /** told once when reaping cannot work (the addon does not load); baton carries on without it */
  warn: (message: string) => void;
  /** ask to be a child subreaper when not PID 1 (opt-in: see shouldBecomeSubreaper) */
  subreaper?: boolean;
  loadAddon?: () => NativeAddon;
}

export interface Reaper {
  /** orphans reaped so far */
  readonly reaped: number;
  stop(): void;
}

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
  const load = options.loadAddon ?? loadNativeAddon;
  let addon: NativeAddon | undefined;
  let failed = false;
  let reaped = 0;
  let retry: NodeJS.Timeout | undefined;

  const giveUp = (message: string) => {
    failed = true;
    stop();
    options.warn(`${message}; orphaned processes will not be reaped`);
  };
  const ready = (): NativeAddon | undefined => {
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

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
