// Where the bench reads other processes' /proc/PID. Each file the bench opens there leaves a dentry in the kernel's
// cache, and when that process is reaped the kernel walks and drops them (release_task -> proc_flush_pid): ~0.8 ms of
// CPU per step of row 8's chain on this machine, in the bench's own process, on CPUs the chain keeps busy. A pod's
// steps have nobody reading their /proc like that. So row 8 reads them through a procfs of its own
// (withOwnProc), unmounted before the chain, which takes those dentries with it (docs/performance.md, row 8).
// No side effects: test/integration/ imports it through inotify.mjs.
import { mkdtempSync, rmdirSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The procfs that per-process reads go through: /proc, or row 8's own while it is mounted. */
export let PROC = "/proc";

/**
 * Mounts a procfs of the bench's own (root only) and reads /proc/PID through it until the returned function unmounts
 * it. Without root, or when the mount fails, reads stay on /proc and the function does nothing.
 * @returns {() => void}
 */
export function withOwnProc() {
  const mountPoint = mkdtempSync(join(tmpdir(), "baton-bench-proc-"));
  if (spawnSync("mount", ["-t", "proc", "proc", mountPoint]).status !== 0) {
    rmdirSync(mountPoint);
    return () => {};
  }
  PROC = mountPoint;
  let mounted = true;
  const release = () => {
    if (!mounted) return;
    mounted = false;
    PROC = "/proc";
    process.off("exit", release);
    // Lazy: a read still open (none should be) does not keep the mount; the superblock goes with its last user.
    spawnSync("umount", ["-l", mountPoint]);
    rmdirSync(mountPoint); // not recursive: never into a procfs
  };
  // A bench stopped by a signal or a failed row ends through process.exit (lib.mjs): no procfs is left in /tmp.
  process.on("exit", release);
  return release;
}
