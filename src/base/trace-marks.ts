import { tracingWanted } from "./trace-switch.js";

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

/**
 * The memory a traced baton gives its marks is bounded, whatever happens to it: a storm of signals (each one an event)
 * keeps one mark, the last (the root span says only that one), and past MAX_MARKS (an Argo container set's thousands
 * of retries) only the marks of the end are kept, which every span needs; the spans of what was dropped are missing.
 */
export const MAX_MARKS = 4096;
const OF_THE_END = new Set(["hand-on", "posted", "post", "outcome", "done", "exited", "probe-ok", "stopping"]);

export function mark(event: string, fields: Record<string, unknown> = {}): void {
  if (marks === undefined) return;
  const t = performance.timeOrigin + performance.now();
  if (event === "signal") {
    signalled = { t, event, fields };
    return;
  }
  if (marks.length >= MAX_MARKS && !(OF_THE_END.has(event) && marks.length < 2 * MAX_MARKS)) return;
  marks.push({ t, event, fields });
}

let signalled: Mark | undefined;

/**
 * The last signal baton received, if any (a mark of its own: see MAX_MARKS). A function, not an exported `let`: the
 * trace chunk gets this module's exports as they were when it loaded (src/process/host-modules.ts).
 */
export function lastSignal(): Mark | undefined {
  return signalled;
}
