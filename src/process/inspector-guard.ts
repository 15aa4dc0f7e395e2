// Node starts its inspector (a debugger listening on 127.0.0.1:9229, which every container of a pod can reach) when
// SIGUSR1 arrives, until the listener of src/process/signals.ts takes SIGUSR1 over. A SIGUSR1 in that start-up window (from a
// few to some tens of ms after exec) would leave the inspector open for baton's whole life: this closes it again.
// Cheap when nothing is open (one look at /proc/self/fd for a socket); node:inspector is loaded only then.
import { readdirSync, readlinkSync } from "node:fs";

/** True when this process holds a socket beyond stdin/stdout/stderr (baton itself opens none at start-up). */
export function holdsSocket(fdFolder = "/proc/self/fd"): boolean {
  let fds: string[];
  try {
    fds = readdirSync(fdFolder);
  } catch {
    return false; // no /proc: nothing to go by
  }
  return fds.some((fd) => Number(fd) > 2 && linkTarget(`${fdFolder}/${fd}`).startsWith("socket:"));
}

/** Closes the inspector if a SIGUSR1 during start-up opened it; true when it did. */
export async function closeStrayInspector(fdFolder?: string): Promise<boolean> {
  if (!holdsSocket(fdFolder)) return false;
  const inspector = await import("node:inspector");
  if (inspector.url() === undefined) return false;
  inspector.close();
  return true;
}

function linkTarget(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return ""; // closed meanwhile (readdir's own fd)
  }
}
