// Runs one pod on this machine the way the kubelet would with restartPolicy Never: the init containers one after another
// (a failing one fails the pod), then every container at once; a native sidecar (an init container with restartPolicy
// Always) starts in the init sequence, the next one only once its startupProbe has passed, and is stopped (SIGTERM,
// in reverse order) once every container has ended; its exit code does not count for the phase; each container is PID 1 of its own PID namespace with
// a private mount namespace (see rootfs.ts), all of them sharing the pod's network namespace (see sandbox.ts). The host's
// filesystem stands in for every image. Reports what the kubelet would: per-container exit code, reason and
// termination message, and the pod phase.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { chmodSync, createWriteStream, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { constants, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { IContainer } from "kubernetes-models/v1";
import { containerEnv, type EnvOverride } from "./env.js";
import { EventTail, type BatonEvent } from "./events.js";
import type { PodToRun } from "./manifest.js";
import { rootfsScript, type BindMount } from "./rootfs.js";
import { PodSandbox } from "./sandbox.js";
import { checkStartupProbe, startedBy } from "./startup-probe.js";

export type Phase = "Succeeded" | "Failed";

export interface ContainerStatus {
  name: string;
  init: boolean;
  /** A native sidecar: an init container with restartPolicy Always. */
  sidecar?: boolean;
  /** Epoch ms: when the runner began creating the container (namespaces, mounts); undefined if it never started. */
  createdAt?: number;
  /** Epoch ms: when the container's command was exec'd as its PID 1 (Kubernetes' startedAt). */
  startedAt?: number;
  /** Epoch ms: when the runner saw the container end. */
  finishedAt?: number;
  exitCode?: number;
  /** Kubernetes' reason: Completed, Error, or (never started) PodInitializing. */
  reason: string;
  /** The termination message: the content of terminationMessagePath (or the log tail, with FallbackToLogsOnError). */
  message: string;
  /** baton's lifecycle events, in the order written. */
  events: BatonEvent[];
  logFile: string;
}

export interface PodResult {
  name: string;
  kind: "Pod" | "Job";
  phase: Phase;
  /** Why the pod failed when no container says so (DeadlineExceeded). */
  reason?: string;
  startedAt: number;
  finishedAt: number;
  initContainers: ContainerStatus[];
  containers: ContainerStatus[];
  runDir: string;
}

/** What the runner reports while the pod runs, for the live view. */
export type PodActivity =
  | { kind: "created"; container: string; t: number }
  | { kind: "started"; container: string; t: number }
  | { kind: "event"; container: string; event: BatonEvent }
  | { kind: "log"; container: string; line: string; t: number }
  | { kind: "terminated"; container: string; status: ContainerStatus; t: number };

export interface RunOptions {
  /** Folder for volumes, logs, events and scripts (default: a new folder under the system temp folder). */
  runDir?: string;
  /** Extra env for containers ("name" or undefined for every container), applied as if written in the manifest. */
  env?: EnvOverride[];
  /** The image's environment, which the host stands in for (default: PATH and HOME of this process). */
  imageEnv?: Record<string, string>;
  /** Pod deadline in seconds (default: the manifest's activeDeadlineSeconds, else 300). */
  deadlineSeconds?: number;
  onActivity?: (activity: PodActivity) => void;
}

const EVENTS_PATH = "/dev/baton-events.jsonl";
const DEFAULT_TERMINATION_PATH = "/dev/termination-log";

