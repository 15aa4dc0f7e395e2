// How a Tekton conformance scenario runs and what is compared (docs/development.md, "The conformance suite"). Each
// scenario runs three times: on Tekton's real entrypoint, on baton's bundle (on the Node running the test) and on
// baton's standalone build, each with the same argument vector, environment and files, as PID 1 of a PID namespace and
// in a mount namespace of its own where a fresh folder is bind-mounted at /tekton: Tekton's entrypoint reads and
// writes fixed paths (/tekton/results, /tekton/steps, /tekton/creds, /tekton/downward, $HOME), so every run gets its
// own, and nothing one run writes is seen by another. HOME is /tekton/home and the command's folder /tekton/ws, so
// that every path a run sees is the same on all three.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { inflateRawSync } from "node:zlib";
import { BATON, NO_STANDALONE, STANDALONE, tempDir, waitFor } from "../integration/helpers.js";
import type { Comparison } from "./differences.js";
import { probe } from "./peers.js";

/** The probe, the command of every scenario (probe.c). */
export const PROBE = probe();
/** Where the probe reports (inside /tekton, left out of the files compared) and where it says it is ready. */
const PROBE_DIR = "/tekton/.probe";
export const READY = `${PROBE_DIR}/ready`;

/** Tekton's step flags as the controller gives step 0 (pkg/pod/entrypoint.go), the command being the probe. */
export const STEP = [
  "-post_file",
  "/tekton/run/0/out",
  "-termination_path",
  "/tekton/termination",
  "-step_metadata_dir",
  "/tekton/run/0/status",
];

/** A file a scenario puts under /tekton before the run (paths relative to /tekton, or starting with /tekton/). */
export type Planted = string | { content: string; mode: number } | { symlink: string } | { dir: true };

/** What a scenario may do while the wrapper runs. */
export interface Running {
  /** The host path of this run's /tekton. */
  root: string;
  /** Waits until PATH (a /tekton path) exists: an event of the run (the probe's `ready`, a folder made). */
  appears(path: string): Promise<void>;
  /**
   * Waits until the wrapper waits: both make DIR/results and DIR/artifacts (DIR: /tekton/run/0/status) before they wait
   * for their files, Tekton's entrypoint in that order; the second one is the event.
   */
  waiting(): Promise<void>;
  /** Whether PATH (a /tekton path) exists within `ms` milliseconds. */
  appearsWithin(path: string, ms: number): Promise<boolean>;
  /** Writes TEXT at PATH (a /tekton path), through a temporary name and a rename, so no reader sees it half done. */
  write(path: string, text: string): void;
  /** Sends signal SIG to the wrapper (PID 1 of the namespace), from outside, as the kubelet's runtime does. */
  signal(sig: NodeJS.Signals | number): Promise<void>;
}

export interface Scenario {
  /** The id the differences table names, in kebab case. */
  id: string;
  /** The arguments after the wrapper's name; `PROBE` stands for the probe's path. */
  args: string[];
  /** Environment added to PATH, HOME and PROBE_OUT. */
  env?: Record<string, string>;
  /** Files under /tekton before the run. */
  files?: Record<string, Planted>;
  /** What the test does while the wrapper runs (it starts once the wrapper is started). */
  during?: (run: Running) => Promise<void>;
  /**
   * Files (/tekton paths) whose lines are compared in sorted order: one file that both stdout and stderr go to, through
   * two pipes, gets their lines in an order that depends on which pipe the wrapper reads first.
   */
  unorderedLines?: string[];
  /** Compare how long after the probe's `clock` the run ended with this many seconds (timeouts). */
  timed?: number;
}

/** The wrappers: the real entrypoint, the bundle on this Node, the standalone build when there is one. */
export interface Side {
  name: string;
  words: string[];
}

export function batonSides(): Side[] {
  const sides: Side[] = [{ name: "bundle", words: [process.execPath, BATON] }];
  if (!NO_STANDALONE) sides.push({ name: "standalone", words: [STANDALONE] });
  return sides;
}

/** What one run gave: field -> value (JSON-comparable), after normalising what differs by nature. */
export type Outcome = Record<string, unknown>;

// mount: a fresh folder at /tekton for this run only; cd: the step's working folder. `--kill-child`: the namespace
// dies with unshare, so a run the test gives up on leaves nothing behind.
const SANDBOX = 'mount --bind "$0" /tekton && cd /tekton/ws && exec "$@"';

