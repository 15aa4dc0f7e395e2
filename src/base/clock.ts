// The one clock for every deadline (--timeout, --grace-period, --wait-timeout, polls, the sidecar's stop): monotonic,
// so an NTP step or a resumed VM never makes a grace period end early; and any length the duration parser accepts.
// Node's setTimeout takes at most 2^31-1 ms (~24.8 days) and fires a longer delay after 1 ms instead: after() waits
// in pieces. Date.now() is for timestamps people read (post records, events), never for how long something took.

/** The longest delay setTimeout/setInterval honour. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Milliseconds on the monotonic clock (CLOCK_MONOTONIC, as libuv's timers use). Not `performance`: its first use
 * loads perf_hooks, which every step would pay for at start-up. */
export function monotonicMs(): number {
  const [seconds, nanoseconds] = process.hrtime();
  return seconds * 1e3 + nanoseconds / 1e6;
}

export interface Deadline {
  clear(): void;
}

/** Calls `fire` once, `ms` from now on the monotonic clock. A non-finite `ms` (too large to count) never fires. */
export function after(ms: number, fire: () => void): Deadline {
  let timer: NodeJS.Timeout | undefined;
  if (Number.isFinite(ms)) {
    const due = monotonicMs() + ms;
    const arm = (delay: number) => {
      timer = setTimeout(() => {
        const left = due - monotonicMs();
        if (left > 0.5) arm(left);
        else fire();
      }, Math.min(Math.max(1, Math.ceil(delay)), MAX_TIMER_MS));
    };
    arm(ms);
  }
  return { clear: () => clearTimeout(timer) };
}

/** setInterval for `ms`, capped at MAX_TIMER_MS (a poll every 24.8 days is as good as none; 1 ms is not). */
export function every(ms: number, tick: () => void): NodeJS.Timeout {
  return setInterval(tick, Math.min(Math.max(1, ms), MAX_TIMER_MS));
}

/** Resolves `ms` from now (for the bounded retry loops). */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => after(ms, resolve));
}
