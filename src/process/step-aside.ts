import { readdirSync } from "node:fs";
import { lazyBuiltin } from "../base/builtin.js";

// Once a step has written its post file, all that is left of it (the events lines, _exit, and the kernel unmapping
// its ~40 MiB, which costs milliseconds of CPU on a virtual machine's page tables) is on nobody's path, while the next
// step is starting its command on the same node at that very moment. So the step lowers every thread of its own to
// nice 19 before it wakes the next: on a node short of CPUs the successor runs first (make bench, row 8: hand-off p50
// 12.4 -> 9.4 ms with 2 vCPUs; docs/performance.md). setpriority(2) takes one thread per call; raising one's own
// niceness needs no privilege. A sidecar, which goes on running after its ready file, never does this.

const LOWEST = 19;

let prepared = false;

/**
 * While the step has time (it waits, or its command runs): has V8 compile node:os's setPriority now (its first call
 * compiles it), not between the command's exit and the post file. Setting the calling thread's niceness to what it is
 * changes nothing. Once per process.
 */
export function prepareToStepAside(): void {
  if (prepared) return;
  prepared = true;
  const { getPriority, setPriority } = lazyBuiltin<typeof import("node:os")>("node:os");
  try {
    setPriority(0, getPriority(0));
  } catch {
    // refused (seccomp): stepAside will meet the same refusal, and ignore it too
  }
}

export function stepAside(): void {
  const { setPriority } = lazyBuiltin<typeof import("node:os")>("node:os");
  let threads: string[];
  try {
    threads = readdirSync("/proc/self/task");
  } catch {
    threads = ["0"]; // no /proc: the calling thread only, the one that does the exit
  }
  for (const thread of threads) {
    try {
      setPriority(Number(thread), LOWEST);
    } catch {
      // gone already, or a seccomp profile that refuses it: the step only ends a little less politely
    }
  }
}
