// The timeline of a finished pod: one bar per container, cut into what baton's events say it was doing (starting,
// waiting for the previous step, running its command, finishing), drawn in the terminal and as an SVG.
import type { ContainerStatus, PodResult } from "./pod.js";
import { paint } from "./style.js";

export type SegmentKind = "creating" | "starting" | "waiting" | "running" | "ending";

export interface Segment {
  kind: SegmentKind;
  /** ms since the pod started */
  from: number;
  to: number;
}

export interface Row {
  name: string;
  init: boolean;
  /** The label beside the bar: the name, with "(init)" or "(sidecar)" for a native sidecar. */
  label: string;
  segments: Segment[];
  /** ms since the pod started; undefined when the container never ran */
  end?: number;
  exitCode?: number;
  skipped: boolean;
  /** Moments worth a tick: a sidecar's ready probe succeeding, its stop file appearing. */
  marks: { kind: "probe-ok" | "stopping"; at: number }[];
}

export function timelineRows(result: PodResult): Row[] {
  return [...result.initContainers, ...result.containers].map((s) => rowOf(s, result.startedAt));
}

function rowOf(s: ContainerStatus, t0: number): Row {
  const label = s.sidecar ? `${s.name} (sidecar)` : s.init ? `${s.name} (init)` : s.name;
  const row: Row = { name: s.name, init: s.init, label, segments: [], skipped: false, marks: [] };
  if (s.startedAt === undefined || s.finishedAt === undefined) return row;
  const rel = (t: number) => Math.max(0, t - t0);
  const created = rel(s.createdAt ?? s.startedAt);
  const start = Math.max(created, rel(s.startedAt));
  const end = rel(s.finishedAt);
  row.end = end;
  row.exitCode = s.exitCode;
  const first = (name: string) => s.events.find((e) => e.event === name);
  const last = (...names: string[]) => [...s.events].reverse().find((e) => names.includes(e.event));
  if (start > created) row.segments.push({ kind: "creating", from: created, to: start });
  if (s.events.length === 0) {
    // Not a baton container: all the runner knows is that it ran from start to end.
    row.segments.push({ kind: "running", from: start, to: end });
    return row;
  }
  const command = first("command");
  const exited = last("exited");
  const stopping = first("stopping");
  // Waiting counts only before the command runs (a wrapped sidecar may watch its stop file while its command runs).
  const waiting = s.events.find((e) => e.event === "waiting" && (!command || e.t <= command.t));
  const ready = last("ready", "skipped");
  const cuts: { kind: SegmentKind; at: number }[] = [{ kind: "starting", at: start }];
  if (waiting) cuts.push({ kind: "waiting", at: rel(waiting.t) });
  else if (!command && stopping) cuts.push({ kind: "waiting", at: rel(s.events[0]!.t) }); // a sidecar with no command waits for its stop file
  if (command) cuts.push({ kind: "running", at: rel(command.t) });
  else if (ready && last("skipped")) cuts.push({ kind: "ending", at: rel(ready.t) });
  if (exited) cuts.push({ kind: "ending", at: rel(exited.t) });
  else if (!command && stopping) cuts.push({ kind: "ending", at: rel(stopping.t) });
  cuts.sort((a, b) => a.at - b.at);
  for (const name of ["probe-ok", "stopping"] as const) {
    const e = first(name);
    if (e) row.marks.push({ kind: name, at: Math.min(rel(e.t), end) });
  }
  row.skipped = s.events.some((e) => e.event === "skipped");
  for (let i = 0; i < cuts.length; i++) {
    const from = Math.min(cuts[i]!.at, end);
    const to = Math.min(i + 1 < cuts.length ? cuts[i + 1]!.at : end, end);
    if (to > from || cuts[i]!.kind === "running") row.segments.push({ kind: cuts[i]!.kind, from, to: Math.max(to, from) });
  }
  return row;
}

function outcome(row: Row): string {
  if (row.end === undefined) return "not started";
  if (row.skipped) return `skipped, exit ${row.exitCode}`;
  return `exit ${row.exitCode}`;
}