export async function runPod(pod: PodToRun, options: RunOptions = {}): Promise<PodResult> {
  const runDir = options.runDir ?? mkdtempSync(join(tmpdir(), `podrunner-${pod.name}-`));
  mkdirSync(runDir, { recursive: true });
  const report = options.onActivity ?? (() => {});
  const spec = pod.spec;
  if (spec.restartPolicy === "Always" || spec.restartPolicy === undefined) {
    if (pod.kind === "Pod") throw new Error(`pod ${pod.name}: restartPolicy must be Never or OnFailure for a pod that is meant to end (the runner never restarts a container)`);
  }
  const volumes = prepareVolumes(pod, runDir);
  // Refuse a pod the runner cannot run before anything of it starts, as the API server would reject it.
  for (const c of [...(spec.initContainers ?? []), ...spec.containers]) checkContainer(pod, c, volumes, options.env ?? []);
  for (const c of spec.containers) {
    if (c.restartPolicy !== undefined) throw new Error(`container ${c.name}: restartPolicy is for init containers only (Always: a native sidecar)`);
  }
  for (const c of spec.initContainers ?? []) {
    if (c.restartPolicy !== undefined && c.restartPolicy !== "Always") throw new Error(`init container ${c.name}: restartPolicy must be Always (a native sidecar) or unset`);
    if (isNativeSidecar(c)) checkStartupProbe(c);
  }
  const imageEnv = options.imageEnv ?? { PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin", HOME: "/root" };
  const deadline = (options.deadlineSeconds ?? spec.activeDeadlineSeconds ?? 300) * 1000;

  const startedAt = Date.now();
  const sandbox = await PodSandbox.start(pod.name, (message) => process.stderr.write(`podrunner: ${message}\n`));
  const running = new Set<RunningContainer>();
  let deadlineExceeded = false;
  const timer = setTimeout(() => {
    deadlineExceeded = true;
    const grace = (spec.terminationGracePeriodSeconds ?? 30) * 1000;
    for (const c of running) c.stop(grace);
  }, deadline);
  // Ctrl-C stops the pod as a deletion would (a short grace period); a second one kills at once.
  let interrupted = false;
  const interrupt = () => {
    for (const c of running) c.stop(interrupted ? 0 : 2000);
    interrupted = true;
  };
  process.on("SIGINT", interrupt);
  process.on("SIGTERM", interrupt);

  const initStatuses: ContainerStatus[] = [];
  const statuses: ContainerStatus[] = [];
  const sidecars: { run: RunningContainer; index: number }[] = [];
  try {
    let initFailed = false;
    for (const container of spec.initContainers ?? []) {
      if (initFailed || deadlineExceeded) {
        initStatuses.push(notStarted(container, true, runDir));
        continue;
      }
      const run = startContainer(pod, container, true, { runDir, volumes, imageEnv, sandbox, env: options.env ?? [], report });
      running.add(run);
      if (isNativeSidecar(container)) {
        // Runs beside what follows; the kubelet would restart it if it ended, the runner does not.
        sidecars.push({ run, index: initStatuses.push(notStarted(container, true, runDir)) - 1 });
        void run.done.then(() => running.delete(run), () => running.delete(run));
        if (!(await startedBy(container, sandbox.enter(), run.done))) initFailed = true;
        continue;
      }
      const status = await run.done;
      running.delete(run);
      initStatuses.push(status);
      if (status.exitCode !== 0) initFailed = true;
    }
    if (initFailed || deadlineExceeded) {
      for (const c of spec.containers) statuses.push(notStarted(c, false, runDir));
    } else {
      const runs = spec.containers.map((c) =>
        startContainer(pod, c, false, { runDir, volumes, imageEnv, sandbox, env: options.env ?? [], report }),
      );
      for (const run of runs) {
        running.add(run);
        void run.done.then(() => running.delete(run), () => running.delete(run));
      }
      statuses.push(...(await Promise.all(runs.map((r) => r.done))));
    }
    // Every container has ended: the kubelet stops the native sidecars, the last one first.
    const grace = (spec.terminationGracePeriodSeconds ?? 30) * 1000;
    for (const { run, index } of sidecars.reverse()) {
      run.stop(grace);
      initStatuses[index] = { ...(await run.done), sidecar: true };
    }
  } finally {
    clearTimeout(timer);
    process.off("SIGINT", interrupt);
    process.off("SIGTERM", interrupt);
    await sandbox.stop();
  }

  // A native sidecar's exit code (143 after the kubelet's SIGTERM, say) does not decide the phase.
  const all = [...initStatuses, ...statuses].filter((s) => !s.sidecar);
  const succeeded = !deadlineExceeded && all.every((s) => s.exitCode === 0);
  return {
    name: pod.name,
    kind: pod.kind,
    phase: succeeded ? "Succeeded" : "Failed",
    ...(deadlineExceeded ? { reason: "DeadlineExceeded" } : {}),
    startedAt,
    finishedAt: Date.now(),
    initContainers: initStatuses,
    containers: statuses,
    runDir,
  };
}

interface Volume {
  source: string;
}

function prepareVolumes(pod: PodToRun, runDir: string): Map<string, Volume> {
  const volumes = new Map<string, Volume>();
  for (const v of pod.spec.volumes ?? []) {
    if (v.emptyDir) {
      const source = join(runDir, "volumes", v.name);
      mkdirSync(source, { recursive: true });
      chmodSync(source, 0o777); // as the kubelet makes an emptyDir
      volumes.set(v.name, { source });
    } else if (v.hostPath) {
      volumes.set(v.name, { source: v.hostPath.path });
    } else {
      const type = Object.keys(v).find((k) => k !== "name");
      throw new Error(`volume ${v.name}: type ${type} is not supported by the local runner (emptyDir and hostPath are)`);
    }
  }
  return volumes;
}

function isNativeSidecar(container: IContainer): boolean {
  return container.restartPolicy === "Always";
}

function checkContainer(pod: PodToRun, container: IContainer, volumes: Map<string, Volume>, env: EnvOverride[]): void {
  if (!container.command || container.command.length === 0) {
    throw new Error(`container ${container.name}: no command (the local runner has no image to take an entrypoint from)`);
  }
  for (const m of container.volumeMounts ?? []) {
    if (!volumes.has(m.name)) throw new Error(`container ${container.name}: volumeMount ${m.name} names no volume of the pod`);
  }
  containerEnv(pod, container, env); // throws on what it cannot resolve
}

interface StartContext {
  runDir: string;
  volumes: Map<string, Volume>;
  imageEnv: Record<string, string>;
  sandbox: PodSandbox;
  env: EnvOverride[];
  report: (activity: PodActivity) => void;
}

interface RunningContainer {
  done: Promise<ContainerStatus>;
  /** Graceful stop as the kubelet does it: SIGTERM to PID 1, SIGKILL after the grace period. */
  stop(graceMs: number): void;
}

function startContainer(pod: PodToRun, container: IContainer, init: boolean, ctx: StartContext): RunningContainer {
  const dir = join(ctx.runDir, "containers", container.name);
  mkdirSync(dir, { recursive: true });
  const terminationLog = join(dir, "termination-log");
  const eventsFile = join(dir, "events.jsonl");
  const logFile = join(dir, "log");
  writeFileSync(terminationLog, "");
  writeFileSync(eventsFile, "");
  const rootDir = join(dir, "root");
  mkdirSync(rootDir, { recursive: true });

  const { env, argv } = containerEnv(pod, container, ctx.env);
  env.push(["BATON_EVENTS", EVENTS_PATH], ["BATON_NAME", container.name]);
  const imageVars = Object.entries(ctx.imageEnv).filter(([k]) => !env.some(([name]) => name === k));
  const mounts: BindMount[] = [
    { target: container.terminationMessagePath ?? DEFAULT_TERMINATION_PATH, source: terminationLog, file: true, readOnly: false },
    { target: EVENTS_PATH, source: eventsFile, file: true, readOnly: false },
  ];
  for (const m of container.volumeMounts ?? []) {
    const volume = ctx.volumes.get(m.name)!;
    const source = m.subPath ? join(volume.source, m.subPath) : volume.source;
    if (m.subPath) mkdirSync(source, { recursive: true });
    mounts.push({ target: m.mountPath, source, file: false, readOnly: m.readOnly ?? false });
  }
  const startedAtFile = join(dir, "started-at");
  const script = rootfsScript({
    root: rootDir,
    mounts,
    workingDir: container.workingDir ?? "/",
    argv,
    env: [["HOSTNAME", pod.name], ...imageVars, ...env],
    startedAtFile,
  });
  const scriptFile = join(dir, "setup.sh");
  writeFileSync(scriptFile, script);

  const createdAt = Date.now();
  let startedAt: number | undefined;
  const readStartedAt = () => {
    if (startedAt !== undefined) return;
    try {
      const value = Number(readFileSync(startedAtFile, "utf8"));
      if (value > 0) {
        startedAt = value;
        ctx.report({ kind: "started", container: container.name, t: value });
      }
    } catch {
      // not yet
    }
  };
  const events: BatonEvent[] = [];
  const tail = new EventTail(
    eventsFile,
    (event) => {
      readStartedAt(); // an event means the command runs: report its start first
      events.push(event);
      ctx.report({ kind: "event", container: container.name, event });
    },
    (name) => name === "started-at" && readStartedAt(),
  );
  // setpriv --pdeathsig: should the runner die, the kernel kills unshare, and --kill-child takes the container with it.
  const child = spawn(
    "setpriv",
    ["--pdeathsig", "KILL", "--", ...ctx.sandbox.enter(), "unshare", "--mount", "--propagation", "private", "--", "/bin/sh", scriptFile],
    { stdio: ["ignore", "pipe", "pipe"], env: { PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" } },
  );
  ctx.report({ kind: "created", container: container.name, t: createdAt });
  const log = createWriteStream(logFile);
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.pipe(log, { end: false });
    createInterface({ input: stream }).on("line", (line) => ctx.report({ kind: "log", container: container.name, line, t: Date.now() }));
  }

  let killTimer: NodeJS.Timeout | undefined;
  const done = (async (): Promise<ContainerStatus> => {
    const [code, signal] = (await once(child, "close")) as [number | null, NodeJS.Signals | null];
    const finishedAt = Date.now();
    clearTimeout(killTimer);
    readStartedAt();
    tail.close();
    await new Promise<void>((resolve) => log.end(resolve));
    const exitCode = code ?? 128 + signalNumber(signal);
    let message = readFileSync(terminationLog, "utf8").slice(0, 4096);
    if (message === "" && exitCode !== 0 && container.terminationMessagePolicy === "FallbackToLogsOnError") {
      message = readFileSync(logFile, "utf8").split("\n").slice(-80).join("\n").slice(-2048);
    }
    const status: ContainerStatus = {
      name: container.name,
      init,
      createdAt,
      startedAt: startedAt ?? createdAt,
      finishedAt,
      exitCode,
      reason: exitCode === 0 ? "Completed" : "Error",
      message,
      events,
      logFile,
    };
    ctx.report({ kind: "terminated", container: container.name, status, t: finishedAt });
    return status;
  })();

  return {
    done,
    stop(graceMs: number) {
      const pid1 = containerPid1(child.pid);
      if (pid1 === undefined) {
        child.kill("SIGKILL"); // still setting up: nothing of the user's runs yet
        return;
      }
      try {
        process.kill(pid1, "SIGTERM");
      } catch {
        return; // it has just ended
      }
      clearTimeout(killTimer);
      killTimer = setTimeout(() => child.kill("SIGKILL"), graceMs); // --kill-child takes PID 1, so the namespace, with it
    },
  };
}

/** The container's PID 1, seen from the host: the only child of `unshare --fork`, once the setup script has exec'd it. */
function containerPid1(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    if (!readFileSync(`/proc/${pid}/comm`, "utf8").startsWith("unshare")) return undefined;
    const children = readdirSync(`/proc/${pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim().split(/\s+/).filter(Boolean),
    );
    return children.length > 0 ? Number(children[0]) : undefined;
  } catch {
    return undefined;
  }
}

function notStarted(container: IContainer, init: boolean, runDir: string): ContainerStatus {
  return {
    name: container.name,
    init,
    reason: "PodInitializing",
    message: "",
    events: [],
    logFile: join(runDir, "containers", container.name, "log"),
  };
}

function signalNumber(signal: NodeJS.Signals | null): number {
  return signal ? constants.signals[signal] : 0;
}