/** Runs `scenario` under `wrapper` and returns what a controller, the next step and the user would read. */
export async function runScenario(scenario: Scenario, wrapper: Side): Promise<Outcome> {
  if (!existsSync("/tekton")) mkdirSync("/tekton");
  const root = join(tempDir(), "tekton");
  for (const dir of ["ws", "home", ".probe"]) mkdirSync(join(root, dir), { recursive: true });
  for (const [path, what] of Object.entries(scenario.files ?? {})) plant(root, path, what);
  const args = scenario.args.map((word) => word.replaceAll("PROBE", PROBE));
  const env = {
    PATH: "/usr/local/bin:/usr/bin:/bin",
    HOME: "/tekton/home",
    PROBE_OUT: `${PROBE_DIR}/out`,
    ...Object.fromEntries(Object.entries(scenario.env ?? {}).map(([name, value]) => [name, value.replaceAll("PROBE", PROBE)])),
  };
  // The probe's `exec` starts the wrapper with every signal at its default, as a container runtime starts PID 1.
  const argv = ["--mount", "--pid", "--fork", "--mount-proc", "--kill-child", "sh", "-c", SANDBOX, root, PROBE, "exec", ...wrapper.words, ...args];
  const child = spawn("unshare", argv, { env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  let endedAt = 0;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => {
    child.on("exit", () => (endedAt = Date.now()));
    child.on("close", (code, signal) => done({ code, signal }));
  });
  const host = (path: string) => join(root, path.replace(/^\/tekton\/?/, ""));
  const running: Running = {
    root,
    appears: async (path) => {
      await waitFor(() => (existsSync(host(path)) ? true : undefined), `${path} in ${scenario.id}`);
    },
    waiting: async () => {
      await running.appears("/tekton/run/0/status/results");
      await running.appears("/tekton/run/0/status/artifacts");
    },
    appearsWithin: (path, ms) =>
      waitFor(() => (existsSync(host(path)) ? true : undefined), path, ms).then(
        () => true,
        () => false,
      ),
    write: (path, text) => {
      mkdirSync(dirname(host(path)), { recursive: true });
      writeFileSync(`${host(path)}.conformance-new`, text);
      renameSync(`${host(path)}.conformance-new`, host(path));
    },
    signal: async (sig) => {
      // unshare --fork's child is sh, which execs the wrapper: PID 1 of the namespace.
      const pid = await waitFor(() => {
        const children = readOr(`/proc/${child.pid}/task/${child.pid}/children`).trim();
        return children ? Number(children.split(" ")[0]) : undefined;
      }, "the wrapper's pid");
      process.kill(pid, sig);
    },
  };
  const during = scenario.during?.(running).catch((error: unknown) => {
    child.kill("SIGKILL");
    throw error;
  });
  const guard = setTimeout(() => child.kill("SIGKILL"), 60_000);
  const exit = await exited;
  clearTimeout(guard);
  await during;
  try {
    return outcome(root, scenario, exit, stdout, stderr, endedAt);
  } finally {
    rmSync(dirname(root), { recursive: true, force: true });
  }
}

function plant(root: string, path: string, what: Planted): void {
  const at = join(root, path.replace(/^\/tekton\//, ""));
  mkdirSync(dirname(at), { recursive: true });
  if (typeof what === "string") writeFileSync(at, what);
  else if ("symlink" in what) symlinkSync(what.symlink, at);
  else if ("dir" in what) mkdirSync(at, { recursive: true });
  else {
    writeFileSync(at, what.content);
    chmodSync(at, what.mode);
  }
}

function readOr(path: string, fallback = ""): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return fallback;
  }
}

/** The value of Tekton flag `name` in `args` (its last, as Go's flag package takes), in any of Go's spellings. */
function flagValue(args: string[], name: string): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < args.length && args[i] !== "--"; i++) {
    const word = args[i]!;
    if (word === `-${name}` || word === `--${name}`) value = args[++i];
    else if (word.startsWith(`-${name}=`) || word.startsWith(`--${name}=`)) value = word.slice(word.indexOf("=") + 1);
  }
  return value;
}

