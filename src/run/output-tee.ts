import { access, closeSync, constants as fsConstants, createWriteStream, fstatSync, openSync, type WriteStream } from "node:fs";
import type { Readable, Writable } from "node:stream";
import { monotonicMs } from "../clock.js";
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
 * failure); then, for anything but a regular file, opened again without it, as the writes must block, not fail
 * with EAGAIN (a reader is there now, so this open returns at once).
 */
function openWithoutBlocking(path: string): number {
  const { O_WRONLY, O_APPEND, O_CREAT, O_NONBLOCK } = fsConstants;
  const probe = openSync(path, O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK, 0o666);
  if (fstatSync(probe).isFile()) return probe; // O_NONBLOCK means nothing for a regular file
  try {
    return openSync(path, "a");
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
  const pairs: [Readable, Writable, string][] = [];
  if (sources.stdout && targets.stdoutPath) pairs.push([sources.stdout, process.stdout, targets.stdoutPath]);
  if (sources.stderr && targets.stderrPath) pairs.push([sources.stderr, process.stderr, targets.stderrPath]);

  let lastData = monotonicMs();
  let fileFailed = false; // warn once per step
  const broken = new Set<Writable>(); // failed destinations: no more writes, never waited for
  const full = (sink: Writable) => !broken.has(sink) && sink.writableLength >= QUEUE_LIMIT;
  const resume = () => {
    for (const [source, own, path] of pairs) if (source.isPaused() && !full(own) && !full(files.get(path)!)) source.resume();
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

  return {
    async finish() {
      const exitedAt = monotonicMs();
      lastData = exitedAt; // the quiet period starts at the command's exit at the earliest
      let check: NodeJS.Timeout | undefined;
      const quiet = new Promise<void>((resolve) => {
        check = setInterval(() => {
          const pending = [...files.values(), ...owns].some((stream) => !stream.destroyed && stream.writableLength > 0);
          const now = monotonicMs();
          if ((!pending && now - lastData >= QUIET_AFTER_EXIT_MS) || now - exitedAt >= READ_AFTER_EXIT_MAX_MS) resolve();
        }, QUIET_AFTER_EXIT_MS / 4);
      });
      await Promise.race([Promise.all(ended), quiet]);
      clearInterval(check);
      pairs.forEach(([source], i) => {
        source.off("data", copies[i]!);
        source.destroy(); // a grandchild still writing gets EPIPE, as it would if baton's own stdout had closed
      });
      await Promise.all([
        // 'close', not end()'s callback: a write that fails now (disk full) must get its 'error', and its warning,
        // before baton exits. 'close' follows 'error'.
        ...[...files.values()].map((stream) =>
          stream.closed
            ? undefined
            : new Promise<void>((resolve) => {
                stream.once("close", resolve);
                if (!stream.destroyed) stream.end();
              }),
        ),
        // baton's own stdout/stderr are asynchronous when the reader is slow, and main.ts ends with process.exit(),
        // which would drop what is still queued: let it drain first.
        ...owns.map(drained),
      ]);
    },
  };
}

function drained(stream: Writable): Promise<void> | undefined {
  if (stream.destroyed || stream.writableLength === 0) return undefined;
  return new Promise<void>((resolve) => {
    stream.once("drain", resolve);
    stream.once("error", () => resolve());
    stream.once("close", resolve);
  });
}
