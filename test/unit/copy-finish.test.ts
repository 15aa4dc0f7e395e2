// When the copy of a command's output may stop (src/run/copy-finish.ts), played on a fake clock with fake pipes and
// destinations: the cases that once lost output or hung baton. The real copy is tested on the bundle
// (test/integration/capture.test.ts, output-kept.test.ts).
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  CopyFinish,
  PIPE_READ_SIZE,
  QUEUE_LIMIT,
  QUIET_AFTER_EXIT_MS,
  READ_AFTER_EXIT_MAX_MS,
  STALL_LIMIT_MS,
  type CopyVerdict,
} from "../../src/run/copy-finish.js";

/** The tee checks this often (output-tee.ts). */
const CHECK_MS = QUIET_AFTER_EXIT_MS / 4;

class FakePipe {
  paused = false;
  isPaused() {
    return this.paused;
  }
}

class FakeSink {
  writableLength = 0;
  bytesWritten = 0;
  destroyed = false;
  /** The reader takes `bytes` of what is queued. */
  take(bytes: number) {
    const taken = Math.min(bytes, this.writableLength);
    this.writableLength -= taken;
    this.bytesWritten += taken;
  }
}

function setUp(pipeCount = 1) {
  const pipes = Array.from({ length: pipeCount }, () => new FakePipe());
  const sink = new FakeSink();
  const policy = new CopyFinish(pipes, [sink], 0);
  return { pipes, pipe: pipes[0]!, sink, policy };
}

/** The checks from `from` to `to` (inclusive), as the tee's interval makes them; stops at the first that is not "copying". */
function checks(policy: CopyFinish<FakePipe, FakeSink>, from: number, to: number, between?: (now: number) => void) {
  for (let now = from; now <= to; now += CHECK_MS) {
    between?.(now);
    const verdict = policy.check(now);
    if (verdict.state !== "copying") return { at: now, verdict };
  }
  return { at: undefined, verdict: { state: "copying" } as CopyVerdict };
}

test("quiet after the exit ends the copy, but only when two checks in a row see it", () => {
  const { pipe, policy } = setUp();
  policy.read(pipe, 10, 0);
  policy.exited(1000);
  policy.readingAfterExit();
  assert.deepEqual(policy.check(1000 + QUIET_AFTER_EXIT_MS - 1), { state: "copying" }, "not quiet yet");
  assert.deepEqual(policy.check(1000 + QUIET_AFTER_EXIT_MS), { state: "copying" }, "quiet seen once: not believed yet");
  assert.deepEqual(policy.check(1000 + QUIET_AFTER_EXIT_MS + CHECK_MS), { state: "quiet" }, "seen again: finished");
});

test("data between two quiet-looking checks starts the quiet over", () => {
  const { pipe, policy } = setUp();
  policy.exited(0);
  policy.readingAfterExit();
  assert.equal(policy.check(QUIET_AFTER_EXIT_MS).state, "copying"); // quiet seen once
  policy.read(pipe, PIPE_READ_SIZE, QUIET_AFTER_EXIT_MS + 1);
  assert.equal(policy.check(QUIET_AFTER_EXIT_MS + CHECK_MS).state, "copying");
  const { at, verdict } = checks(policy, QUIET_AFTER_EXIT_MS + 2 * CHECK_MS, 10_000);
  assert.equal(verdict.state, "quiet");
  assert.equal(at, 250, "seen quiet at 225 (124 ms after the data), believed at 250");
});

test("resume after drain: a pipe resumed after a long pause is not taken for quiet, even by a late check (7913257)", () => {
  const { pipe, sink, policy } = setUp();
  // The command wrote fast; its destination filled, so the pipe was paused at t=0 with more to read in it.
  sink.writableLength = QUEUE_LIMIT;
  policy.read(pipe, PIPE_READ_SIZE, 0);
  assert.ok(policy.full(sink));
  pipe.paused = true;
  policy.exited(500);
  policy.readingAfterExit();
  assert.equal(checks(policy, 500, 5000).verdict.state, "copying", "a full destination holds the copy open");
  // Drained at t=5000: the pipe is resumed, not read yet. Its last data is 5 s old: that must not count as quiet.
  sink.writableLength = 0;
  sink.bytesWritten = QUEUE_LIMIT;
  pipe.paused = false;
  policy.resumed(pipe, 5000);
  assert.equal(policy.check(5000 + CHECK_MS).state, "copying", "quiet counts from the resume");
  // Under load the loop reads the pipe only after the next check, which finds 100 ms of quiet: seen once, not believed.
  assert.equal(policy.check(5000 + QUIET_AFTER_EXIT_MS).state, "copying", "quiet seen by one check only");
  // The loop reads it now: a full read, more is waiting. The silent check above must not have counted the pipe as
  // read empty, or this check would stop the copy (a process left behind) with the rest of it still in the pipe.
  policy.read(pipe, PIPE_READ_SIZE, 5000 + QUIET_AFTER_EXIT_MS + 1);
  assert.equal(policy.check(5000 + QUIET_AFTER_EXIT_MS + CHECK_MS).state, "copying", "the rest of the pipe is read");
});