/** The wrapper's own lines on stderr, told from the command's: baton's `baton: ...`, Go's log and flag packages. */
const WRAPPER_LINE = [
  /^baton: /,
  /^\d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d /, // Go's log package (Tekton's entrypoint logs with it)
  /^\{"level":/, // Tekton's zap logger
  /^flag provided but not defined: /, // Go's flag package, then its usage
  /^invalid (boolean )?value /,
  /^flag needs an argument: /,
  /^Usage of /,
  /^ {2}-\S/,
  /^ {4}\t/,
  /^\t/,
];

function isWrapperLine(line: string): boolean {
  return WRAPPER_LINE.some((pattern) => pattern.test(line));
}

const URG = 23;

/** A StartedAt value in Tekton's format (RFC 3339, milliseconds, UTC): a time differs by nature, its format does not. */
const STARTED_AT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

function outcome(
  root: string,
  scenario: Scenario,
  exit: { code: number | null; signal: NodeJS.Signals | null },
  stdout: string,
  stderr: string,
  endedAt: number,
): Outcome {
  const result: Outcome = {};
  result.exit = exit.signal ?? exit.code;
  const host = (path: string) => join(root, path.replace(/^\/tekton\/?/, ""));
  // Given empty, a flag names no file: the default's place is looked at (nothing should be there).
  const post = host(flagValue(scenario.args, "post_file") || "/tekton/run/0/out");
  const postFiles = ["", ".err"].filter((suffix) => existsSync(`${post}${suffix}`));
  result.post = postFiles.map((suffix) => `POST${suffix}`).join(" ") || "none";
  // baton writes one line of JSON into POST and POST.err, Tekton's entrypoint nothing (a listed difference); the
  // times in it differ by nature.
  result["post content"] = postFiles.map((suffix) => readOr(`${post}${suffix}`).replace(/"\d{4}-\d\d-\d\dT[^"]*"/g, '"<time>"'));
  const terminationPath = host(flagValue(scenario.args, "termination_path") || "/tekton/termination");
  result.termination = termination(terminationPath);
  const lines = stderr.split("\n").filter((line) => line !== "");
  // The command's own stderr lines, in order; of the wrapper's, only whether it said something (its words are its own).
  // A temporary file's name (a script step's substituted copy) differs by nature.
  result.stderr = lines.filter((line) => !isWrapperLine(line)).map((line) => line.replace(/\/tmp\/[^\s:]+/g, "<temporary file>"));
  result["wrapper says"] = lines.some(isWrapperLine);
  if (process.env.CONFORMANCE_STDERR) result["raw stderr"] = stderr;
  result.stdout = stdout;
  const reports = readOr(join(root, ".probe/out"))
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const seen = reports.find((r) => "argv" in r);
  result.ran = seen !== undefined;
  if (seen) Object.assign(result, seenByCommand(seen));
  // The signals the command caught, each once, in order. SIGURG only where the scenario sends it: Go's runtime sends it
  // to its own threads to preempt them, and Tekton's entrypoint forwards every signal it gets, so a SIGURG reaches
  // the command at random moments (docs/tekton.md lists it).
  const caught = [...new Set(reports.filter((r) => "signal" in r).map((r) => r.signal as number))].filter(
    (sig) => sig !== URG || scenario.id === "signal-urg",
  );
  if (caught.length > 0) result.caught = caught;
  const clock = reports.find((r) => "clock" in r);
  // "about N s" from half a second before what the scenario expects to 1.5 s after, else the time itself: a wrapper's
  // delays on a loaded machine (this one runs at a load of 14 on 2 cores at times: a timer late, the exit seen late)
  // are not what a timeout is about, a grace period of 10 s or a signal never sent are.
  if (scenario.timed !== undefined && clock) {
    const seconds = (endedAt - (clock.clock as number)) / 1000;
    const about = seconds >= scenario.timed - 0.5 && seconds <= scenario.timed + 1.5;
    result["ended after"] = about ? `about ${scenario.timed} s` : `${seconds.toFixed(1)} s`;
  }
  Object.assign(result, files(root, post, terminationPath));
  for (const path of scenario.unorderedLines ?? []) {
    const field = `file ${path}`;
    if (existsSync(host(path))) result[field] = `lines, sorted: ${JSON.stringify(readOr(host(path)).split("\n").sort())}`;
  }
  return result;
}

/** What the command saw; pipes and sockets have inode numbers that differ by nature. */
function seenByCommand(seen: Record<string, unknown>): Outcome {
  const fds = seen.fds as Record<string, string>;
  return {
    argv: seen.argv,
    env: (seen.env as string[]).slice().sort(),
    cwd: seen.cwd,
    umask: seen.Umask,
    "signals blocked": seen.SigBlk,
    "signals ignored": seen.SigIgn,
    // Its pid differs by nature; whether it is PID 1 of a namespace of its own (TEKTON_HERMETIC) does not.
    "command is PID 1": seen.pid === 1,
    fds: Object.fromEntries(Object.entries(fds).map(([fd, to]) => [fd, to.replace(/^(pipe|socket|anon_inode):\S+/, "$1")])),
  };
}

/** The termination message as the controller reads it: decoded, entries sorted, StartedAt's value normalised. */
function termination(path: string): unknown {
  if (!existsSync(path)) return "absent";
  let text = readFileSync(path, "utf8");
  let encoding = "json";
  if (text.startsWith("tknz:")) {
    encoding = "tknz";
    text = inflateRawSync(Buffer.from(text.slice(5), "base64"), { maxOutputLength: 128 * 1024 }).toString("utf8");
  }
  if (text === "") return "empty";
  try {
    const entries = (JSON.parse(text) as { key: string; value: string; type: number }[]).map((e) => ({
      ...e,
      value: e.key === "StartedAt" && STARTED_AT.test(e.value) ? "<time>" : e.value,
    }));
    entries.sort((a, b) => `${a.type} ${a.key}`.localeCompare(`${b.type} ${b.key}`));
    return { encoding, entries };
  } catch {
    return `not JSON: ${text.slice(0, 200)}`;
  }
}

/**
 * Every other file under /tekton (the probe's and the post files left out: they are fields of their own), one field
 * each: its type, mode and content (a digest when long), or the link's target.
 */
function files(root: string, post: string, terminationPath: string): Outcome {
  const found: Outcome = {};
  // The post file's folders are made to write POST or POST.err: the field `post` tells those apart already.
  const skip = new Set([join(root, ".probe"), terminationPath, post, `${post}.err`]);
  const unreported = new Set([dirname(post), dirname(dirname(post))]);
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const at = join(dir, name);
      if (skip.has(at)) continue;
      // The post file's companions (baton's liveness lock and wake FIFO, the debug scripts' files) by the post file's
      // name, POST, wherever a scenario puts it.
      const field = at.startsWith(`${post}.`) ? `file POST${at.slice(post.length)}` : `file /tekton/${at.slice(root.length + 1)}`;
      const stat = lstatSync(at);
      const mode = (stat.mode & 0o7777).toString(8).padStart(4, "0");
      if (stat.isSymbolicLink()) found[field] = `symlink -> ${readlinkSync(at)}`;
      else if (stat.isDirectory()) {
        if (!unreported.has(at)) found[field] = `dir ${mode}`;
        walk(at);
      } else if (stat.isFIFO()) found[field] = `fifo ${mode}`;
      else if (stat.isFile()) {
        const bytes = readFileSync(at);
        const content =
          bytes.length <= 1024 ? JSON.stringify(bytes.toString("utf8")) : `${bytes.length} bytes sha256 ${createHash("sha256").update(bytes).digest("hex").slice(0, 16)}`;
        found[field] = `file ${mode} ${content}`;
      } else found[field] = `other ${mode}`;
    }
  };
  walk(root);
  return found;
}

/**
 * The comparison of one scenario: every field either side has, the peer's value against baton's. The bundle and the
 * standalone build must agree with each other: where they do not, baton's value names both, which no row can list.
 */
export function compare(id: string, theirs: Outcome, ours: Record<string, Outcome>): Comparison {
  const names = new Set([...Object.keys(theirs), ...Object.values(ours).flatMap((o) => Object.keys(o))]);
  const fields: Record<string, [string, string]> = {};
  const text = (value: unknown) => (value === undefined ? "(none)" : JSON.stringify(value));
  for (const name of names) {
    const values = Object.entries(ours).map(([side, o]) => [side, text(o[name])] as const);
    const agreed = values.every(([, v]) => v === values[0]![1]);
    fields[name] = [text(theirs[name]), agreed ? values[0]![1] : values.map(([side, v]) => `${side}: ${v}`).join(", ")];
  }
  return { scenario: id, fields };
}
