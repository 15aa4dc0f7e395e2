// When the copy of a command's output (output-tee.ts) may stop, decided apart from streams and timers: the tee tells
// this what happens (data read, a pipe resumed or ended, the command's exit) with the time it happened, and asks at
// each check whether the copy is finished. Every time is an argument, so test/unit/copy-finish.test.ts plays the
// cases that lost data or hung (a slow reader, a resume after a long pause, a reader that never reads again) on a
// fake clock.

/** After the command exits, how long its pipes may stay quiet before baton stops reading them. */
export const QUIET_AFTER_EXIT_MS = 100;
/** ...and how long baton reads them at most, for a grandchild that never stops writing. */
export const READ_AFTER_EXIT_MAX_MS = 2000;
/** A destination (a console reader, a file) that takes nothing for this long is given up on, with a word. */
export const STALL_LIMIT_MS = 30_000;
/** How much baton queues for one destination before it stops reading the command's pipe. */
export const QUEUE_LIMIT = 1024 * 1024;
/** What Node asks of a pipe in one read (libuv's 64 KiB buffer): a chunk shorter than this emptied the pipe. */
export const PIPE_READ_SIZE = 64 * 1024;

/** What the policy looks at of a pipe from the command. */
export interface PipeView {
  isPaused(): boolean;
}

/** ...and of a destination: a capture file, baton's own stdout or stderr. */
export interface SinkView {
  readonly writableLength: number;
  readonly bytesWritten: number;
  readonly destroyed: boolean;
}

/** A check's answer: read on; stop, all is copied; or stop, a process the command left behind still writes. */
export type CopyVerdict = { state: "copying" } | { state: "quiet" } | { state: "left-behind"; afterExitMs: number };

export class CopyFinish<Pipe extends PipeView, Sink extends SinkView> {
  /** When data last came, or a pipe was last resumed: the quiet period counts from here. */
  private lastData: number;
  private readonly lastRead = new Map<Pipe, number>();
  /** Pipes read empty since the exit: all the command wrote before exiting is read from them. */
  private readonly emptied = new Set<Pipe>();
  /**
   * Pipes resumed in this turn of the event loop: what they give now is what Node read and held while they were
   * paused, maybe long before the exit, so a short chunk of it says nothing about the pipe being empty.
   */
  private readonly replaying = new Set<Pipe>();
  /** The last read of each pipe that the previous check found silent. */
  private readonly silentAt = new Map<Pipe, number>();
  /** Data came from a pipe already read empty since the exit: a process the command left behind writes to it. */
  private writesOn = false;
  /** Destinations that failed or stalled: no more writes, never waited for. */
  private readonly broken = new Set<Sink>();
  private readonly progress = new Map<Sink, { written: number; at: number }>();
  /** True from the first turn after the command's exit: every read since began after it. */
  private afterExit = false;
  private exitedAt: number | undefined;
  /** The lastData that the previous check found quiet. */
  private quietAt: number | undefined;

  constructor(
    private readonly pipes: readonly Pipe[],
    private readonly sinks: readonly Sink[],
    now: number,
  ) {
    this.lastData = now;
  }

  read(pipe: Pipe, bytes: number, now: number): void {
    this.lastData = now;
    if (this.emptied.has(pipe)) this.writesOn = true;
    if (this.afterExit && bytes < PIPE_READ_SIZE && !this.replaying.has(pipe)) this.emptied.add(pipe);
    this.lastRead.set(pipe, now);
  }

  /**
   * A pipe is quiet only from its resume: while paused, nothing was read from it, however long ago its data came.
   * Until settled(pipe) (the tee calls it one turn later) its chunks are the ones Node held while it was paused.
   */
  resumed(pipe: Pipe, now: number): void {
    this.lastData = now;
    this.lastRead.set(pipe, now);
    this.replaying.add(pipe);
  }

  settled(pipe: Pipe): void {
    this.replaying.delete(pipe);
  }

  ended(pipe: Pipe): void {
    this.emptied.add(pipe);
  }

  /** The command exited: the quiet period starts here at the earliest. */
  exited(now: number): void {
    this.exitedAt = now;
    this.lastData = now;
  }

  /** Called one turn after exited(): a read from now on began after the exit. */
  readingAfterExit(): void {
    this.afterExit = true;
  }

  giveUp(sink: Sink): void {
    this.broken.add(sink);
  }

  isBroken(sink: Sink): boolean {
    return this.broken.has(sink);
  }

  /** The pipes feeding `sink` wait (paused) while it holds QUEUE_LIMIT bytes not yet written. */
  full(sink: Sink): boolean {
    return !this.broken.has(sink) && sink.writableLength >= QUEUE_LIMIT;
  }

  /** The destinations that took nothing for STALL_LIMIT_MS with bytes queued: given up on from now. */
  stalled(now: number): Sink[] {
    const stalled: Sink[] = [];
    for (const sink of this.sinks) {
      if (this.broken.has(sink) || sink.destroyed || sink.writableLength === 0) {
        this.progress.delete(sink);
        continue;
      }
      const seen = this.progress.get(sink);
      if (!seen || seen.written !== sink.bytesWritten) this.progress.set(sink, { written: sink.bytesWritten, at: now });
      else if (now - seen.at >= STALL_LIMIT_MS) {
        this.broken.add(sink);
        stalled.push(sink);
      }
    }
    return stalled;
  }

  /**
   * After the exit: "quiet" (nothing read for QUIET_AFTER_EXIT_MS, nothing queued) once two checks in a row see it,
   * for between them the event loop has polled the pipes, so a pipe resumed just before the first check has had its
   * chance to be read. "left-behind" once each pipe has been read empty since the exit, READ_AFTER_EXIT_MAX_MS has
   * passed, and data came after a pipe was read empty: a process the command left behind writes on. Either way the
   * tee stops reading and still writes out what is queued (to a slow reader too, until it stalls).
   */
  check(now: number): CopyVerdict {
    const exitedAt = this.exitedAt ?? now;
    const pending = this.sinks.some((sink) => !this.broken.has(sink) && !sink.destroyed && sink.writableLength > 0);
    // A pipe that is read (not paused) and gave nothing for a while is empty too, once two checks in a row see it,
    // as for quiet: a loop too busy to read a pipe just resumed is no proof that the pipe is empty.
    for (const pipe of this.pipes) {
      const lastRead = this.lastRead.get(pipe) ?? exitedAt;
      const silent = this.afterExit && !pipe.isPaused() && now - lastRead >= QUIET_AFTER_EXIT_MS;
      if (silent && this.silentAt.get(pipe) === lastRead) this.emptied.add(pipe);
      if (silent) this.silentAt.set(pipe, lastRead);
      else this.silentAt.delete(pipe);
    }
    const quietNow = !pending && now - this.lastData >= QUIET_AFTER_EXIT_MS;
    const quietBefore = this.quietAt === this.lastData;
    this.quietAt = quietNow ? this.lastData : undefined;
    if (quietNow) return quietBefore ? { state: "quiet" } : { state: "copying" };
    if (this.writesOn && this.emptied.size === this.pipes.length && now - exitedAt >= READ_AFTER_EXIT_MAX_MS) {
      return { state: "left-behind", afterExitMs: now - exitedAt };
    }
    return { state: "copying" };
  }
}