test("a slow reader is waited for while the pipe still holds what the command wrote, for a minute and more", () => {
  const { pipe, sink, policy } = setUp();
  // Written before the exit: more than the queue holds, so the pipe is paused, and resumed as the reader takes.
  sink.writableLength = QUEUE_LIMIT;
  policy.read(pipe, PIPE_READ_SIZE, 0);
  pipe.paused = true;
  policy.exited(10);
  policy.readingAfterExit();
  for (let now = CHECK_MS; now <= 60_000; now += CHECK_MS) {
    if (now % 1000 === 0) {
      sink.take(PIPE_READ_SIZE); // 64 KiB a second
      pipe.paused = false;
      policy.resumed(pipe, now);
      policy.read(pipe, PIPE_READ_SIZE, now); // a full read: more is waiting in the pipe
      sink.writableLength += PIPE_READ_SIZE;
      pipe.paused = policy.full(sink);
    }
    assert.deepEqual(policy.stalled(now), [], `not given up at ${now} ms`);
    assert.equal(policy.check(now).state, "copying", `at ${now} ms`);
  }
  assert.equal(policy.isBroken(sink), false);
});

test("a reader that never reads again is given up after STALL_LIMIT_MS, and the copy goes on without it", () => {
  const { pipe, sink, policy } = setUp();
  sink.writableLength = QUEUE_LIMIT;
  policy.read(pipe, PIPE_READ_SIZE, 0);
  pipe.paused = true;
  policy.exited(0);
  policy.readingAfterExit();
  let gaveUpAt: number | undefined;
  for (let now = 0; now <= 2 * STALL_LIMIT_MS && gaveUpAt === undefined; now += CHECK_MS) {
    if (policy.stalled(now).includes(sink)) gaveUpAt = now;
    else assert.equal(policy.check(now).state, "copying", `at ${now} ms`);
  }
  assert.equal(gaveUpAt, STALL_LIMIT_MS);
  assert.ok(policy.isBroken(sink));
  assert.equal(policy.full(sink), false, "a given-up destination no longer holds the pipe");
  assert.deepEqual(policy.stalled(STALL_LIMIT_MS + CHECK_MS), [], "given up once");
  // The tee resumes the pipe; what is left in it is read, and with nothing queued the copy ends on quiet.
  pipe.paused = false;
  policy.resumed(pipe, STALL_LIMIT_MS);
  policy.read(pipe, PIPE_READ_SIZE, STALL_LIMIT_MS + 1);
  const { at, verdict } = checks(policy, STALL_LIMIT_MS + CHECK_MS, STALL_LIMIT_MS + 1000);
  assert.equal(verdict.state, "quiet");
  assert.equal(at, STALL_LIMIT_MS + 150, "quiet seen 124 ms after the last read, believed at the next check");
});

test("a destination that takes a little at a time is not given up, however long it takes", () => {
  const { sink, policy } = setUp();
  sink.writableLength = 1_000_000;
  for (let now = 0; now <= 10 * STALL_LIMIT_MS; now += CHECK_MS) {
    if (now % (STALL_LIMIT_MS - CHECK_MS) === 0) sink.take(1);
    assert.deepEqual(policy.stalled(now), []);
  }
});

test("a process left behind that writes on: the copy stops READ_AFTER_EXIT_MAX_MS after the exit", () => {
  const { pipes, policy } = setUp(2);
  policy.exited(1000);
  policy.readingAfterExit();
  const { at, verdict } = checks(policy, 1000 + CHECK_MS, 20_000, (now) => {
    for (const pipe of pipes) policy.read(pipe, 200, now - 1); // short reads: each pipe read empty
  });
  assert.equal(verdict.state, "left-behind");
  assert.equal(at, 1000 + READ_AFTER_EXIT_MAX_MS);
  assert.deepEqual(verdict, { state: "left-behind", afterExitMs: READ_AFTER_EXIT_MAX_MS });
});

