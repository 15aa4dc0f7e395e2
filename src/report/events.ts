import { writeSync } from "node:fs";
import { basename } from "node:path";
import { openForAppend } from "../base/safe-files.js";
import { writeStderr } from "../base/warn.js";
import { mark } from "../base/trace-marks.js";

// baton's lifecycle as JSON lines, for the demo's timeline and for operators. Off unless BATON_EVENTS (or --events)
// names a file or "stderr", so a step's log stays the user's. One write per line, with O_APPEND, so the lines of
// several batons sharing one file never interleave. The file is opened once, at the first event, as every shared path
// is (src/base/safe-files.ts: no symlink followed, a FIFO without a reader refused at once instead of blocking open(2));
// a FIFO with a reader gets non-blocking writes, and a line that does not fit in the pipe is dropped. "stderr" is
// written as baton's own lines are (src/base/warn.ts): a reader that stopped reading holds baton 2 s at most, once.

let target: string | undefined = process.env.BATON_EVENTS || undefined;
let step = process.env.BATON_NAME || undefined;
let fd: number | undefined;

export function configureEvents(options: { file?: string | undefined; postFile?: string | undefined; name?: string }): void {
  if (options.file) target = options.file;
  step ??= options.name ?? (options.postFile ? basename(options.postFile) : undefined);
}

export function emit(event: string, fields: Record<string, unknown> = {}): void {
  // The spans are made of the same moments (docs/tracing.md); a no-op unless this baton traces.
  mark(event, fields);
  if (!target) return;
  // Date.now(): the one clock every process reads alike, so events of several batons order correctly
  // (performance.timeOrigin is fixed per process at start and drifts from it by up to a millisecond).
  const t = Date.now();
  const line = `${JSON.stringify({ t, pid: process.pid, step, event, ...fields })}\n`;
  try {
    if (target === "stderr") writeStderr(line);
    else writeSync((fd ??= openForAppend(target)), line);
  } catch (error) {
    // A full pipe drops this line; anything else turns events off: an events file must not fail the step.
    if ((error as NodeJS.ErrnoException).code !== "EAGAIN") target = undefined;
  }
}
