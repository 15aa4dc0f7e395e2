import { lastSignal, type Mark } from "../base/trace-marks.js";
import type { TraceInfo } from "./trace-info.js";
import type { TraceContext } from "./context.js";
import { randomId } from "./context.js";

// The marks of one baton turned into its spans (docs/tracing.md "Spans"): one root span for the step, sidecar or
// Argo container, and a child per phase, each from one mark to the next that ends it.

export type AttributeValue = string | number | boolean;

export interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string | undefined;
  traceState?: string | undefined;
  name: string;
  /** Wall-clock ms with a fraction. */
  start: number;
  end: number;
  attributes: [string, AttributeValue][];
  /** An error, with its message. */
  error?: string | undefined;
}

export interface SpanIds {
  root: string;
  /** The ids given to the commands' TRACEPARENT, in order (step mode). */
  commands: string[];
}

export const STATUS_ERROR = 2;

/** The spans of one baton, from its marks: `origin` is when it started, `end` when it is done. */
export function buildSpans(marks: readonly Mark[], info: TraceInfo, context: TraceContext, ids: SpanIds, exitCode: number, origin: number, end: number): Span[] {
  const name = info.mode === "emissary" ? "runMainContainer" : info.mode;
  const root: Span = {
    traceId: context.traceId,
    spanId: ids.root,
    parentSpanId: context.parentSpanId,
    traceState: context.traceState,
    name,
    start: origin,
    end,
    attributes: [["baton.engine", info.engine]],
  };
  const spans = [root];
  const child = (childName: string, start: number, stop: number, attributes: [string, AttributeValue][] = [], spanId = randomId(8)): Span => {
    const span: Span = { traceId: context.traceId, spanId, parentSpanId: ids.root, traceState: context.traceState, name: childName, start, end: Math.max(start, stop), attributes };
    spans.push(span);
    return span;
  };
  const find = (from: number, names: readonly string[]): number => {
    for (let i = from; i < marks.length; i++) if (names.includes(marks[i]!.event)) return i;
    return -1;
  };
  const at = (index: number, otherwise: number): number => (index < 0 ? otherwise : marks[index]!.t);

  if (info.mode === "sidecar") sidecarPhases(marks, child, find, at, end);
  else stepPhases(marks, info, child, find, at, end, origin, ids);

  if (info.name !== undefined) root.attributes.push(["baton.step.name", info.name]);
  const index = stepIndex(info);
  if (index !== undefined) root.attributes.push(["baton.step.index", index]);
  if (info.postFile !== undefined) root.attributes.push(["baton.post_file", info.postFile]);
  root.attributes.push(["baton.exit_code", exitCode]);
  const signal = lastSignal();
  if (signal !== undefined && signal.fields.signal !== undefined) root.attributes.push(["baton.signal", String(signal.fields.signal)]);
  const outcome = marks[lastIndex(marks, "outcome")];
  if (typeof outcome?.fields.reason === "string") root.attributes.push(["baton.reason", outcome.fields.reason]);
  if (exitCode !== 0) {
    const said = marks[lastIndex(marks, "warn")];
    root.error = typeof said?.fields.message === "string" ? `baton: ${said.fields.message}` : `exit code ${exitCode}`;
  }
  return spans;
}

type Child = (name: string, start: number, stop: number, attributes?: [string, AttributeValue][], spanId?: string) => Span;
type Find = (from: number, names: readonly string[]) => number;
type At = (index: number, otherwise: number) => number;

