// The live view: one line per thing that happened, as it happens, drawn from baton's own events and the runner's
// container starts and ends.
import type { BatonEvent } from "./events.js";
import type { PodActivity } from "./pod.js";
import { paint, type Palette } from "./style.js";

export interface LiveOptions {
  t0: number;
  /** Print the containers' own output lines as well. */
  logs: boolean;
  color: boolean;
  write: (line: string) => void;
  width: number;
}

export function liveView(options: LiveOptions): (activity: PodActivity) => void {
  const c = paint(options.color);
  return (activity) => {
    const t = activity.kind === "event" ? activity.event.t : activity.t;
    const stamp = c.dim(`+${formatMs(t - options.t0).padStart(8)}`);
    const name = activity.container.padEnd(options.width);
    switch (activity.kind) {
      case "created":
        options.write(`${stamp}  ${c.bold(name)}  ${c.dim("creating container (namespaces, mounts)")}`);
        break;
      case "started":
        options.write(`${stamp}  ${c.bold(name)}  container started`);
        break;
      case "event":
        options.write(`${stamp}  ${c.bold(name)}  ${describeEvent(activity.event, c)}`);
        break;
      case "log":
        if (options.logs) options.write(`${stamp}  ${c.dim(name)}  ${c.dim("| " + activity.line)}`);
        break;
      case "terminated": {
        const s = activity.status;
        const code = s.exitCode === 0 ? c.green(`exit code 0`) : c.red(`exit code ${s.exitCode}`);
        const message = s.message.trim() ? c.dim(`  message: ${oneLine(s.message, 100)}`) : "";
        options.write(`${stamp}  ${c.bold(name)}  container terminated, ${code} (${s.reason})${message}`);
        break;
      }
    }
  };
}

/** A short human reading of one baton event. */
export function describeEvent(e: BatonEvent, c: Palette): string {
  const file = typeof e.file === "string" ? e.file : "";
  switch (e.event) {
    case "start":
      return c.dim("baton started");
    case "waiting":
      return `${c.yellow("waiting")} for ${file}`;
    case "trimmed":
      return c.dim("still waiting: gave its start-up's freed memory back to the kernel");
    case "ready":
      return `${c.cyan("ready")}: ${file}`;
    case "skipped":
      return `${c.red("skipped")}: found ${file.endsWith(".err") ? file : file + ".err"}, the command does not run`;
    case "command":
      return `${c.blue("running")} ${oneLine(Array.isArray(e.argv) ? e.argv.join(" ") : "", 70)}${e.child !== undefined ? c.dim(` (pid ${e.child})`) : ""}`;
    case "signal":
      return `${c.magenta("signal")} ${e.signal} forwarded to ${e.to}`;
    case "exited":
      return `command exited, ${e.exitCode === 0 ? c.green("code 0") : c.red(`code ${e.exitCode}`)}${e.signal ? ` (${e.signal})` : ""}`;
    case "post":
      return `${c.cyan("post file")} ${file}`;
    case "done":
      return `baton done, exit ${e.exitCode}`;
    case "probe-ok":
      return `${c.cyan("ready probe ok")}: ${e.probe}`;
    case "stopping":
      return e.reason
        ? `${c.magenta("stopping")} the command (${e.reason}): ${e.signal} to its group`
        : `${c.magenta("stopping")}: ${file} appeared`;
    case "stop-url":
      return `${c.magenta("stop url")} ${e.url} -> ${e.status ?? "no answer"}`;
    default: {
      const { t: _t, pid: _pid, step: _step, event, ...rest } = e;
      return `${event} ${c.dim(JSON.stringify(rest))}`;
    }
  }
}

export function formatMs(ms: number): string {
  return `${Math.round(ms)}ms`;
}

function oneLine(s: string, max: number): string {
  const line = s.replace(/\s+/g, " ").trim();
  return line.length > max ? line.slice(0, max - 1) + "…" : line;
}
