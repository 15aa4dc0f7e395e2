import type { ChildProcess } from "node:child_process";

// The pids Node spawned and still has to collect. The reaper never touches these: their exit status belongs to
// libuv, which reports it as the child's 'exit' event. Every spawn of baton's must go through trackChild.
const running = new Set<number>();

export function trackChild(child: ChildProcess): void {
  const pid = child.pid;
  if (pid === undefined) return; // never started: there is nothing to collect
  running.add(pid);
  child.once("exit", () => running.delete(pid));
}

export function isTrackedChild(pid: number): boolean {
  return running.has(pid);
}
