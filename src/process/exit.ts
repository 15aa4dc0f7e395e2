import { loadNativeAddon } from "../addon/load-addon.js";

// How baton ends, once the post file, the termination message and the command's output are all written (every write
// before this point is synchronous or awaited). process.exit() would first shut down Node's platform, joining its
// worker threads, and that join can deadlock with a V8 worker parked in a concurrent compile that waits for a GC on
// the main thread (nodejs/node#54918, open; seen here on Node 24 after a 200 MiB capture): a step that never exits
// keeps its pod from ending. _exit(2) from the native addon skips that shutdown; without the addon, process.exit().
// A profiler or coverage writes its file on Node's own way out, so when one is on, process.exit() it is: a run under
// a profiler is someone debugging, not a pod's step. Someone who said so: a flag on Node's own command line, or
// BATON_PROFILE=1 for NODE_OPTIONS and NODE_V8_COVERAGE. Those two alone are the step's environment, which belongs to
// its command: a Node program's NODE_V8_COVERAGE must not make baton write coverage files into the user's folder.

export function exitBaton(code: number): never {
  if (!profiled()) {
    try {
      loadNativeAddon().exitNow(code);
    } catch {
      // no addon here: Node's own exit
    }
  }
  process.exit(code);
}

/** --cpu-prof, --heap-prof or --prof on Node's command line, or BATON_PROFILE=1. */
export function profiled(execArgv: readonly string[] = process.execArgv, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.BATON_PROFILE === "1") return true;
  // Loops and string tests, not some(callback) or a RegExp: either would be compiled at its first use, here on the
  // hand-on path.
  for (const flag of execArgv) {
    for (const name of PROFILER_FLAGS) if (flag === name || flag.startsWith(`${name}=`)) return true;
  }
  return false;
}

const PROFILER_FLAGS = ["--cpu-prof", "--heap-prof", "--prof"];
