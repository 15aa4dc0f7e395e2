import { constants, fstatSync, openSync, writeSync } from "node:fs";
import { monotonicMs } from "./clock.js";
import { mark } from "./trace-marks.js";

// baton's own lines ("baton: ...") go straight to descriptor 2 with write(2), never through process.stderr: creating
// that stream makes a pipe non-blocking (Node opens pipes with O_NONBLOCK), and the command, which shares the open
// file description, then loses output to EAGAIN; and a closed reader (a log shipper that died) would be an unhandled
// EPIPE 'error': a stack trace and no post file. A line that cannot be written is dropped: the outcome must survive.
//
// Nor may a line hold baton up for long: a log reader that stopped reading leaves stderr's pipe full, and a blocking
// write(2) would stop baton's only thread there, before --timeout's SIGTERM or the post file (an audit's find). So
// when stderr is a pipe, baton writes through a description of its own, opened again through /proc/self/fd/2 and
// made non-blocking (the command's description stays as it was), and waits at most WARN_WAIT_MS for room; once a
// line was dropped so, the next ones are tried once until one gets through.

export const WARN_WAIT_MS = 2000;

let own: number | undefined;
let stuck = false;

export function warn(message: string): void {
  // The last line said is a failed span's status message (docs/tracing.md); a no-op unless this baton traces.
  mark("warn", { message: oneLine(message) });
  writeStderr(`baton: ${oneLine(message)}\n`);
}

/** A message of baton's own text on several lines (Tekton's breakpoint instructions): each line kept one line. */
export function warnLines(lines: readonly string[]): void {
  writeStderr(`baton: ${lines.map(oneLine).join("\n")}\n`);
}

/**
 * A line of baton's is one line, whatever a value quoted in it holds: a newline in an option or a file's name wrote a
 * line of the caller's choosing ("baton: ..." too), an escape sequence reached the terminal. Control characters are
 * written as JSON writes them (\n, \u001b; DEL as \u007f); only a newline before an indented stack frame
 * (`    at ...`: BATON_DEBUG's stack, src/process/internal-error.ts) stays one.
 */
function oneLine(message: string): string {
  return message.replace(/\n(?! {2,}at )|[\x00-\x08\x0b-\x1f\x7f]/g, (c) => (c === "\x7f" ? "\\u007f" : JSON.stringify(c).slice(1, -1)));
}

/** One line to stderr as warn() writes it: `BATON_EVENTS=stderr`'s lines too, which must not hold baton up either. */
export function writeStderr(text: string): void {
  const line = Buffer.from(text);
  const fd = stderr();
  const deadline = monotonicMs() + (stuck ? 0 : WARN_WAIT_MS);
  let written = 0;
  while (written < line.length) {
    try {
      written += writeSync(fd, line, written);
    } catch (error) {
      // EPIPE, EBADF (closed): nowhere to say it. EAGAIN: the pipe is full; wait a little for its reader.
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN" || monotonicMs() >= deadline) {
        stuck ||= (error as NodeJS.ErrnoException).code === "EAGAIN";
        return;
      }
      Atomics.wait((pause ??= new Int32Array(new SharedArrayBuffer(4))), 0, 0, 5); // 5 ms, nothing else to do
    }
  }
  stuck = false;
}

let pause: Int32Array | undefined;

/** Descriptor 2, or baton's own non-blocking description of it when it is a pipe (opened once, close-on-exec). */
function stderr(): number {
  if (own === undefined) {
    own = 2;
    try {
      if (fstatSync(2).isFIFO()) own = openSync("/proc/self/fd/2", constants.O_WRONLY | constants.O_NONBLOCK);
    } catch {
      // no /proc, no reader (ENXIO), no descriptor left: descriptor 2 as it is
    }
  }
  return own;
}
