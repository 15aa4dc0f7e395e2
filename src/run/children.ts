// The pids baton spawned and still has to collect. The reaper never touches these: their exit status belongs to
// whoever started them (libuv, or the addon's spawn in start-process.ts), which reports it as the child's 'exit' event. Every spawn of baton's must go through trackChild.
const running = new Set<number>();

/** What tracking needs of a child: a ChildProcess, or anything else that wraps a libuv process handle. */
export interface TrackableChild {
  readonly pid?: number | undefined;
  once(event: "exit", listener: () => void): unknown;
}

export function trackChild(child: TrackableChild): void {
  const pid = child.pid;
  if (pid === undefined) return; // never started: there is nothing to collect
  running.add(pid);
  child.once("exit", function untrack() {
    running.delete(pid);
  });
}

export function isTrackedChild(pid: number): boolean {
  return running.has(pid);
}
