// The reaping policy against a fake addon: which pids are reaped, which are left for libuv, when it looks again.
// The real system calls are tested as PID 1 in test/integration/reaper.test.ts.
import { afterEach, mock, test } from "node:test";
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { isTrackedChild, trackChild } from "../../src/run/children.js";
import type { NativeAddon } from "../../src/addon/load-addon.js";
import { shouldBecomeSubreaper, startReaping, type Reaper } from "../../src/run/reaper.js";

const notHere = (): never => {
  throw new Error("not in these tests");
};

/** A kernel's view of our exited children, oldest first, as waitid(P_ALL) reports them. */
function fakeKernel(exited: number[]) {
  const reaped: number[] = [];
  let subreaper = false;
  const addon: NativeAddon = {
    peekExited: () => exited[0] ?? 0,
    reap: (pid) => {
      const at = exited.indexOf(pid);
      if (at < 0) return -1;
      exited.splice(at, 1);
      reaped.push(pid);
      return pid;
    },
    becomeSubreaper: () => {
      subreaper = true;
    },
    flock: () => 0,
    placeLiveness: notHere,
    lockHeld: notHere,
    exitNow: () => {
      throw new Error("not in these tests");
    },
    spawnBytes: () => -1,
    waitStatus: () => -2,
    trimMemory: () => 0,
    waitUnlocked: notHere,
    forgetWait: notHere,
    makeFifo: notHere,
    pollClose: notHere,
    inotifyOpen: notHere,
    inotifyAdd: notHere,
    inotifyRemove: notHere,
    inotifyClose: notHere,
  };
  return { addon, exited, reaped, isSubreaper: () => subreaper };
}

let reaper: Reaper | undefined;
afterEach(() => {
  reaper?.stop();
  reaper = undefined;
  mock.timers.reset();
});

// Outside PID 1 (the test runner), the policy runs only as a subreaper.
test("reaps every exited child that Node did not spawn on one SIGCHLD", () => {
  const kernel = fakeKernel([101, 102, 103]);
  reaper = startReaping({ isOurChild: () => false, warn: assert.fail, subreaper: true, loadAddon: () => kernel.addon });
  process.emit("SIGCHLD", "SIGCHLD");
  assert.deepEqual(kernel.reaped, [101, 102, 103]);
  assert.equal(reaper?.reaped, 3);
});

test("leaves Node's own child for libuv and looks again a few milliseconds later", () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  const kernel = fakeKernel([50, 101]);
  const ours = new Set([50]);
  reaper = startReaping({ isOurChild: (pid) => ours.has(pid), warn: assert.fail, subreaper: true, loadAddon: () => kernel.addon });
  process.emit("SIGCHLD", "SIGCHLD");
  assert.deepEqual(kernel.reaped, [], "the orphan behind our child waits; our child's status is never taken");
  // libuv reaps its child and Node reports 'exit'
  kernel.exited.shift();
  ours.delete(50);
  mock.timers.tick(5);
  assert.deepEqual(kernel.reaped, [101]);
});

test("a second SIGCHLD while waiting for libuv does not stack up retries", () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  const kernel = fakeKernel([50]);
  let peeks = 0;
  const peek = kernel.addon.peekExited;
  kernel.addon.peekExited = () => (peeks++, peek());
  reaper = startReaping({ isOurChild: (pid) => pid === 50, warn: assert.fail, subreaper: true, loadAddon: () => kernel.addon });
  process.emit("SIGCHLD", "SIGCHLD");
  process.emit("SIGCHLD", "SIGCHLD");
  assert.equal(peeks, 2);
  mock.timers.tick(5);
  assert.equal(peeks, 3, "one retry, not two");
});

test("an addon that cannot load is reported once, and baton carries on without reaping", () => {
  const warnings: string[] = [];
  let loads = 0;
  reaper = startReaping({
    isOurChild: () => false,
    warn: (message) => warnings.push(message),
    subreaper: false,
    loadAddon: () => {
      loads++;
      throw new Error("/x/baton-reaper.node: cannot open shared object file: No such file or directory");
    },
  });
  assert.equal(reaper, undefined, "not PID 1 and not a subreaper: nothing to do, nothing loaded");
  assert.equal(loads, 0);

  reaper = startReaping({
    isOurChild: () => false,
    warn: (message) => warnings.push(message),
    subreaper: true,
    loadAddon: () => {
      loads++;
      throw new Error("/x/baton-reaper.node: cannot open shared object file: No such file or directory");
    },
  });
  process.emit("SIGCHLD", "SIGCHLD");
  process.emit("SIGCHLD", "SIGCHLD");
  assert.equal(loads, 1);
  assert.deepEqual(warnings, [
    "cannot load the reaper (/x/baton-reaper.node: cannot open shared object file: No such file or directory); " +
      "orphaned processes will not be reaped",
  ]);
});

test("a subreaper asks the kernel at start, before any child exists", () => {
  const kernel = fakeKernel([]);
  reaper = startReaping({ isOurChild: () => false, warn: assert.fail, subreaper: true, loadAddon: () => kernel.addon });
  assert.equal(kernel.isSubreaper(), true);
});

test("stop() removes the SIGCHLD listener", () => {
  const before = process.listenerCount("SIGCHLD");
  reaper = startReaping({ isOurChild: () => false, warn: assert.fail, subreaper: true, loadAddon: () => fakeKernel([]).addon });
  assert.equal(process.listenerCount("SIGCHLD"), before + 1);
  reaper?.stop();
  assert.equal(process.listenerCount("SIGCHLD"), before);
});

test("BATON_SUBREAPER opts in; unset, empty, 0 and false do not", () => {
  assert.equal(shouldBecomeSubreaper({ BATON_SUBREAPER: "1" }), true);
  assert.equal(shouldBecomeSubreaper({ BATON_SUBREAPER: "true" }), true);
  for (const value of [undefined, "", "0", "false"]) {
    assert.equal(shouldBecomeSubreaper({ BATON_SUBREAPER: value }), false, String(value));
  }
});

test("a spawned child is Node's own from spawn until its 'exit' event; one that never started is not tracked", () => {
  const child = Object.assign(new EventEmitter(), { pid: 4242 });
  trackChild(child);
  assert.equal(isTrackedChild(4242), true);
  child.emit("exit", 0, null);
  assert.equal(isTrackedChild(4242), false);
  trackChild(Object.assign(new EventEmitter(), { pid: undefined }));
  assert.equal(isTrackedChild(0), false);
});
