import { loadNativeAddon } from "../addon/load-addon.js";

// Hundreds of steps wait at once on a node, and what each holds is paid that many times (make bench, row 8). Node's
// start-up frees most of what it mallocs (the bundle's text read from disk, the compiler's work, V8's worker threads'
// task lists), and glibc keeps those freed pages for the next malloc: ~600 KiB per waiting step on Node 24, most of
// what it held beyond an idle `node` (docs/performance.md). So a step that has waited a while gives them back
// (malloc_trim, from the addon). Not at once: V8's workers may still be at start-up's tasks. And never once the wait is
// over: the step is then on the next step's path, and a page given back is a page fault to take again.

/** Past start-up's background work (and the inspector guard's second look, 1 s after start). */
export const TRIM_AFTER_MS = 1500;

export interface Trimming {
  clear(): void;
}

/**
 * Trims once, TRIM_AFTER_MS from now, unless cleared first: the wait's end clears it. Keeps no event loop alive.
 * `trimmed` hears whether memory went back (how much differs by Node, machine and load: 180-710 KiB seen).
 */
export function trimWhileWaiting(trimmed: (released: boolean) => void, delayMs = TRIM_AFTER_MS, trim: () => boolean = trimNow): Trimming {
  const timer = setTimeout(() => trimmed(trim()), delayMs);
  timer.unref();
  return { clear: function clear() {
    clearTimeout(timer);
  } };
}

function trimNow(): boolean {
  try {
    return loadNativeAddon().trimMemory() === 1;
  } catch {
    // No addon (a copy without it, or a libc it cannot load on): the memory stays, nothing else changes.
    return false;
  }
}
