import { access, closeSync, constants as fsConstants, createWriteStream, fstatSync, openSync, write, type WriteStream } from "node:fs";
import type { Readable, Writable } from "node:stream";
import { monotonicMs } from "../base/clock.js";
import { describeSystemError } from "../base/errors.js";
import { CopyFinish, QUIET_AFTER_EXIT_MS, STALL_LIMIT_MS } from "./copy-finish.js";
import { refusalOf } from "../base/safe-files.js";
import { lazyBuiltin } from "../base/builtin.js";

// --stdout-path / --stderr-path: the command's output still goes to baton's own stdout/stderr and is also appended
// to a file. Each chunk is written to both, and reading stops while either holds QUEUE_LIMIT bytes not yet written,
// so a fast writer and a slow disk cost no memory: the command simply blocks on its full pipe, as it would writing
// to a slow terminal. Not pipe(): it pauses for every 64 KiB chunk, which is more than a stream's highWaterMark
// (16 KiB), until that chunk is written (make bench row 6: 0.55 x tee, against ~0.75 x here); and with a larger
// highWaterMark it waits for good on a file stream that fails (disk full) while it is paused on it. When the copy
// may stop is copy-finish.ts's to say; this file moves the bytes and keeps the time.

/** Where each stream is copied: a file, or several (Argo's emissary copies stdout to both `stdout` and `combined`). */
export interface CaptureTargets {
  stdoutPath: string | readonly string[] | undefined;
  stderrPath: string | readonly string[] | undefined;
}

function pathsOf(target: string | readonly string[] | undefined): readonly string[] {
  return target === undefined ? [] : typeof target === "string" ? [target] : target;
}

export interface OutputTee {
  /**
   * Resolves once the captured pipes reach their end, or, when something the command left behind (a background
   * grandchild) still holds them open, once they have been quiet with nothing left to write, or soon after they
   * were read empty (CopyFinish.check). Then the copy stops and the files are closed: baton never waits on a
   * grandchild's pipe.
   */
  finish(): Promise<void>;
}