function stepPhases(marks: readonly Mark[], info: TraceInfo, child: Child, find: Find, at: At, end: number, origin: number, ids: SpanIds): void {
  const first = find(0, ["credentials", "waiting", "decide", "command", "hand-on"]);
  if (info.mode === "step") child("prepare", origin, at(first, end));
  let commands = 0;
  marks.forEach((mark, i) => {
    if (mark.event === "waiting") {
      const done = find(i + 1, ["ready", "skipped", "waiting", "hand-on", "outcome"]);
      const doneMark = done < 0 ? undefined : marks[done];
      const result = doneMark?.event === "ready" ? "ready" : doneMark?.event === "skipped" ? (doneMark.fields.died ? "died" : "failed") : "stopped";
      const span = child("wait", mark.t, at(done, end), [["baton.wait.file", String(mark.fields.file)], ["baton.wait.result", result]]);
      if (result === "failed") span.error = `${String(mark.fields.file)}.err: the previous step failed`;
      if (result === "died") span.error = "the previous step's baton died before it handed on";
    } else if (mark.event === "credentials") {
      const done = find(i + 1, ["credentials-checked", "credentials-written", "hand-on", "outcome"]);
      const span = child("credentials", mark.t, at(done, end), [["baton.credentials", done >= 0 && marks[done]!.event === "credentials-written" ? "written" : "checked"]]);
      if (done >= 0 && marks[done]!.event !== "credentials-checked" && marks[done]!.event !== "credentials-written") span.error = "the credentials could not be set up";
    } else if (mark.event === "decide") {
      child("decide", mark.t, at(find(i + 1, ["command", "hand-on", "outcome"]), end));
    } else if (mark.event === "command") {
      const exited = find(i + 1, ["exited"]);
      const spanId = info.mode === "step" ? ids.commands[commands] : undefined;
      commands++;
      const attributes = commandAttributes(mark, exited < 0 ? undefined : marks[exited]);
      if (mark.fields.attempt !== undefined) attributes.unshift(["baton.attempt", Number(mark.fields.attempt)]);
      const span = child("command", mark.t, at(exited, end), attributes, spanId);
      span.error = commandError(exited < 0 ? undefined : marks[exited]);
    }
  });
  if (info.mode !== "step") return;
  const handOn = find(0, ["hand-on"]);
  if (handOn < 0) return;
  const exited = lastIndex(marks, "exited");
  const outcome = find(handOn, ["outcome"]);
  // The post file in place: "posted", marked as it is written, before the step steps aside and the event "post".
  const posted = find(handOn, ["posted", "post"]);
  const attributes: [string, AttributeValue][] = [];
  if (outcome >= 0 && typeof marks[outcome]!.fields.reason === "string") attributes.push(["baton.reason", marks[outcome]!.fields.reason as string]);
  child("hand-on", at(exited, marks[handOn]!.t), at(posted, at(outcome, end)), attributes);
}

function sidecarPhases(marks: readonly Mark[], child: Child, find: Find, at: At, end: number): void {
  const command = find(0, ["command"]);
  const ready = find(0, ["probe-ok"]);
  const stopping = find(0, ["stopping"]);
  const exited = find(0, ["exited"]);
  const started = at(command, at(find(0, ["start"]), end));
  if (ready >= 0) child("starting", started, marks[ready]!.t);
  const running = child("running", at(ready, started), at(stopping, at(exited, end)));
  if (command >= 0) {
    running.attributes.push(...commandAttributes(marks[command]!, exited < 0 ? undefined : marks[exited]));
    running.error = stopping < 0 ? commandError(exited < 0 ? undefined : marks[exited]) : undefined;
  }
  if (stopping >= 0) {
    const stopped = find(stopping, ["exited", "done"]);
    child("stopping", marks[stopping]!.t, at(stopped, end));
  }
}

function commandAttributes(start: Mark, exited: Mark | undefined): [string, AttributeValue][] {
  const attributes: [string, AttributeValue][] = [];
  const argv = start.fields.argv;
  if (Array.isArray(argv) && typeof argv[0] === "string") attributes.push(["process.executable.name", argv[0].slice(argv[0].lastIndexOf("/") + 1)]);
  if (typeof start.fields.child === "number") attributes.push(["process.pid", start.fields.child]);
  if (exited !== undefined) {
    if (typeof exited.fields.exitCode === "number") attributes.push(["process.exit.code", exited.fields.exitCode]);
    if (exited.fields.signal !== null && exited.fields.signal !== undefined) attributes.push(["baton.signal", String(exited.fields.signal)]);
  }
  return attributes;
}

function commandError(exited: Mark | undefined): string | undefined {
  if (exited === undefined) return undefined;
  if (exited.fields.signal !== null && exited.fields.signal !== undefined) return `killed by ${String(exited.fields.signal)}`;
  const code = exited.fields.exitCode;
  return typeof code === "number" && code !== 0 ? `exit code ${code}` : undefined;
}

/** Tekton's step index: N of TEKTON_ROOT/run/N/out. */
function stepIndex(info: TraceInfo): number | undefined {
  if (info.engine !== "tekton" || info.postFile === undefined) return undefined;
  const match = /\/run\/(\d+)\/out$/.exec(info.postFile);
  return match === null ? undefined : Number(match[1]);
}

/** The index of the last mark named `event`, -1 when none (Array.prototype.findLastIndex is past ES2022). */
function lastIndex(marks: readonly Mark[], event: string): number {
  for (let i = marks.length - 1; i >= 0; i--) if (marks[i]!.event === event) return i;
  return -1;
}
