// One container of an Argo pod, played on this machine for the conformance suite: a wrapper (Argo's argoexec or
// baton) started as PID 1 of a PID and mount namespace of its own, where a folder of the run is bind-mounted at each
// fixed path Argo's emissary uses (/var/run/argo, /tmp, /dev/termination-log), so that both programs see the same
// paths and nothing leaks from one run to the next. What the run left is read back as fields, the way the controller,
// the wait container, the next container or the user would read them.
import { spawn } from "node:child_process";
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, lutimesSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { after } from "node:test";
import { fileAppears, readOr, startBaton, type Baton, type Exit } from "../integration/helpers.js";
import { probe } from "./peers.js";
import { readTgz } from "./tar.js";

/** The words the controller puts before a container's own command (workflowpod.go). */
export const EMISSARY = ["emissary", "--loglevel", "info", "--log-format", "text", "--gloglevel", "0", "--"];

/** The fixed paths, each bound to a folder of the run: the pod's shared volume, /tmp. */
const MOUNTS: [string, string][] = [
  ["argo", "/run/argo"],
  ["tmp", "/tmp"],
];

/**
 * A /dev of the run's own, as a container has: a tmpfs with the devices a program may open bound from this machine's,
 * the usual links, and termination-log bound from the run's file, as the kubelet does. Nothing is made in this
 * machine's /dev, so that a wrapper run outside these namespaces never finds a termination log to write.
 */
const PRIVATE_DEV = [
  'mount -t tmpfs -o mode=0755 tmpfs "$0/dev"',
  'for n in null zero full random urandom tty; do touch "$0/dev/$n" && mount --bind /dev/$n "$0/dev/$n"; done',
  'ln -s /proc/self/fd "$0/dev/fd" && ln -s /proc/self/fd/0 "$0/dev/stdin" && ln -s /proc/self/fd/1 "$0/dev/stdout" && ln -s /proc/self/fd/2 "$0/dev/stderr"',
  'touch "$0/dev/termination-log" && mount --bind "$0/termination-log" "$0/dev/termination-log"',
  'mount --move "$0/dev" /dev',
].join(" && ");

const RUN_LIMIT_MS = 60_000;
const RUNS = resolve(import.meta.dirname, "../../build/conformance/argo-runs");

/**
 * Where this machine's /tmp stays reachable inside a run, whose /tmp is the run's own: the clone (its probe, bundle,
 * pinned Node and runs) may itself live under /tmp, as a CI clone may. Bound before the run's /tmp hides it.
 */
const HOST_TMP = "/run/baton-conformance-tmp";

/** A path of this machine as a run sees it: one under /tmp is reached through HOST_TMP. */
export function inside(path: string): string {
  return path === "/tmp" || path.startsWith("/tmp/") ? HOST_TMP + path.slice("/tmp".length) : path;
}

/** The mount points on this machine, made once: empty folders /run/argo (/var/run is /run) and HOST_TMP. */
export function prepareHost(): void {
  mkdirSync("/run/argo", { recursive: true });
  mkdirSync(HOST_TMP, { recursive: true });
  mkdirSync(RUNS, { recursive: true });
}

/** A file a scenario puts in place before the wrapper starts (paths as the container sees them). */
export interface Planted {
  path: string;
  content?: string;
  /** A folder instead of a file. */
  dir?: boolean;
  /** A symbolic link to this instead of a file. */
  link?: string;
  mode?: number;
}

export interface RunSpec {
  /** The wrapper's words (argoexec's path, or node and the bundle, or the standalone build). */
  wrapper: string[];
  /** Its arguments: `emissary ... -- CMD ARGS` or `kill SIG PID`. */
  args: string[];
  env: Record<string, string>;
  /** /var/run/argo/template; undefined: none. */
  template?: unknown;
  planted?: Planted[];
  /**
   * Whether every field of what the command saw is compared (its descriptors, session, group, signal state, umask,
   * folder), or only its arguments and environment: what does not depend on the scenario is compared in a few.
   */
  fullView?: boolean;
  /** What a scenario does while the wrapper runs (signals, markers, files of other containers). */
  during?: (run: Run) => Promise<void>;
}

export interface Run {
  dir: string;
  baton: Baton;
  /** The path on this machine of a path the container sees under /var/run/argo or /tmp. */
  host(path: string): string;
  /** Every line the probe wrote to $PROBE_OUT so far. */
  probeLines(): Record<string, unknown>[];
  /** The wrapper's pid on this machine. */
  pid(): Promise<number>;
  exited: Promise<Exit>;
}

/** A file's mtime as every run plants it: the .tgz entries carry it. */
const PLANTED_TIME = new Date("2024-01-02T03:04:05Z");

