import { loadNativeAddon } from "../addon/load-addon.js";

// How baton ends, once the post file, the termination message and the command's output are all written (every write
// before this point is synchronous or awaited). process.exit() would first shut down Node's platform, joining its
// worker threads, and that join can deadlock with a V8 worker parked in a concurrent compile that waits for a GC on
// the main thread (nodejs/node#54918, open; seen here on Node 24 after a 200 MiB capture): a step that never exits
// keeps its pod from ending. _exit(2) from the native addon skips that shutdown; without the addon, process.exit().

export function exitBaton(code: number): never {
  try {
    loadNativeAddon().exitNow(code);
  } catch {
    // no addon here: Node's own exit
  }
  process.exit(code);
}