const GLYPH: Record<SegmentKind, string> = { creating: "·", starting: "╌", waiting: "░", running: "█", ending: "▪" };

/** The timeline as terminal lines (ANSI colours when `color`). */
export function drawTerminal(result: PodResult, options: { color: boolean; width?: number }): string[] {
  const c = paint(options.color);
  const colorOf: Record<SegmentKind, (s: string) => string> = { creating: c.dim, starting: c.grey, waiting: c.yellow, running: c.blue, ending: c.grey };
  const rows = timelineRows(result);
  const total = Math.max(1, result.finishedAt - result.startedAt);
  const width = options.width ?? 56;
  const nameWidth = Math.max(9, ...rows.map((r) => r.label.length));
  const col = (ms: number) => Math.min(width - 1, Math.floor((ms / total) * width));
  const lines: string[] = [];
  for (const row of rows) {
    const cells: string[] = Array.from({ length: width }, () => " ");
    // Drawn least important first, so a short run still shows as one cell.
    const priority: SegmentKind[] = ["creating", "starting", "ending", "waiting", "running"];
    const ordered = [...row.segments].sort((a, b) => priority.indexOf(a.kind) - priority.indexOf(b.kind));
    for (const seg of ordered) {
      for (let x = col(seg.from); x <= Math.max(col(seg.from), col(seg.to) - (seg.to < total ? 1 : 0)); x++) cells[x] = colorOf[seg.kind](GLYPH[seg.kind]);
    }
    const label = row.label.padEnd(nameWidth);
    const verdict = row.end === undefined ? c.dim(outcome(row)) : row.exitCode === 0 ? c.green(outcome(row)) : c.red(outcome(row));
    const detail = describeRow(row);
    lines.push(`${c.bold(label)} │${cells.join("")}│ ${verdict}  ${c.dim(detail)}`);
  }
  const axis = `${"0ms".padEnd(width - `${Math.round(total)}ms`.length)}${Math.round(total)}ms`;
  lines.push(`${" ".repeat(nameWidth)}  ${c.dim(axis)}`);
  lines.push(
    `${" ".repeat(nameWidth)}  ${colorOf.creating(GLYPH.creating)} creating  ${colorOf.starting(GLYPH.starting)} starting  ${colorOf.waiting(GLYPH.waiting)} waiting  ${colorOf.running(GLYPH.running)} running  ${colorOf.ending(GLYPH.ending)} handing on / exiting`,
  );
  return lines;
}

function describeRow(row: Row): string {
  const sum = (kind: SegmentKind) => row.segments.filter((s) => s.kind === kind).reduce((n, s) => n + s.to - s.from, 0);
  if (row.end === undefined) return "";
  const parts: string[] = [];
  const start = row.segments[0]?.from ?? 0;
  parts.push(`${Math.round(start)}–${Math.round(row.end)}ms`);
  if (sum("waiting") > 0) parts.push(`waited ${Math.round(sum("waiting"))}ms`);
  if (row.segments.some((s) => s.kind === "running")) parts.push(`ran ${Math.round(sum("running"))}ms`);
  return parts.join(", ");
}

const LEGEND: Record<SegmentKind, string> = {
  creating: "creating the container",
  starting: "starting baton",
  waiting: "waiting for a file",
  running: "running the command",
  ending: "handing on / exiting",
};

const SVG_COLORS: Record<SegmentKind, string> = { creating: "#e9ecef", starting: "#c8ccd2", waiting: "#f2c14e", running: "#3b82c4", ending: "#8d99a6" };