/** Runs the wrapper once; resolves to the fields of what it left. */
export async function runContainer(spec: RunSpec): Promise<{ fields: Record<string, string>; run: Run; exit: Exit }> {
  const dir = mkdtempSync(join(RUNS, "run-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, "argo"));
  mkdirSync(join(dir, "tmp"));
  chmodSync(join(dir, "tmp"), 0o1777);
  writeFileSync(join(dir, "termination-log"), "");
  const host = (path: string) => {
    for (const [name, at] of MOUNTS) {
      const seen = at.replace(/^\/run\//, "/var/run/");
      for (const prefix of [at, seen]) if (path === prefix || path.startsWith(`${prefix}/`)) return join(dir, name, path.slice(prefix.length));
    }
    throw new Error(`${path} is not under a bound path`);
  };
  if (spec.template !== undefined) {
    writeFileSync(join(dir, "argo/template"), typeof spec.template === "string" ? spec.template : JSON.stringify(spec.template), { mode: 0o444 });
  }
  for (const p of spec.planted ?? []) {
    const at = host(p.path);
    mkdirSync(p.dir ? at : dirname(at), { recursive: true });
    if (p.link !== undefined) {
      symlinkSync(p.link, at);
      continue;
    }
    if (!p.dir) writeFileSync(at, p.content ?? "");
    chmodSync(at, p.mode ?? (p.dir ? 0o755 : 0o644));
  }
  // Times last, deepest first: planting into a folder changes its mtime.
  for (const p of (spec.planted ?? []).slice().reverse()) lutimesSync(host(p.path), PLANTED_TIME, PLANTED_TIME);
  const probeOut = join(dir, "probe.out");
  mkdirSync(join(dir, "dev"));
  // The wrapper starts through the probe's `exec`, with every signal at its default, as a container's PID 1 does.
  const script = `set -e; ${PRIVATE_DEV}; mount --bind /tmp ${HOST_TMP}; ${MOUNTS.map(([name, at]) => `mount --bind "$0/${name}" ${at}`).join("; ")}; cd /; exec "${inside(probe())}" exec "$@"`;
  const baton = startBaton(spec.args, {
    pid1: true,
    baton: ["sh", "-c", script, dir, ...spec.wrapper.map(inside)],
    env: { ...spec.env, PROBE_OUT: inside(probeOut) },
    cwd: "/",
  });
  const run: Run = {
    dir,
    baton,
    host,
    probeLines: () => readOr(probeOut, "").split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>),
    pid: () => baton.hostPid(),
    exited: baton.exited,
  };
  const during = spec.during?.(run).catch((error: unknown) => {
    baton.kill();
    throw error;
  });
  // A wrapper that waits for what never comes would hold the suite: it is stopped, and the run fails as timed out.
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    baton.kill();
  }, RUN_LIMIT_MS);
  const exit = await baton.exited;
  clearTimeout(timer);
  await during;
  if (timedOut) {
    const seen = run.probeLines().map((line) => JSON.stringify("argv" in line ? "report" : line)).join(" ");
    throw new Error(`${spec.wrapper.join(" ")} ${spec.args.join(" ")}: still running after ${RUN_LIMIT_MS} ms; the probe wrote ${seen || "nothing"}; stderr: ${exit.stderr.slice(-1500)}`);
  }
  return { fields: collect(run, exit, spec.fullView ?? false), run, exit };
}

/** Waits until the probe (`listen READY STOP`) has its handlers in place. */
export async function probeListening(run: Run, ready = "/tmp/ready"): Promise<void> {
  await Promise.race([fileAppears(run.host(ready), 60_000), run.exited.then((e) => Promise.reject(new Error(`the wrapper exited (${e.code}) before the probe listened: ${e.stderr}`)))]);
}

/** The lines of the wrapper's own output that are Argo's log records (logrus text): not the command's output. */
const LOG_LINE = /^(time="?\S+"? level=\S+ msg=|Error: |killing \d+ with )/;

