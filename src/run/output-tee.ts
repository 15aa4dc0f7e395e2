import { access, closeSync, constants as fsConstants, createWriteStream, fstatSync, openSync, type WriteStream } from "node:fs";
import type { Readable, Writable } from "node:stream";
import { monotonicMs } from "../clock.js";
import { refusalOf } from "../safe-files.js";
import { describeSystemError } from "../errors.js";

// --stdout-path / --stderr-path: the command's output still goes to baton's own stdout/stderr and is also appended
// to a file. Each chunk is written to both, and reading stops while either holds QUEUE_LIMIT bytes not yet written,
// so a fast writer and a slow disk cost no memory: the command simply blocks on its full pipe, as it would writing
// to a slow terminal. Not pipe(): it pauses for every 64 KiB chunk, which is more than a stream's highWaterMark
// (16 KiB), until that chunk is written (make bench row 6: 0.55 x tee, against ~0.75 x here); and with a larger
// highWaterMark it waits for good on a file stream that fails (disk full) while it is paused on it.

/** After the command exits, how long its pipes may stay quiet before baton stops reading them (see finish()). */
export const QUIET_AFTER_EXIT_MS = 100;
/** ...and how long baton reads them at most, for a grandchild that never stops writing. */
export const READ_AFTER_EXIT_MAX_MS = 2000;
/** A destination (a console reader, a file) that takes nothing for this long is given up on, with a word. */
export const STALL_LIMIT_MS = 30_000;
/** How much baton queues for one destination before it stops reading the command's pipe. */
export const QUEUE_LIMIT = 1024 * 1024;

export interface CaptureTargets {
  stdoutPath: string | undefined;
  stderrPath: string | undefined;
}

export interface OutputTee {
  /**
   * Resolves once the captured pipes reach their end, or, when something the command left behind (a background
   * grandchild) still holds them open, once they have been quiet for QUIET_AFTER_EXIT_MS with nothing left to
   * write, or READ_AFTER_EXIT_MAX_MS after the call at the latest. Then the copy stops and the files are closed:
   * baton never waits on a grandchild's pipe.
   */
  finish(): Promise<void>;
}

/** Opens the files now, so an unwritable path fails before the command starts. Same path twice: one file. */
export function openCaptureFiles(targets: CaptureTargets): Map<string, WriteStream> {
  const files = new Map<string, WriteStream>();
  for (const path of [targets.stdoutPath, targets.stderrPath]) {
    if (path === undefined || files.has(path)) continue;
    let fd: number;
    try {
      fd = openWithoutBlocking(path);
    } catch (error) {
      for (const stream of files.values()) stream.destroy();
      const why = (error as NodeJS.ErrnoException).code === "ENXIO" ? "a FIFO with no reader (ENXIO)" : describeSystemError(error);
      throw new Error(`cannot open ${path} for the command's output: ${why}`);
    }
    try {
      files.set(path, createWriteStream(path, { fd, flags: "a" }));
    } catch (error) {
      closeSync(fd);
      throw error;
    }
  }
  return files;
}

/**
 * open(path, "a") never blocks the main thread: a FIFO with no reader would block it for good, the command never
 * starting and no signal handled (even SIGTERM as PID 1). O_NONBLOCK first (a FIFO without a reader: ENXIO, a clear
 * failure), and O_NOFOLLOW (a symlink planted in a shared folder would send the output anywhere: ELOOP); then, for
 * anything but a regular file (a FIFO, /dev/null), the same file opened again through /proc/self/fd without
 * O_NONBLOCK, as the writes must block, not fail with EAGAIN (a reader is there now, so this open returns at once).
 */
function openWithoutBlocking(path: string): number {
  const { O_WRONLY, O_APPEND, O_CREAT, O_NONBLOCK, O_NOFOLLOW, O_NOCTTY } = fsConstants;
  let probe: number;
  try {
    probe = openSync(path, O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY, 0o666);
  } catch (error) {
    throw refusalOf(error);
  }
  if (fstatSync(probe).isFile()) return probe; // O_NONBLOCK means nothing for a regular file
  try {
    return openSync(`/proc/self/fd/${probe}`, O_WRONLY | O_APPEND | O_NOCTTY);
  } finally {
    closeSync(probe);
  }
}

/**
 * libuv starts its thread pool (4 threads) at its first use, and aborts the process when it cannot: a pod whose PID
 * limit the command has filled. The copy's file writes need it: start it while the step waits, before the command
 * runs.
 */
export function startThreadPool(): void {
  access(".", () => {});
}

