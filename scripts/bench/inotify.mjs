// What the bench and the integration tests look at of a process's inotify use (how both lower the node's inotify
// budget: namespaces.mjs): one copy, imported by scripts/bench/lib.mjs (re-exported) and by test/integration/. No side
// effects (lib.mjs installs signal handlers, which a test process must not get).
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { PROC } from "./proc.mjs";

/**
 * The open descriptors of `pid` and what each points at (`anon_inode:inotify`, `PATH (deleted)`, ...); none when it
 * has ended.
 * @param {number} pid
 * @returns {{ fd: string, target: string }[]}
 */
export function openDescriptors(pid) {
  let fds;
  try {
    fds = readdirSync(`${PROC}/${pid}/fd`);
  } catch {
    return [];
  }
  return fds.flatMap((fd) => {
    try {
      return [{ fd, target: readlinkSync(`${PROC}/${pid}/fd/${fd}`) }];
    } catch {
      return []; // the fd closed while we looked
    }
  });
}

/**
 * The descriptors of `pid` that are inotify instances.
 * @param {number} pid
 * @returns {string[]}
 */
function inotifyDescriptors(pid) {
  return openDescriptors(pid).filter((d) => d.target === "anon_inode:inotify").map((d) => d.fd);
}

/**
 * How many inotify instances `pid` holds: one per waiting step is what baton must not take from the node.
 * @param {number} pid
 * @returns {number}
 */
export function inotifyInstances(pid) {
  return inotifyDescriptors(pid).length;
}

/**
 * True once `pid` holds an inotify instance with at least one watch, i.e. a waiting step has armed its watch.
 * @param {number} pid
 * @returns {boolean}
 */
export function hasInotifyWatch(pid) {
  return inotifyDescriptors(pid).some((fd) => {
    try {
      return readFileSync(`${PROC}/${pid}/fdinfo/${fd}`, "utf8").includes("inotify wd:");
    } catch {
      return false;
    }
  });
}
