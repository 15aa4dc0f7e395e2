import { tracingWanted } from "./switch.js";

// The moments a trace is made of, kept in memory while baton runs and turned into spans as it exits
// (src/trace/spans.ts). The same moments as the lifecycle events (src/report/events.ts, which records each event here
// too) and a few that only spans need (a `decide`, baton's own lines). When tracing is off, `marks` is undefined and
// mark() is one test; when on, a mark is a push of its name, its fields and a time.

export interface Mark {
  /** Wall-clock milliseconds, with the fraction performance.now() gives. */
  t: number;
  event: string;
  fields: Record<string, unknown>;
}

/** The marks so far; undefined when this baton does not trace. */
export const marks: Mark[] | undefined = tracingWanted(process.env) ? [] : undefined;

export function mark(event: string, fields: Record<string, unknown> = {}): void {
  if (marks === undefined) return;
  marks.push({ t: performance.timeOrigin + performance.now(), event, fields });
}
