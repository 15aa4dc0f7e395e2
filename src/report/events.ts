import { appendFileSync, writeSync } from "node:fs";
import { basename } from "node:path";

// baton's lifecycle as JSON lines, for the demo's timeline and for operators. Off unless BATON_EVENTS (or --events)
// names a file or "stderr", so a step's log stays the user's. One write per line, with O_APPEND, so the lines of
// several batons sharing one file never interleave.

let target: string | undefined = process.env.BATON_EVENTS || undefined;
let step = process.env.BATON_NAME || undefined;

export function configureEvents(options: { file?: string | undefined; postFile?: string | undefined; name?: string }): void {
  if (options.file) target = options.file;
  step ??= options.name ?? (options.postFile ? basename(options.postFile) : undefined);
}

export function emit(event: string, fields: Record<string, unknown> = {}): void {
  if (!target) return;
  // Date.now(): the one clock every process reads alike, so events of several batons order correctly
  // (performance.timeOrigin is fixed per process at start and drifts from it by up to a millisecond).
  const t = Date.now();
  const line = `${JSON.stringify({ t, pid: process.pid, step, event, ...fields })}\n`;
  try {
    if (target === "stderr") writeSync(2, line);
    else appendFileSync(target, line);
  } catch {
    target = undefined; // an events file that cannot be written must not fail the step
  }
}