export function teeOutput(
  sources: { stdout: Readable | null; stderr: Readable | null },
  targets: CaptureTargets,
  files: Map<string, WriteStream>,
  warn: (message: string) => void,
): OutputTee {
  const pairs: [Readable, Sink, string][] = [];
  if (sources.stdout && targets.stdoutPath) pairs.push([sources.stdout, consoleStream(1), targets.stdoutPath]);
  if (sources.stderr && targets.stderrPath) pairs.push([sources.stderr, consoleStream(2), targets.stderrPath]);

  let lastData = monotonicMs();
  let afterExit = false; // true from the first turn after the command's exit: every read since began after it
  const emptied = new Set<Readable>(); // pipes read empty since then: all the command wrote before exiting is read
  const lastRead = new Map<Readable, number>();
  let fileFailed = false; // warn once per step
  const broken = new Set<Writable>(); // failed destinations: no more writes, never waited for
  const full = (sink: Writable) => !broken.has(sink) && sink.writableLength >= QUEUE_LIMIT;
  const resume = () => {
    for (const [source, own, path] of pairs) {
      if (!source.isPaused() || full(own) || full(files.get(path)!)) continue;
      // A pipe is quiet only from here: while paused, nothing was read from it, however long ago its last data came.
      lastData = monotonicMs();
      lastRead.set(source, lastData);
      source.resume();
    }
  };
  for (const [file, stream] of files) {
    stream.on("error", (error) => {
      // A full disk must not kill the command or lose its console output: stop copying to the file, say so once.
      if (!fileFailed) warn(`stopped copying the command's output to ${file}: ${describeSystemError(error)}`);
      fileFailed = true;
      broken.add(stream);
      resume();
    });
    stream.on("drain", resume);
  }
  const owns = [...new Set(pairs.map(([, own]) => own))];
  for (const own of owns) {
    // baton's own stdout closed (EPIPE) must not end the copy to the file, nor crash baton.
    own.on("error", () => {
      broken.add(own);
      resume();
    });
    own.on("drain", resume);
  }
  const copies = pairs.map(([source, own, path]) => {
    const file = files.get(path)!; // one file may take both streams; closed in finish()
    const copy = (chunk: Buffer) => {
      lastData = monotonicMs();
      // libuv reads a pipe 64 KiB at a time: a shorter chunk means the read took all there was.
      if (afterExit && chunk.length < PIPE_READ_SIZE) emptied.add(source);
      lastRead.set(source, lastData);
      for (const sink of [own, file]) if (!broken.has(sink) && !sink.destroyed) sink.write(chunk);
      if (full(own) || full(file)) source.pause(); // resumed by 'drain', or when that destination fails
    };
    source.on("data", copy);
    return copy;
  });
  const ended = pairs.map(
    ([source]) =>
      new Promise<void>((resolve) => {
        source.once("end", resolve);
        source.once("close", resolve);
        source.once("error", () => resolve());
      }),
  );

  /** Gives up on a destination that took nothing for STALL_LIMIT_MS: says how much of the output it dropped. */
  const progress = new Map<Sink, { written: number; at: number }>();
  const giveUpOnStalled = (now: number) => {
    for (const [sink, name] of sinkNames) {
      if (broken.has(sink) || sink.destroyed || sink.writableLength === 0) {
        progress.delete(sink);
        continue;
      }
      const seen = progress.get(sink);
      if (!seen || seen.written !== sink.bytesWritten) progress.set(sink, { written: sink.bytesWritten, at: now });
      else if (now - seen.at >= STALL_LIMIT_MS) {
        broken.add(sink);
        warn(`dropped ${sink.writableLength} bytes of the command's output to ${name}: it took nothing for ${STALL_LIMIT_MS} ms`);
        resume();
      }
    }
  };
  const sinkNames = new Map<Sink, string>([
    ...[...files].map(([path, stream]) => [stream, path] as [Sink, string]),
    ...owns.map((own) => [own, own === consoles.get(1) ? "baton's stdout" : "baton's stderr"] as [Sink, string]),
  ]);
  const waiting = (sink: Writable) => !broken.has(sink) && !sink.destroyed && sink.writableLength > 0;

  return {
    async finish() {
      setImmediate(() => (afterExit = true));
      for (const [source] of pairs) source.once("end", () => emptied.add(source));
      const exitedAt = monotonicMs();
      lastData = exitedAt; // the quiet period starts at the command's exit at the earliest
      let check: NodeJS.Timeout | undefined;
      // Quiet is only believed when seen by two checks in a row: between them the event loop has polled the pipes,
      // so a pipe resumed just before the first check has had its chance to be read (found losing ~180 KB under load).
      let quietAt: number | undefined;
      // Everything the command wrote before it exited is in its pipes or queued here: read until the pipes end, or are
      // quiet with nothing queued. A process the command left behind may hold them open and write on: stop then, but
      // only once each pipe has been read empty since the exit, and READ_AFTER_EXIT_MAX_MS has passed. A slow reader
      // is waited for (the copy never drops what was written before the exit); one that takes nothing for
      // STALL_LIMIT_MS is given up on, with a word.
      const quiet = new Promise<void>((resolve) => {
        check = setInterval(() => {
          const now = monotonicMs();
          giveUpOnStalled(now);
          const pending = [...sinkNames.keys()].some(waiting);
          // A pipe that is read (not paused) and gave nothing for a while is empty too.
          for (const [source] of pairs) {
            if (afterExit && !source.isPaused() && now - (lastRead.get(source) ?? exitedAt) >= QUIET_AFTER_EXIT_MS) emptied.add(source);
          }
          const quietNow = !pending && now - lastData >= QUIET_AFTER_EXIT_MS;
          const quietBefore = quietAt === lastData;
          quietAt = quietNow ? lastData : undefined;
          if (quietNow) {
            if (quietBefore) resolve();
          } else if (emptied.size === pairs.length && now - exitedAt >= READ_AFTER_EXIT_MAX_MS) {
            warn(`stopped copying the command's output ${Math.round(now - exitedAt)} ms after it exited: a process it left behind still writes to it`);
            resolve();
          }
        }, QUIET_AFTER_EXIT_MS / 4);
      });
      await Promise.race([Promise.all(ended), quiet]);
      clearInterval(check);
      pairs.forEach(([source], i) => {
        source.off("data", copies[i]!);
        source.destroy(); // a grandchild still writing gets EPIPE, as it would if baton's own stdout had closed
      });
      // What is queued still goes out (main.ts ends with process.exit(), which would drop it), to a slow reader too,
      // unless it stalls.
      check = setInterval(() => giveUpOnStalled(monotonicMs()), QUIET_AFTER_EXIT_MS / 4);
      await Promise.all([...sinkNames.keys()].map((sink) => drained(sink, () => broken.has(sink))));
      clearInterval(check);
      // 'close', not end()'s callback: a write that fails now (disk full) must get its 'error', and its warning,
      // before baton exits. 'close' follows 'error'.
      await Promise.all(
        [...files.values()].map((stream) =>
          stream.closed || broken.has(stream)
            ? undefined
            : new Promise<void>((resolve) => {
                stream.once("close", resolve);
                if (!stream.destroyed) stream.end();
              }),
        ),
      );
    },
  };
}

