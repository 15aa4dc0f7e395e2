import { loadChunk } from "../process/chunks.js";
import { marks } from "../base/trace-marks.js";
import type { TraceChunk, TraceInfo } from "./trace-info.js";

// The main bundle's side of tracing: what each mode tells about itself, the command's TRACEPARENT, and the export at
// exit, each a no-op when this baton does not trace (src/base/trace-switch.ts). The work is in the trace chunk
// (src/trace/chunk.ts, src/process/chunks.ts), loaded by the first of these that a traced baton calls.

export type { TraceChunk, TraceInfo };

let chunk: TraceChunk | undefined;
let info: TraceInfo | undefined;

/** What the mode knows, as it learns it: the first call says this baton is a traced one (a step, a sidecar, an Argo container). */
export function describeTrace(facts: Partial<TraceInfo>): void {
  if (marks === undefined) return;
  info ??= { mode: "step", engine: "plain" };
  // The same object the chunk was given: what is learned later is seen there too.
  Object.assign(info, facts);
}

/** The chunk loaded and the context read, once the mode is sure to run (after describeTrace). Nothing when tracing is off. */
export async function startTracing(warn: (message: string) => void): Promise<void> {
  if (marks === undefined || info === undefined || chunk !== undefined) return;
  try {
    chunk = await loadChunk<TraceChunk>("trace", () => import("./chunk.js"));
    chunk.begin(info, process.env);
  } catch (error) {
    // Once: a later call (finishTracing) does not try again.
    info = undefined;
    warn(`tracing is off: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * Just before a command starts: its TRACEPARENT, in place of the one baton was given (TRACESTATE stays as it was, or
 * goes with an invalid TRACEPARENT, which W3C says not to pass on).
 */
export function traceCommand(): void {
  if (chunk === undefined) return;
  const traceparent = chunk.commandTraceparent();
  if (traceparent === undefined) return;
  process.env.TRACEPARENT = traceparent;
}

/** Whether finishTracing has anything to do: a traced mode ran (or tried to). */
export function tracing(): boolean {
  return info !== undefined;
}

/** At exit, once baton's work is done: the spans sent, by `deadline` (performance.now()) at the latest. */
export async function finishTracing(exitCode: number, warn: (message: string) => void, deadline: number): Promise<void> {
  if (info === undefined) return;
  await startTracing(warn);
  await chunk?.finish(exitCode, warn, deadline);
}