/** Opens the files now, so an unwritable path fails before the command starts. Same path twice: one file. */
export function openCaptureFiles(targets: CaptureTargets): Map<string, WriteStream> {
  const files = new Map<string, WriteStream>();
  for (const path of [...pathsOf(targets.stdoutPath), ...pathsOf(targets.stderrPath)]) {
    if (files.has(path)) continue;
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

/** One copy of the command's output, as teeOutput sets it up. Declared whole before the functions that use it. */
interface Tee {
  /** Each captured stream, baton's own stream it goes to, and the files it is copied to. */
  readonly pairs: readonly [Readable, Sink, readonly string[]][];
  readonly files: Map<string, WriteStream>;
  /** Every destination, and its name for a warning. */
  readonly sinkNames: Map<Sink, string>;
  readonly policy: CopyFinish<Readable, Sink>;
  readonly warn: (message: string) => void;
  /** A file's write failed: warn once per step. */
  fileFailed: boolean;
}

export function teeOutput(
  sources: { stdout: Readable | null; stderr: Readable | null },
  targets: CaptureTargets,
  files: Map<string, WriteStream>,
  warn: (message: string) => void,
): OutputTee {
  keepStderrFlags();
  const pairs: [Readable, Sink, readonly string[]][] = [];
  const stdoutPaths = pathsOf(targets.stdoutPath);
  const stderrPaths = pathsOf(targets.stderrPath);
  if (sources.stdout && stdoutPaths.length > 0) pairs.push([sources.stdout, consoleStream(1), stdoutPaths]);
  if (sources.stderr && stderrPaths.length > 0) pairs.push([sources.stderr, consoleStream(2), stderrPaths]);

  const owns = [...new Set(pairs.map(([, own]) => own))];
  const sinkNames = new Map<Sink, string>([
    ...[...files].map(([path, stream]) => [stream, path] as [Sink, string]),
    ...owns.map((own) => [own, own === consoles.get(1) ? "baton's stdout" : "baton's stderr"] as [Sink, string]),
  ]);
  const policy = new CopyFinish(
    pairs.map(([source]) => source),
    [...sinkNames.keys()],
    monotonicMs(),
  );
  const tee: Tee = { pairs, files, sinkNames, policy, warn, fileFailed: false };
  followSinks(tee, owns);
  const copies = pairs.map(([source, own, paths]) => startCopy(tee, source, [own, ...paths.map((path) => files.get(path)!)]));
  const ended = pairs.map(
    ([source]) =>
      new Promise<void>((resolve) => {
        source.once("end", resolve);
        source.once("close", resolve);
        source.once("error", () => resolve());
      }),
  );
  return { finish: () => finishTee(tee, copies, ended) };
}

/** Resumes each paused stream whose destinations all have room again. */
function resume(tee: Tee): void {
  for (const [source, own, paths] of tee.pairs) {
    if (!source.isPaused() || tee.policy.full(own) || paths.some((path) => tee.policy.full(tee.files.get(path)!))) continue;
    tee.policy.resumed(source, monotonicMs());
    source.resume(); // Node emits what it held on the next tick, before this setImmediate
    setImmediate(() => tee.policy.settled(source));
  }
}

/** A destination that drains or fails lets the copy go on. */
function followSinks(tee: Tee, owns: readonly Sink[]): void {
  for (const [file, stream] of tee.files) {
    stream.on("error", (error) => {
      // A full disk must not kill the command or lose its console output: stop copying to the file, say so once.
      if (!tee.fileFailed) tee.warn(`stopped copying the command's output to ${file}: ${describeSystemError(error)}`);
      tee.fileFailed = true;
      tee.policy.giveUp(stream);
      resume(tee);
    });
    stream.on("drain", () => resume(tee));
  }
  for (const own of owns) {
    // baton's own stdout closed (EPIPE) must not end the copy to the file, nor crash baton.
    own.on("error", () => {
      tee.policy.giveUp(own);
      resume(tee);
    });
    own.on("drain", () => resume(tee));
  }
}

/** Copies each chunk of `source` to `sinks` (one file may take both streams; closed in finishTee): its 'data' listener. */
function startCopy(tee: Tee, source: Readable, sinks: readonly Sink[]): (chunk: Buffer) => void {
  const copy = (chunk: Buffer) => {
    tee.policy.read(source, chunk.length, monotonicMs());
    for (const sink of sinks) if (!tee.policy.isBroken(sink) && !sink.destroyed) sink.write(chunk);
    if (sinks.some((sink) => tee.policy.full(sink))) source.pause(); // resumed by 'drain', or when that destination fails
  };
  source.on("data", copy);
  return copy;
}

/** Gives up on a destination that took nothing for STALL_LIMIT_MS: says how much of the output it dropped. */
function giveUpOnStalled(tee: Tee): void {
  const stalled = tee.policy.stalled(monotonicMs());
  for (const sink of stalled) {
    tee.warn(`dropped ${sink.writableLength} bytes of the command's output to ${tee.sinkNames.get(sink)}: it took nothing for ${STALL_LIMIT_MS} ms`);
  }
  if (stalled.length > 0) resume(tee);
}

/** OutputTee.finish: once the command has exited. */
async function finishTee(tee: Tee, copies: readonly ((chunk: Buffer) => void)[], ended: readonly Promise<void>[]): Promise<void> {
  const { pairs, policy } = tee;
  setImmediate(() => policy.readingAfterExit());
  for (const [source] of pairs) source.once("end", () => policy.ended(source));
  policy.exited(monotonicMs());
  let check: NodeJS.Timeout | undefined;
  const quiet = new Promise<void>((resolve) => {
    check = setInterval(() => {
      giveUpOnStalled(tee);
      const verdict = policy.check(monotonicMs());
      if (verdict.state === "left-behind") {
        tee.warn(`stopped copying the command's output ${Math.round(verdict.afterExitMs)} ms after it exited: a process it left behind still writes to it`);
      }
      if (verdict.state !== "copying") resolve();
    }, QUIET_AFTER_EXIT_MS / 4);
  });
  await Promise.race([Promise.all(ended), quiet]);
  clearInterval(check);
  pairs.forEach(([source], i) => {
    source.off("data", copies[i]!);
    source.destroy(); // a grandchild still writing gets EPIPE, as it would if baton's own stdout had closed
  });
  // What is queued still goes out (baton's exit, src/process/exit.ts, would drop it), to a slow reader too,
  // unless it stalls.
  check = setInterval(() => giveUpOnStalled(tee), QUIET_AFTER_EXIT_MS / 4);
  await Promise.all([...tee.sinkNames.keys()].map((sink) => drained(sink, () => policy.isBroken(sink))));
  clearInterval(check);
  // 'close', not end()'s callback: a write that fails now (disk full) must get its 'error', and its warning,
  // before baton exits. 'close' follows 'error'.
  await Promise.all(
    [...tee.files.values()].map((stream) =>
      stream.closed || policy.isBroken(stream)
        ? undefined
        : new Promise<void>((resolve) => {
            stream.once("close", resolve);
            if (!stream.destroyed) stream.end();
          }),
    ),
  );
}

/** A destination of the copy: a file's WriteStream, or baton's own stdout/stderr. */
type Sink = Writable & { readonly bytesWritten: number };

/**
 * baton's own stdout or stderr for the copy, never process.stdout/stderr: creating those makes a pipe non-blocking
 * (O_NONBLOCK), and the command, which shares the open file description (2>&1, or its inherited stderr), then loses
 * its output to EAGAIN. A pipe (the container's log) is reopened through /proc/self/fd/N: a description of baton's
 * own, non-blocking there only, written by the event loop, so a reader that stops for good blocks no thread (Node
 * joins its thread pool at exit, and a write(2) that never returns would keep baton from exiting). Anything else (a
 * socket, a terminal, a file, no /proc) is written by descriptor on the thread pool, a socket by DescriptorSink.
 * Never closed.
 */
const consoles = new Map<number, Sink>();
function consoleStream(fd: 1 | 2): Sink {
  let stream = consoles.get(fd);
  if (!stream) consoles.set(fd, (stream = openConsole(fd)));
  return stream;
}

function openConsole(fd: 1 | 2): Sink {
  let socket = false;
  try {
    const stats = fstatSync(fd);
    socket = stats.isSocket();
    if (stats.isFIFO()) {
      const own = openSync(`/proc/self/fd/${fd}`, fsConstants.O_WRONLY | fsConstants.O_NONBLOCK);
      return new (lazyBuiltin<typeof import("node:net")>("node:net").Socket)({ fd: own, readable: false, writable: true });
    }
  } catch {
    // No /proc, no reader (ENXIO), or not reopenable: write by descriptor.
  }
  // Only a socket turns non-blocking under baton (DescriptorSink); fs.WriteStream's writev is ~30 % faster elsewhere
  // (make bench row 6, to /dev/null).
  return socket ? descriptorSink(fd) : createWriteStream("", { fd, autoClose: false });
}

/**
 * Node creates process.stderr the first time anything reads it, and net.Socket's _destroy does: the command's pipes
 * are destroyed at their end. For a pipe or a socket at fd 2, that stream sets O_NONBLOCK on fd 2's open file
 * description, which the command and its children share when their stderr is not captured: a child still writing
 * to it after the command exits then gets EAGAIN and loses the rest. baton never writes through process.stderr
 * (warn.ts writes fd 2 itself), so it is defined here first, as an fs.WriteStream on fd 2, which changes no flag.
 */
function keepStderrFlags(): void {
  if (stderrKept) return;
  stderrKept = true;
  let stream: WriteStream | undefined;
  // A write through it that fails (fd 2 closed, its reader gone) must not become baton's uncaught 'error'.
  const open = () => createWriteStream("", { fd: 2, autoClose: false }).on("error", () => {});
  try {
    Object.defineProperty(process, "stderr", { configurable: true, enumerable: true, get: () => (stream ??= open()) });
  } catch {
    // a Node whose process.stderr cannot be redefined: as before
  }
}
let stderrKept = false;

/** How long a write that found the descriptor full (EAGAIN) waits before it tries again. */
const RETRY_FULL_MS = 5;

/**
 * Writes to a descriptor on the thread pool, and waits out EAGAIN as a blocking write would. The descriptor can turn
 * non-blocking under baton: Node's net.Socket reads `process.stderr` when it is destroyed (the command's pipes are),
 * which creates it and sets O_NONBLOCK on fd 2's description, a socket when the container runtime or a test gives
 * one. fs.WriteStream gives up after five EAGAINs in a row ("writev failed"), and the copy lost the rest of the
 * output to the console. A reader that takes nothing for good is the stall check's to give up on (copy-finish.ts).
 */
function descriptorSink(fd: number): Sink {
  DescriptorSink ??= descriptorSinkClass(lazyBuiltin<typeof import("node:stream")>("node:stream").Writable);
  return new DescriptorSink(fd);
}

/** Made on first use: node:stream is loaded only by a step that copies its output (not at every step's start). */
let DescriptorSink: ReturnType<typeof descriptorSinkClass> | undefined;

const descriptorSinkClass = (Writable: typeof import("node:stream").Writable) => class DescriptorSink extends Writable {
  bytesWritten = 0;

  constructor(private readonly fd: number) {
    super();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    const writeFrom = (offset: number): void => {
      write(this.fd, chunk, offset, chunk.length - offset, null, (error, written) => {
        if (error && error.code !== "EAGAIN") return done(error);
        const next = offset + (error ? 0 : written);
        this.bytesWritten += next - offset;
        if (next >= chunk.length) return done();
        if (this.destroyed) return done();
        if (error || written === 0) setTimeout(() => writeFrom(next), RETRY_FULL_MS);
        else writeFrom(next);
      });
    };
    writeFrom(0);
  }

  /** What queued up while a write was under way goes out in one write(2), as fs.WriteStream's writev does. */
  override _writev(chunks: Array<{ chunk: Buffer }>, done: (error?: Error | null) => void): void {
    this._write(chunks.length === 1 ? chunks[0]!.chunk : Buffer.concat(chunks.map(({ chunk }) => chunk)), "binary", done); // the encoding is unused: chunks are Buffers
  }
};

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