/** A destination of the copy: a file's WriteStream, or baton's own stdout/stderr. */
type Sink = Writable & { readonly bytesWritten: number };

/**
 * baton's own stdout or stderr for the copy, never process.stdout/stderr: creating those makes a pipe non-blocking
 * (O_NONBLOCK), and the command, which shares the open file description (2>&1, or its inherited stderr), then loses
 * its output to EAGAIN. A pipe (the container's log) is reopened through /proc/self/fd/N: a description of baton's
 * own, non-blocking there only, written by the event loop, so a reader that stops for good blocks no thread (Node
 * joins its thread pool at exit, and a write(2) that never returns would keep baton from exiting). Anything else (a
 * terminal, a file, no /proc) is written by descriptor on the thread pool. Never closed.
 */
const consoles = new Map<number, Sink>();
function consoleStream(fd: 1 | 2): Sink {
  let stream = consoles.get(fd);
  if (!stream) consoles.set(fd, (stream = openConsole(fd)));
  return stream;
}

function openConsole(fd: 1 | 2): Sink {
  try {
    if (fstatSync(fd).isFIFO()) {
      const own = openSync(`/proc/self/fd/${fd}`, fsConstants.O_WRONLY | fsConstants.O_NONBLOCK);
      return new (lazyNet().Socket)({ fd: own, readable: false, writable: true });
    }
  } catch {
    // No /proc, no reader (ENXIO), or not reopenable: write by descriptor.
  }
  return createWriteStream("", { fd, autoClose: false });
}

/** node:net, loaded only here: child_process has loaded it already for the command's pipes. */
function lazyNet(): typeof import("node:net") {
  const getBuiltin = (process as unknown as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  return (getBuiltin ? getBuiltin("node:net") : require("node:net")) as typeof import("node:net");
}

/** What Node asks of a pipe in one read (libuv's 64 KiB buffer): a chunk shorter than this emptied the pipe. */
const PIPE_READ_SIZE = 64 * 1024;

/** Resolves once `stream` has written everything queued, failed, or `gaveUp()` (checked on each write done). */
function drained(stream: Sink, gaveUp: () => boolean): Promise<void> | undefined {
  if (stream.destroyed || stream.writableLength === 0) return undefined;
  return new Promise<void>((resolve) => {
    const poll = setInterval(() => (gaveUp() || stream.writableLength === 0) && done(), QUIET_AFTER_EXIT_MS / 4);
    const done = () => {
      clearInterval(poll);
      resolve();
    };
    stream.once("drain", done);
    stream.once("error", done);
    stream.once("close", done);
  });
}