test("a silent process left behind (it holds the pipe, writes nothing) is not taken for one that writes on", () => {
  const { pipe, sink, policy } = setUp();
  sink.writableLength = QUEUE_LIMIT;
  policy.read(pipe, PIPE_READ_SIZE, 0);
  pipe.paused = true;
  policy.exited(0);
  policy.readingAfterExit();
  // A slow reader drains at 3 s; the rest of the command's output is read, the last read short (the pipe is empty).
  sink.writableLength = 0;
  pipe.paused = false;
  policy.resumed(pipe, 3000);
  policy.read(pipe, PIPE_READ_SIZE, 3001);
  policy.read(pipe, 1000, 3002);
  const { verdict } = checks(policy, 3000 + CHECK_MS, 5000);
  assert.deepEqual(verdict, { state: "quiet" }, "nothing came after the pipe was read empty: no one writes on");
});

test("not before every pipe has been read empty since the exit: what the command wrote before it exited is kept", () => {
  const { pipes, policy } = setUp(2);
  policy.exited(0);
  policy.readingAfterExit();
  // stdout is read empty at once; stderr gives a full read every time (more is waiting in it) for 5 s.
  const busy = checks(policy, CHECK_MS, 5000, (now) => {
    policy.read(pipes[0]!, 10, now - 1);
    policy.read(pipes[1]!, PIPE_READ_SIZE, now - 1);
  });
  assert.equal(busy.verdict.state, "copying", "5 s after the exit and still reading what came before it");
  const after = checks(policy, 5000 + CHECK_MS, 10_000, (now) => {
    policy.read(pipes[0]!, 10, now - 1);
    policy.read(pipes[1]!, 10, now - 1);
  });
  assert.deepEqual(after, { at: 5000 + CHECK_MS, verdict: { state: "left-behind", afterExitMs: 5000 + CHECK_MS } });
});

test("a pipe read before the exit's next turn is not counted as read empty", () => {
  const { pipe, policy } = setUp();
  policy.exited(0);
  // The exit's own turn: a short chunk read now may hold data from before the exit with more behind it.
  policy.read(pipe, 10, 1);
  pipe.paused = true; // and its destination filled up
  assert.equal(checks(policy, CHECK_MS, 10_000, (now) => policy.read(pipe, 0, now - 1)).verdict.state, "copying");
});

test("a full destination pauses the pipes until it drains, unless it was given up", () => {
  const { sink, policy } = setUp();
  sink.writableLength = QUEUE_LIMIT - 1;
  assert.equal(policy.full(sink), false);
  sink.writableLength = QUEUE_LIMIT;
  assert.equal(policy.full(sink), true);
  policy.giveUp(sink);
  assert.equal(policy.full(sink), false);
});

test("chunks Node held while the pipe was paused, given after the exit, are not taken for a process left behind", () => {
  // output-kept.test.ts finding 10 at a load of 12-28: the file's reader slept, the pipe was paused with chunks held
  // by Node, the command exited. On resume a short held chunk marked the pipe read empty and the next one looked like
  // a writer left behind: 2 s after the exit baton stopped reading and lost the rest.
  const { pipe, sink, policy } = setUp();
  policy.exited(0);
  policy.readingAfterExit();
  pipe.paused = true;
  sink.writableLength = QUEUE_LIMIT;
  let now = 0;
  for (; now < READ_AFTER_EXIT_MAX_MS + 1000; now += CHECK_MS) {
    // The reader takes a little at a time; each drain resumes the pipe, which gives held chunks of any size.
    sink.take(40_000);
    pipe.paused = false;
    policy.resumed(pipe, now);
    policy.read(pipe, 1000, now);
    policy.read(pipe, PIPE_READ_SIZE, now);
    policy.settled(pipe);
    sink.writableLength += 40_000;
    pipe.paused = true;
    assert.deepEqual(policy.check(now), { state: "copying" }, `at ${now} ms`);
  }
  // Once a read of its own finds the pipe empty and the queue is written out, quiet ends the copy as usual.
  pipe.paused = false;
  policy.resumed(pipe, now);
  policy.settled(pipe);
  policy.read(pipe, 10, now);
  sink.take(QUEUE_LIMIT * 2);
  assert.equal(checks(policy, now, now + 10 * QUIET_AFTER_EXIT_MS).verdict.state, "quiet");
});