function collect(run: Run, exit: Exit, fullView: boolean): Record<string, string> {
  const fields: Record<string, string> = {};
  const norm = (value: string) => value.split(inside(run.dir)).join("$RUN").split(run.dir).join("$RUN");
  fields.exit = exit.signal ? `signal ${exit.signal}` : String(exit.code);
  fields.stdout = JSON.stringify(exit.stdout.split("\n").filter((l) => !LOG_LINE.test(l)).join("\n"));
  // The termination message: what failed, in the emissary's own words, up to the first colon. What follows it is the
  // system's account of the cause, in Go's words or Node's, which differ by nature (Go's "stat X: no such file or
  // directory", Node's "X: no such file or directory (ENOENT)").
  fields["termination-log"] = JSON.stringify(readOr(join(run.dir, "termination-log"), "").split(": ")[0]);
  // Each file is a field of its own; the folders (each with its mode) are one field together, so that a folder
  // made on one side only is one difference, not one per level.
  const folders: string[] = [];
  for (const [path, value] of [...walk(join(run.dir, "argo"), "/var/run/argo"), ...walk(join(run.dir, "tmp"), "/tmp")]) {
    if (value.startsWith("dir ")) folders.push(`${path} ${value.slice(4)}`);
    else fields[path] = norm(value);
  }
  fields.folders = JSON.stringify(folders);
  const reports = run.probeLines().filter((line) => "argv" in line);
  fields.attempts = String(reports.length);
  if (reports.length > 0) {
    const view = seen(reports[0]!, norm);
    for (const [field, value] of Object.entries(view)) if (fullView || field === "command argv" || field === "command env") fields[field] = value;
  }
  return fields;
}

/**
 * Every entry under `root`, as `path -> "TYPE MODE content"`. baton's liveness files beside `exitcode`
 * (`exitcode.baton-live`, `exitcode.baton-wake`) are left out: nothing of Argo's reads them, and docs/argo.md lists
 * them as a difference of design. `combined` is compared line by line sorted: the order of stdout's and stderr's
 * lines in it depends on which pipe a wrapper reads first, in Argo's emissary too.
 */
function walk(root: string, shown: string): [string, string][] {
  const out: [string, string][] = [];
  const visit = (at: string, path: string) => {
    for (const name of readdirSync(at).sort()) {
      if (/\.baton-(live|wake)$/.test(name)) continue;
      const file = join(at, name);
      const where = `${path}/${name}`;
      const stat = lstatSync(file);
      const mode = (stat.mode & 0o7777).toString(8).padStart(4, "0");
      if (stat.isDirectory()) {
        out.push([where, `dir ${mode}`]);
        visit(file, where);
      } else if (stat.isSymbolicLink()) {
        out.push([where, `link ${readlinkSync(file)}`]);
      } else if (!stat.isFile()) {
        out.push([where, `other ${mode}`]);
      } else if (name.endsWith(".tgz")) {
        let entries: string;
        try {
          entries = JSON.stringify(readTgz(readFileSync(file)));
        } catch (error) {
          entries = `unreadable: ${(error as Error).message}`;
        }
        out.push([where, `file ${mode} ${entries}`]);
      } else {
        const bytes = readFileSync(file);
        let content = bytes.length > 4096 ? `${bytes.length} bytes` : JSON.stringify(bytes.toString("utf8"));
        if (name === "combined") content = JSON.stringify(bytes.toString("utf8").split("\n").sort());
        out.push([where, `file ${mode} ${content}`]);
      }
    }
  };
  if (existsSync(root)) visit(root, shown);
  return out;
}

/** What the command saw (the probe's report), field by field; pids and pipe numbers are left out, by nature. */
function seen(report: Record<string, unknown>, norm: (v: string) => string): Record<string, string> {
  const fds = Object.fromEntries(
    Object.entries(report.fds as Record<string, string>)
      .map(([fd, where]) => [fd, where.replace(/^(pipe|socket|anon_inode):\[?\d*\]?/, "$1").replace(/\[\d+\]/, "")]),
  );
  const pid = report.pid as number;
  return {
    "command argv": norm(JSON.stringify(report.argv)),
    "command env": norm(JSON.stringify((report.env as string[]).slice().sort())),
    "command cwd": JSON.stringify(report.cwd),
    "command umask": String(report.Umask),
    "command SigBlk": String(report.SigBlk),
    "command SigIgn": String(report.SigIgn),
    "command SigCgt": String(report.SigCgt),
    "command fds": JSON.stringify(fds),
    "command parent": String(report.ppid),
    "command group": report.pgid === pid ? "its own" : String(report.pgid),
    "command session": report.sid === pid ? "its own" : String(report.sid),
  };
}

/** Runs `words` inside the PID and mount namespaces of the process `pid` (as `kubectl exec` runs a command in a container). */
export function execInside(pid: number, words: string[], env: Record<string, string>): Promise<Exit> {
  // A session of its own, as a command run over pods/exec has: not the test runner's process group, which a wrapper
  // signalling "its command's group" as seen from inside its namespace could reach.
  const child = spawn("nsenter", [`--target=${pid}`, "--pid", "--mount", "--", ...words.map(inside)], { env, stdio: ["ignore", "pipe", "pipe"], timeout: 60_000, detached: true });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  return new Promise((done) => child.on("close", (code, signal) => done({ code, signal, stdout, stderr })));
}