/** The timeline as a standalone SVG document. */
export function drawSvg(result: PodResult): string {
  const rows = timelineRows(result);
  const total = Math.max(1, result.finishedAt - result.startedAt);
  const label = 190;
  const bars = 600;
  const right = 250;
  const rowH = 30;
  const top = 56;
  const height = top + rows.length * rowH + 90;
  const width = label + bars + right;
  const x = (ms: number) => label + (ms / total) * bars;
  const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="ui-monospace, SFMono-Regular, Menlo, monospace" font-size="13">`);
  out.push(`<rect width="100%" height="100%" fill="#ffffff"/>`);
  const phaseColor = result.phase === "Succeeded" ? "#2e7d32" : "#c62828";
  out.push(`<text x="16" y="28" font-size="15" font-weight="bold">${esc(`${result.kind} ${result.name}`)}: <tspan fill="${phaseColor}">${result.phase}</tspan> in ${Math.round(total)} ms</text>`);
  const step = niceStep(total);
  for (let t = 0; t <= total; t += step) {
    out.push(`<line x1="${x(t).toFixed(1)}" y1="${top - 8}" x2="${x(t).toFixed(1)}" y2="${top + rows.length * rowH}" stroke="#eceff1"/>`);
    out.push(`<text x="${x(t).toFixed(1)}" y="${top + rows.length * rowH + 16}" text-anchor="middle" fill="#607d8b" font-size="11">${t}ms</text>`);
  }
  rows.forEach((row, i) => {
    const y = top + i * rowH;
    out.push(`<text x="16" y="${y + 19}"${row.init ? ' fill="#546e7a"' : ""}>${esc(row.label)}</text>`);
    for (const seg of row.segments) {
      const w = Math.max(1.5, x(seg.to) - x(seg.from));
      out.push(`<rect x="${x(seg.from).toFixed(1)}" y="${y + 6}" width="${w.toFixed(1)}" height="${rowH - 12}" rx="2" fill="${SVG_COLORS[seg.kind]}"><title>${seg.kind} ${Math.round(seg.from)}–${Math.round(seg.to)} ms</title></rect>`);
    }
    for (const mark of row.marks) {
      const color = mark.kind === "probe-ok" ? "#00897b" : "#8e24aa";
      out.push(`<path d="M${x(mark.at).toFixed(1)} ${y + 2} l-4 -6 h8 z" fill="${color}"><title>${mark.kind === "probe-ok" ? "ready probe succeeded" : "stopping (stop file or timeout)"} at ${Math.round(mark.at)} ms</title></path>`);
    }
    const verdictColor = row.end === undefined ? "#90a4ae" : row.exitCode === 0 ? "#2e7d32" : "#c62828";
    if (row.end !== undefined) out.push(`<line x1="${x(row.end).toFixed(1)}" y1="${y + 3}" x2="${x(row.end).toFixed(1)}" y2="${y + rowH - 3}" stroke="${verdictColor}" stroke-width="2"/>`);
    out.push(`<text x="${label + bars + 12}" y="${y + 19}" fill="${verdictColor}">${esc(outcome(row))}</text>`);
    const detail = describeRow(row);
    if (detail) out.push(`<text x="${label + bars + 12 + 8 * (outcome(row).length + 1)}" y="${y + 19}" fill="#78909c" font-size="11">${esc(detail.split(", ")[0]!)}</text>`);
  });
  // The legend, wrapped onto a second line when it does not fit.
  const legend: [string, string, "box" | "tick"][] = [
    ...(["creating", "starting", "waiting", "running", "ending"] as SegmentKind[]).map((k) => [SVG_COLORS[k], LEGEND[k], "box"] as [string, string, "box"]),
    ["#00897b", "ready probe ok", "tick"],
    ["#8e24aa", "stopping", "tick"],
  ];
  let lx = 16;
  let ly = top + rows.length * rowH + 44;
  for (const [color, text, shape] of legend) {
    const needed = 28 + text.length * 7;
    if (lx + needed > width - 16) {
      lx = 16;
      ly += 20;
    }
    if (shape === "box") out.push(`<rect x="${lx}" y="${ly - 10}" width="12" height="12" rx="2" fill="${color}"/>`);
    else out.push(`<path d="M${lx + 6} ${ly + 1} l-5 -8 h10 z" fill="${color}"/>`);
    out.push(`<text x="${lx + 18}" y="${ly}" font-size="11" fill="#455a64">${esc(text)}</text>`);
    lx += needed;
  }
  out.push(`</svg>`);
  return out.join("\n") + "\n";
}

function niceStep(total: number): number {
  const raw = total / 8;
  const pow = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * pow >= raw) return m * pow;
  return 10 * pow;
}
