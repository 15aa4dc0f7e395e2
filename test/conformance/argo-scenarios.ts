// The scenarios of the Argo conformance suite (argo.test.ts): each is one container of a workflow pod, the files the
// controller, the init container and the other containers put in place, and what the test does while it runs. Every
// scenario runs the same on each wrapper; the fields it leaves are compared by argo.test.ts.
import { chmodSync, closeSync, existsSync, fchmodSync, mkdirSync, openSync, statSync, writeFileSync, writeSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { waitFor } from "../integration/helpers.js";
import { EMISSARY, execInside, inside, probeListening, type Planted, type Run } from "./argo-pod.js";

/** The probe's folder, as a run sees it. */
export const PROBE_DIR = inside(resolve(import.meta.dirname, "../../build/conformance"));

export interface Scenario {
  name: string;
  /** The command after `--` (default: the probe, by name, looked up on PATH, reporting what it sees). */
  command?: string[];
  /** Everything after the wrapper's words, instead of `emissary ... -- COMMAND`. */
  args?: string[];
  /** ARGO_CONTAINER_NAME (default main); null: unset. */
  container?: string | null;
  env?: Record<string, string>;
  /** /var/run/argo/template (default {}); null: none. */
  template?: unknown;
  planted?: Planted[];
  /** Compare everything the command saw, not only its arguments and environment (argo-pod.ts). */
  fullView?: boolean;
  /** What the test does while the wrapper runs; returns fields of its own (what a `kill` it ran gave). */
  during?: (run: Run, wrapper: string[]) => Promise<Record<string, string> | void>;
}

/** The environment the controller gives a user container (workflowpod.go), PATH with the probe's folder first. */
export function podEnv(scenario: Scenario): Record<string, string> {
  const env: Record<string, string> = {
    PATH: `${PROBE_DIR}:/usr/local/bin:/usr/bin:/bin`,
    HOME: "/root",
    ARGO_NODE_ID: "wf-1234567890",
    ARGO_WORKFLOW_NAME: "wf",
    ARGO_DEADLINE: "0001-01-01T00:00:00Z",
    ARGO_INCLUDE_SCRIPT_OUTPUT: "false",
  };
  if (scenario.container !== null) env.ARGO_CONTAINER_NAME = scenario.container ?? "main";
  return { ...env, ...scenario.env };
}

export function argsOf(scenario: Scenario): string[] {
  return scenario.args ?? [...EMISSARY, ...(scenario.command ?? ["probe", "report"])];
}

/** A file written during the run, as another container would (made with its folders, mode 0666 as under umask 0). */
function writeAs(run: Run, path: string, content: string): void {
  const at = run.host(path);
  if (!existsSync(dirname(at))) {
    mkdirSync(dirname(at), { recursive: true });
    chmodSync(dirname(at), 0o777);
  }
  // In place, as Go's os.WriteFile does; the mode set before the content, as the reader may take the file at once.
  const fd = openSync(at, "w", 0o666);
  fchmodSync(fd, 0o666);
  writeSync(fd, content);
  closeSync(fd);
}

function signalsSeen(run: Run): number[] {
  return run.probeLines().flatMap((line) => (typeof line.signal === "number" ? [line.signal] : []));
}

/** Waits until the probe has seen `signal`, the wrapper has exited, or `ms` have passed; whether it was seen. */
async function probeSees(run: Run, signal: number, ms = 15_000): Promise<boolean> {
  let ended = false;
  void run.exited.then(() => (ended = true));
  try {
    await waitFor(() => (signalsSeen(run).includes(signal) || ended ? true : undefined), `signal ${signal}`, ms);
  } catch {
    return false;
  }
  return signalsSeen(run).includes(signal);
}

const LISTEN = ["probe", "listen", "/tmp/ready", "/tmp/stop"];
const stop = (run: Run) => writeFileSync(run.host("/tmp/stop"), "");

/**
 * a's `exitcode` empty, as Argo's emissary leaves it for a moment while writing it in place (not a number yet: both
 * wait on), and with an old access time: a wrapper that reads it has reached its waiting loop, where it handles
 * signals. Before that, a Go argoexec that has not yet asked for its signals dies of SIGINT (exit 2, no `exitcode`).
 */
const PENDING_A: Planted[] = [{ path: "/var/run/argo/ctr/a", dir: true, mode: 0o777 }, { path: "/var/run/argo/ctr/a/exitcode", content: "" }];

/** Waits until the wrapper has read a's `exitcode` (its access time moved past the planted time; relatime). */
async function waiting(run: Run): Promise<void> {
  const planted = statSync(run.host("/var/run/argo/ctr/a/exitcode")).atimeMs;
  await waitFor(() => (statSync(run.host("/var/run/argo/ctr/a/exitcode")).atimeMs > planted ? true : undefined), "the wrapper to read ctr/a/exitcode", 30_000);
}

/** The container set a -> b: b waits for a. */
const AB = { containerSet: { containers: [{ name: "a" }, { name: "b", dependencies: ["a"] }] } };
const retrying = (retryStrategy: unknown) => ({ containerSet: { containers: [{ name: "main" }], retryStrategy } });

const outputsTemplate = {
  container: { image: "x", volumeMounts: [{ name: "vol", mountPath: "/tmp/vol" }] },
  outputs: {
    parameters: [
      { name: "p", valueFrom: { path: "/tmp/p.txt" } },
      { name: "missing", valueFrom: { path: "/tmp/missing.txt" } },
      { name: "on-volume", valueFrom: { path: "/tmp/vol/r.txt" } },
      { name: "in-folder", valueFrom: { path: "/tmp/d/x" } },
      { name: "no-path", valueFrom: { default: "d" } },
      { name: "through-a-link", valueFrom: { path: "/tmp/p-link" } },
      { name: "relative", valueFrom: { path: "tmp/p.txt" } },
    ],
    artifacts: [
      { name: "file", path: "/tmp/a.txt" },
      { name: "folder", path: "/tmp/d" },
      { name: "missing", path: "/tmp/nope" },
      { name: "on-volume", path: "/tmp/vol/v.txt" },
      { name: "trailing-slash", path: "/tmp/e/" },
      { name: "link-to-folder", path: "/tmp/d-link" },
      { name: "link-to-file", path: "/tmp/a-link" },
      { name: "relative", path: "tmp/a.txt" },
    ],
  },
};
const outputFiles: Planted[] = [
  { path: "/tmp/p.txt", content: "value\n" },
  { path: "/tmp/a.txt", content: "artifact", mode: 0o600 },
  { path: "/tmp/d", dir: true, mode: 0o750 },
  { path: "/tmp/d/x", content: "x" },
  { path: "/tmp/d/sub", dir: true },
  { path: "/tmp/d/sub/y", content: "y", mode: 0o755 },
  { path: "/tmp/d/link", link: "x" },
  { path: "/tmp/d/empty", dir: true, mode: 0o700 },
  { path: "/tmp/e", dir: true },
  { path: "/tmp/e/z", content: "z".repeat(3000) },
  { path: "/tmp/vol/r.txt", content: "r" },
  { path: "/tmp/vol/v.txt", content: "v" },
  { path: "/tmp/p-link", link: "p.txt" },
  { path: "/tmp/d-link", link: "d" },
  { path: "/tmp/a-link", link: "a.txt" },
];

const LONG = "a".repeat(131_073);

export const SCENARIOS: Scenario[] = [
  { name: "plain", command: ["probe", "report"], fullView: true },
  { name: "exit code", command: ["probe", "report", "exit", "3"] },
  { name: "full path", command: [`${PROBE_DIR}/probe`, "report"] },
  { name: "output captured", env: { ARGO_INCLUDE_SCRIPT_OUTPUT: "true" }, command: ["probe", "report", "out", "one", "err", "two", "out", "three", "exit", "1"], fullView: true },
  { name: "output not captured", command: ["probe", "out", "one", "err", "two"] },
  { name: "logs archived", template: { archiveLocation: { archiveLogs: true } }, command: ["probe", "out", "one", "err", "two"] },
  { name: "killed by a signal", command: ["probe", "kill", "9"] },
  { name: "terminated by a signal", command: ["probe", "kill", "15"] },
  { name: "command not found", command: ["no-such-command", "x"] },
  {
    name: "command found through a relative PATH entry",
    env: { PATH: `tmp:${PROBE_DIR}:/usr/bin:/bin` },
    command: ["tool"],
    planted: [{ path: "/tmp/tool", content: "#!/bin/sh\nexit 7\n", mode: 0o755 }],
  },
  {
    name: "a folder and a file that is not executable before the command on PATH",
    env: { PATH: `/tmp/first:/tmp/second:${PROBE_DIR}:/usr/bin:/bin` },
    command: ["probe", "report"],
    planted: [{ path: "/tmp/first/probe", dir: true }, { path: "/tmp/second/probe", content: "#!/bin/sh\nexit 7\n", mode: 0o644 }],
  },
  { name: "command path missing", command: ["/no/such/command"] },
  {
    name: "exec format error",
    command: ["/tmp/no-shebang"],
    planted: [{ path: "/tmp/no-shebang", content: "echo hello\n", mode: 0o755 }],
  },
  {
    name: "not executable",
    command: ["/tmp/not-executable"],
    planted: [{ path: "/tmp/not-executable", content: "#!/bin/sh\necho hello\n", mode: 0o644 }],
  },
  { name: "no container name", container: null },
  { name: "template missing", template: null },
  { name: "template from the environment", template: null, env: { ARGO_TEMPLATE: "{}" } },
  { name: "template not JSON", template: "{" },
  { name: "template of wrong types", template: { containerSet: { containers: "a" } } },
  { name: "template over 1 MiB", template: { metadata: { annotations: { big: "x".repeat(1_100_000) } } } },
  { name: "template nested 10001 deep", template: `{"metadata":${"[".repeat(10_000)}${"]".repeat(10_000)}}` },
  { name: "template nested 9999 deep", template: `{"unknown":${"[".repeat(9_998)}${"]".repeat(9_998)}}` },
  {
    name: "args file over 4 MiB",
    env: { ARGO_CONTAINER_ARGS_FILE: "/tmp/args.json" },
    command: ["probe", "report", "exit", "0"],
    planted: [{ path: "/tmp/args.json", content: JSON.stringify(["a".repeat(4_200_000)]) }],
  },
  { name: "template with unknown keys", template: { foo: 1, metadata: { x: "y" }, CONTAINERSET: null } },
  {
    name: "template keys in another case",
    container: "b",
    template: { ContainerSet: { Containers: [{ Name: "a" }, { name: "b", DEPENDENCIES: ["a"] }], RetryStrategy: { Retries: 2 } } },
    planted: [{ path: "/var/run/argo/ctr/a", dir: true, mode: 0o777 }, { path: "/var/run/argo/ctr/a/exitcode", content: "0" }],
    command: ["probe", "report", "exit", "1"],
  },
  { name: "wait for ready", env: { ARGO_WAIT_FOR_READY: "true" } },
  { name: "output capture asked in capitals", env: { ARGO_INCLUDE_SCRIPT_OUTPUT: "TRUE" }, command: ["probe", "out", "one"] },
  { name: "template is a folder", template: null, planted: [{ path: "/var/run/argo/template", dir: true }] },
  { name: "ctr folder is a file", planted: [{ path: "/var/run/argo/ctr/main", content: "x" }] },
  { name: "bad flag", args: ["emissary", "--bogus", "--", "probe", "report"] },
  { name: "bad log level", args: ["emissary", "--loglevel", "bogus", "--", "probe", "report"] },
  { name: "bad log format", args: ["emissary", "--log-format", "yaml", "--", "probe", "report"] },
  { name: "gloglevel not a number", args: ["emissary", "--gloglevel", "x", "--", "probe", "report"] },
  { name: "kubeconfig flag", args: ["emissary", "--kubeconfig", "/nonexistent", "--", "probe", "report"] },
  { name: "no command", args: ["emissary", "--loglevel", "info", "--"] },
  { name: "command without --", args: ["emissary", "probe", "report"] },
  { name: "command without --, then a flag", args: ["emissary", "probe", "report", "--loglevel", "debug"] },
  { name: "exitcode is a folder", planted: [{ path: "/var/run/argo/ctr/main", dir: true, mode: 0o777 }, { path: "/var/run/argo/ctr/main/exitcode", dir: true }] },
  {
    name: "dependency ok",
    container: "b",
    template: AB,
    planted: [{ path: "/var/run/argo/ctr/a", dir: true, mode: 0o777 }, { path: "/var/run/argo/ctr/a/exitcode", content: "0" }],
  },
  {
    name: "dependency failed",
    container: "b",
    template: AB,
    planted: [{ path: "/var/run/argo/ctr/a", dir: true, mode: 0o777 }, { path: "/var/run/argo/ctr/a/exitcode", content: "3" }],
  },
  {
    name: "dependency ends later",
    container: "b",
    template: AB,
    during: async (run) => {
      await waitFor(() => (run.probeLines().length === 0 && existsIn(run, "/var/run/argo/ctr/b") ? true : undefined), "ctr/b");
      writeAs(run, "/var/run/argo/ctr/a/exitcode", "0");
    },
  },
  {
    name: "dependency exit code with a newline",
    container: "b",
    template: AB,
    planted: [{ path: "/var/run/argo/ctr/a", dir: true, mode: 0o777 }, { path: "/var/run/argo/ctr/a/exitcode", content: "0\n" }],
    during: async (run) => {
      // A wrapper that takes "0\n" for 0 runs the command; one that does not waits on, and nothing shows it: it is
      // given three of Argo's 1 s polls after its first read, then stopped by SIGTERM.
      await waiting(run);
      let ended = false;
      void run.exited.then(() => (ended = true));
      const ran = await waitFor(() => (run.probeLines().length > 0 || ended ? true : undefined), "", 3_000).catch(() => false);
      if (ran) return;
      const pid = await run.pid();
      while (!ended) {
        try {
          process.kill(pid, "SIGTERM");
        } catch {
          break;
        }
        await Promise.race([run.exited, new Promise((r) => setTimeout(r, 500))]);
      }
    },
  },
  {
    name: "signal file while waiting for a dependency",
    container: "b",
    template: AB,
    planted: PENDING_A,
    // Not the probe's `listen`: Argo 3.7 reads the signal file the moment the command starts, before the probe could
    // catch anything. SIGTERM ends the command, whenever it comes.
    command: ["probe", "sleep", "20000"],
    during: async (run) => {
      await waiting(run);
      writeAs(run, "/var/run/argo/ctr/b/signal", "15");
      // A wrapper that reads the signal file only once its command runs shows nothing now: it is given three of
      // Argo's 1 s polls, then the dependency ends.
      let ended = false;
      void run.exited.then(() => (ended = true));
      await waitFor(() => (ended ? true : undefined), "", 3_000).catch(() => undefined);
      writeAs(run, "/var/run/argo/ctr/a/exitcode", "0");
    },
  },
  {
    name: "dependency missing, then SIGTERM",
    container: "b",
    template: AB,
    planted: PENDING_A,
    during: async (run) => {
      await waiting(run);
      const pid = await run.pid();
      // Sent again until the wrapper ends, in case one is lost; but not sooner than 3 s: Argo's emissary, told by the
      // first, may still be sleeping its 1 s in the loop, and then on its way out, where it gives Go's default back to
      // SIGTERM: a second one then ends it, as PID 1, with Go's exit 2 (seen under load with a 0.5 s resend).
      let ended = false;
      void run.exited.then(() => (ended = true));
      while (!ended) {
        try {
          process.kill(pid, "SIGTERM");
        } catch {
          break; // it ended between the check and the kill
        }
        await Promise.race([run.exited, new Promise((r) => setTimeout(r, 3000))]);
      }
    },
  },
  {
    name: "retries after a signal-file SIGKILL",
    template: retrying({ retries: 2 }),
    command: ["probe", "report", ...LISTEN.slice(1)],
    during: async (run) => {
      await probeListening(run);
      writeAs(run, "/var/run/argo/ctr/main/signal", "9");
      // A second attempt reports again; a wrapper that does not retry ends.
      let ended = false;
      void run.exited.then(() => (ended = true));
      await waitFor(() => (ended || run.probeLines().filter((l) => "argv" in l).length > 1 ? true : undefined), "a second attempt or the end", 30_000);
      if (!ended) stop(run);
    },
  },
  {
    name: "dependency missing, then SIGINT and SIGTERM",
    container: "b",
    template: AB,
    planted: PENDING_A,
    during: async (run) => {
      await waiting(run);
      const pid = await run.pid();
      // As above, again until the wrapper ends: SIGINT first each time, then SIGTERM.
      let ended = false;
      void run.exited.then(() => (ended = true));
      while (!ended) {
        try {
          process.kill(pid, "SIGINT");
          await Promise.race([run.exited, new Promise((r) => setTimeout(r, 300))]);
          if (!ended) process.kill(pid, "SIGTERM");
        } catch {
          break;
        }
        await Promise.race([run.exited, new Promise((r) => setTimeout(r, 500))]);
      }
    },
  },
  { name: "retries, all failing", env: { ARGO_INCLUDE_SCRIPT_OUTPUT: "true" }, template: retrying({ retries: 3 }), command: ["probe", "report", "out", "attempt", "exit", "2"] },
  { name: "retries, first succeeds", template: retrying({ retries: 3 }), command: ["probe", "report"] },
  { name: "retries as a string, with duration", template: retrying({ retries: "2", duration: "10ms" }), command: ["probe", "report", "exit", "1"] },
  { name: "retries zero", template: retrying({ retries: 0 }), command: ["probe", "report", "exit", "1"] },
  { name: "retry duration invalid", template: retrying({ retries: 2, duration: "soon" }), command: ["probe", "report", "exit", "1"] },
  { name: "retry duration negative", template: retrying({ retries: 2, duration: "-1s" }), command: ["probe", "report", "exit", "1"] },
  { name: "retries, command not found", template: retrying({ retries: 2 }), command: ["no-such-command"] },
  {
    name: "args file",
    env: { ARGO_CONTAINER_ARGS_FILE: "/tmp/args.json" },
    command: ["probe", "report", "exit", "0"],
    planted: [{ path: "/tmp/args.json", content: JSON.stringify(["from the file", "", "two\nlines"]) }],
  },
  {
    name: "args file with a long argument",
    env: { ARGO_CONTAINER_ARGS_FILE: "/tmp/args.json" },
    command: ["probe", "report", "exit", "0"],
    planted: [{ path: "/tmp/args.json", content: JSON.stringify(["short", LONG]) }],
  },
  {
    name: "args file with an argument of 131072 bytes",
    env: { ARGO_CONTAINER_ARGS_FILE: "/tmp/args.json" },
    command: ["probe", "report", "exit", "0"],
    planted: [{ path: "/tmp/args.json", content: JSON.stringify(["a".repeat(131_072)]) }],
  },
  { name: "args file missing", env: { ARGO_CONTAINER_ARGS_FILE: "/tmp/nope.json" }, command: ["probe", "report"] },
  {
    name: "args file not a list",
    env: { ARGO_CONTAINER_ARGS_FILE: "/tmp/args.json" },
    command: ["probe", "report"],
    planted: [{ path: "/tmp/args.json", content: "{}" }],
  },
  { name: "outputs", template: outputsTemplate, planted: outputFiles, command: ["probe", "exit", "2"] },
  {
    name: "outputs under a script's volume",
    template: { ...outputsTemplate, container: undefined, script: { image: "x", source: "true", volumeMounts: [{ name: "vol", mountPath: "/tmp/vol" }] } },
    planted: outputFiles,
    command: ["probe", "exit", "0"],
  },
  {
    name: "outputs under a container set's volume",
    template: {
      ...outputsTemplate,
      container: undefined,
      containerSet: { volumeMounts: [{ name: "vol", mountPath: "/tmp/vol/" }], containers: [{ name: "main" }] },
    },
    planted: outputFiles,
    command: ["probe", "exit", "0"],
  },
  { name: "outputs, not main", container: "other", template: outputsTemplate, planted: outputFiles, command: ["probe", "exit", "0"] },
  {
    name: "output parameter is a folder",
    template: { outputs: { parameters: [{ name: "p", valueFrom: { path: "/tmp/d" } }] } },
    planted: [{ path: "/tmp/d", dir: true }],
    command: ["probe", "exit", "0"],
  },
  {
    name: "debug pause before",
    env: { ARGO_DEBUG_PAUSE_BEFORE: "true" },
    during: async (run) => {
      await waitFor(() => (existsIn(run, "/var/run/argo/ctr/main") ? true : undefined), "ctr/main");
      writeAs(run, "/var/run/argo/ctr/main/before", "");
    },
  },
  {
    name: "debug pause after",
    env: { ARGO_DEBUG_PAUSE_AFTER: "true" },
    during: async (run) => {
      await waitFor(() => (run.probeLines().length > 0 ? true : undefined), "the probe's report");
      writeAs(run, "/var/run/argo/ctr/main/after", "");
    },
  },
  {
    name: "signal file",
    command: LISTEN,
    during: async (run) => {
      await probeListening(run);
      writeAs(run, "/var/run/argo/ctr/main/signal", "10");
      const seen = await probeSees(run, 10);
      stop(run);
      return { "signals received": JSON.stringify(signalsSeen(run)), "SIGUSR1 by the signal file": String(seen) };
    },
  },
  {
    name: "signal file with a newline",
    command: LISTEN,
    during: async (run) => {
      await probeListening(run);
      // `echo 10 > signal`. A wrapper that refuses it and leaves it (Argo 4.0) does nothing to see: it is given five
      // of Argo's 2 s polls; one that takes it or removes it ends the wait. Then a plain 12 shows that it reads the
      // file at all. The signals are compared in order of number: only which arrived matters here.
      writeAs(run, "/var/run/argo/ctr/main/signal", "10\n");
      const signalFile = run.host("/var/run/argo/ctr/main/signal");
      await waitFor(() => (signalsSeen(run).includes(10) || !existsSync(signalFile) ? true : undefined), "", 10_000).catch(() => undefined);
      writeAs(run, "/var/run/argo/ctr/main/signal", "12");
      await probeSees(run, 12);
      stop(run);
      return { "signals received": JSON.stringify(signalsSeen(run).sort((a, b) => a - b)) };
    },
  },
  {
    name: "signal file with SIGKILL",
    command: LISTEN,
    during: async (run) => {
      await probeListening(run);
      writeAs(run, "/var/run/argo/ctr/main/signal", "9");
    },
  },
  {
    name: "sidecar stopped after main",
    container: "web",
    template: { sidecars: [{ name: "web" }] },
    // Longer than Argo's 2 s poll of the signal file: with less, its SIGKILL may overwrite the SIGTERM unread.
    env: { ARGO_TERMINATION_GRACE_PERIOD_SECONDS: "3" },
    command: LISTEN,
    during: async (run) => {
      await probeListening(run);
      writeAs(run, "/var/run/argo/ctr/main/exitcode", "0");
      await run.exited;
      return { "signals received": JSON.stringify(signalsSeen(run)) };
    },
  },
  {
    name: "kill",
    command: LISTEN,
    during: async (run, wrapper) => {
      await probeListening(run);
      const kill = await execInside(await run.pid(), [...wrapper, "kill", "15", "1"], podEnv({ name: "kill" }));
      const seen = await probeSees(run, 15);
      stop(run);
      return {
        "kill exit": String(kill.code ?? `signal ${kill.signal}${kill.signal === "SIGTERM" ? " (timed out)" : ""}: ${kill.stderr.slice(-500)}`),
        "kill stderr": kill.stderr.includes("panic") ? "a panic" : kill.stderr.trim() === "" ? "nothing" : "a message",
        "kill stdout": JSON.stringify(kill.stdout),
        "SIGTERM reached the command": String(seen),
      };
    },
  },
  { name: "kill with signal 0", args: ["kill", "0", "1"] },
  { name: "kill with no such process", args: ["kill", "15", "99999"] },
  { name: "kill with a bad signal", args: ["kill", "TERM", "1"] },
  { name: "kill with a bad pid", args: ["kill", "15", "one"] },
  { name: "kill without a pid", args: ["kill", "15"] },
];

function existsIn(run: Run, path: string): boolean {
  return existsSync(run.host(path));
}
