import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, writeSync, type WriteStream } from "node:fs";
import { BatonError, describeSystemError } from "../base/errors.js";
import { readBounded } from "../base/safe-files.js";
import { holdLivenessLock, releaseLivenessLock } from "../handoff/liveness-lock.js";
import { isTrackedChild } from "../run/children.js";
import { teeOutput } from "../run/output-tee.js";
import { shouldBecomeSubreaper, startReaping } from "../run/reaper.js";
import { startCommand, type CommandResult } from "../run/run-command.js";
import { sleep } from "../base/clock.js";
import { appendArgsFile } from "./args-file.js";
import { openCaptureFile } from "./capture-files.js";
import { EXIT_EMISSARY_FAILURE, parseEmissaryArgs } from "./emissary-options.js";
import { waitForExitCode, writeExitCode } from "./exitcode-file.js";
import { whyNot } from "./file-error.js";
import { lookPath } from "./look-path.js";
import { saveOutputs } from "./outputs.js";
import { argoRoot, CONFIG_MOUNT, containerDir, isSafeName, TERMINATION_LOG } from "./paths.js";
import { watchSignalFile } from "./signal-file.js";
import { SignalRouter, StoppedBy, type SignalHub } from "./signal-router.js";
import { mainContainerNames, parseTemplate, type Template } from "./template.js";
import { waitForMarker } from "./wait-marker.js";
import { describeTrace, startTracing, traceCommand } from "../trace/load.js";
import { mark } from "../base/trace-marks.js";

// `baton emissary`: what Argo's `argoexec emissary` does for one container of a workflow pod
// (cmd/argoexec/commands/emissary.go runEmissary), in its order: the ctr/NAME/ folder, the args file, the template,
// the container set's dependencies, the command looked up on PATH, the debug pause before, the attempts (with the
// signal file, output capture, a sidecar's stop), the debug pause after, the exit code, and for `main` the outputs.
// ctr/NAME/exitcode is written whatever happens: the command's code; a failed dependency's code; else 64.

export interface ArgoHost extends SignalHub {
  warn(message: string): void;
}

/** A wait ended by a terminating signal: exit 128+N, with no termination message (Argo: errors.NewExitErr). */
class ExitWithoutMessage {
  constructor(readonly exitCode: number) {}
}

/**
 * A template comes from the pod's ARGO_TEMPLATE (one environment string: the kernel passes 128 KiB at most) or from the
 * controller's ConfigMap (1 MiB at most), and so does the file the init container writes from them: 1 MiB, as a
 * Tekton result. It bounds the parse, which runs on the main thread, where no signal is handled until it ends: a
 * 40 MB template took 19 s and 2 GB (1 MiB of the worst JSON: ~0.1 s, src/argo/template.ts bounds its depth).
 */
const TEMPLATE_LIMIT = 1024 * 1024;
const DEFAULT_GRACE_MS = 30_000;

export async function runEmissary(args: readonly string[], env: NodeJS.ProcessEnv, host: ArgoHost): Promise<number> {
  const name = env.ARGO_CONTAINER_NAME ?? "";
  if (!isSafeName(name)) {
    host.warn(`emissary: ARGO_CONTAINER_NAME ${JSON.stringify(name)} is not a container name`);
    return EXIT_EMISSARY_FAILURE;
  }
  const root = argoRoot(env);
  const dir = containerDir(root, name);
  // Argo's runMainContainer span (docs/tracing.md); nothing unless this baton traces.
  describeTrace({ mode: "emissary", engine: "argo", containerName: name, name });
  await startTracing(host.warn);
  // Argo's exitCode: 64 until the command ends (or a dependency fails: then that dependency's code).
  const state = { exitCode: EXIT_EMISSARY_FAILURE };
  try {
    return await lifecycle(args, env, host, { root, dir, name }, state);
  } catch (error) {
    if (error instanceof ExitWithoutMessage) return error.exitCode;
    const message = error instanceof BatonError || error instanceof Error ? error.message : String(error);
    host.warn(message);
    writeTerminationLog(message);
    return EXIT_EMISSARY_FAILURE;
  } finally {
    try {
      // Never into something that is not a folder at ctr/NAME (a symlink would take the write elsewhere).
      if (lstatSync(dir, { throwIfNoEntry: false })?.isDirectory() === false) throw new Error(`${dir} is not a directory`);
      writeExitCode(`${dir}/exitcode`, state.exitCode);
    } catch (error) {
      host.warn(`failed to write exit code to ${dir}/exitcode: ${describeSystemError(error)}`);
    }
    // Its lock goes, and its wake FIFO with baton's exit, as a step's after its post file: left, the FIFO blocked a
    // reader of every file of ctr/NAME (cat ctr/main/*) for ever.
    releaseLivenessLock(`${dir}/exitcode`);
  }
}

interface Where {
  root: string;
  dir: string;
  name: string;
}

async function lifecycle(args: readonly string[], env: NodeJS.ProcessEnv, host: ArgoHost, where: Where, state: { exitCode: number }): Promise<number> {
  // umask 0, as Argo: ctr/ and the capture files are shared by containers of other users (the command inherits it).
  process.umask(0);
  const [program, ...programArgs] = parseEmissaryArgs(args);
  makeContainerDir(where.dir);
  holdLivenessLock(`${where.dir}/exitcode`, host.warn);
  const router = new SignalRouter(host);
  const signalFile = watchSignalFile(`${where.dir}/signal`, (n) => router.receiveNumber(n), host.warn);
  try {
    let argv = programArgs;
    if (env.ARGO_CONTAINER_ARGS_FILE) argv = appendArgsFile(argv, env.ARGO_CONTAINER_ARGS_FILE);
    if (env.ARGO_WAIT_FOR_READY === "true") {
      throw new BatonError("ARGO_WAIT_FOR_READY: Argo's init-less pod layout is not supported by baton");
    }
    const template = readTemplate(where.root, env);
    await waitForDependencies(template, where, router, host, state);
    const found = lookPath(program, env);
    if ("error" in found) throw new BatonError(`failed to find name in PATH: ${found.error}`);
    if (env.ARGO_DEBUG_PAUSE_BEFORE === "true") await pause(`${where.dir}/before`, "before", router, host);
    if ("error" in template.retry) throw new BatonError(template.retry.error);
    const result = await runAttempts([found.path, ...argv], template, env, where, router, host);
    if (env.ARGO_DEBUG_PAUSE_AFTER === "true") await pause(`${where.dir}/after`, "after", router, host);
    if (result.spawnError) throw new BatonError(`failed to start command: ${result.spawnError}`);
    state.exitCode = result.exitCode;
    if (where.name === "main") await saveOutputs(template, where.root, host.warn);
    return result.exitCode;
  } finally {
    signalFile.close();
  }
}

/** ctr/NAME/, mode 0777 ("this also indicates we've started"); refused when something else than a folder is there. */
function makeContainerDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o777 });
  } catch (error) {
    throw new BatonError(`failed to create ctr directory: ${describeSystemError(error)}`);
  }
  if (!lstatSync(dir).isDirectory()) throw new BatonError(`failed to create ctr directory: ${dir} is not a directory`);
}

/** /var/run/argo/template (written by the init container) if it is there, else $ARGO_TEMPLATE. */
function readTemplate(root: string, env: NodeJS.ProcessEnv): Template {
  const file = `${root}/template`;
  let text: string;
  try {
    text = readBounded(file, TEMPLATE_LIMIT).toString("utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw new BatonError(`failed to read template: ${whyNot(file, error)}`);
    const value = env.ARGO_TEMPLATE;
    if (value === undefined) throw new BatonError(`failed to read template: neither ${file} nor ARGO_TEMPLATE is available`);
    text = value === "offloaded" ? readOffloadedTemplate() : value;
  }
  return parseTemplate(text);
}

/** ARGO_TEMPLATE=offloaded: the controller put the template in its ConfigMap, mounted at /argo/config. */
function readOffloadedTemplate(): string {
  const file = `${CONFIG_MOUNT}/ARGO_TEMPLATE`;
  try {
    return readBounded(file, TEMPLATE_LIMIT, { followSymlink: true }).toString("utf8");
  } catch (error) {
    throw new BatonError(`failed to read template: ${whyNot(file, error)}`);
  }
}

/**
 * A container set's member waits for each of its dependencies' exitcode. One that failed fails this container: its
 * code goes into this container's exitcode and baton exits 64. One whose baton died without writing it (its liveness
 * lock is free) fails it too, where Argo would wait until the pod's deadline.
 */
async function waitForDependencies(template: Template, where: Where, router: SignalRouter, host: ArgoHost, state: { exitCode: number }): Promise<void> {
  const dependencies = template.containers.filter((c) => c.name === where.name).flatMap((c) => c.dependencies);
  for (const dependency of dependencies) {
    const depDir = containerDir(where.root, dependency);
    try {
      mkdirSync(depDir, { recursive: true, mode: 0o777 });
    } catch (error) {
      throw new BatonError(`failed to create dependency dir: ${describeSystemError(error)}`);
    }
    mark("waiting", { file: `${depDir}/exitcode` });
    const outcome = await stoppable(router, (signal) => waitForExitCode(`${depDir}/exitcode`, { signal, warn: host.warn }));
    if (outcome === "died") mark("skipped", { died: true });
    else mark(outcome === 0 ? "ready" : "skipped", {});
    if (outcome === "died") throw new BatonError(`dependency "${dependency}" died without writing its exit code`);
    if (outcome !== 0) {
      state.exitCode = outcome;
      throw new BatonError(`dependency "${dependency}" exited with non-zero code: ${outcome}`);
    }
  }
}

async function pause(marker: string, which: string, router: SignalRouter, host: ArgoHost): Promise<void> {
  try {
    await router.during((signal) => waitForMarker(marker, signal, host.warn));
  } catch (error) {
    const why = error instanceof StoppedBy ? `stopped by signal ${error.signal}` : messageOf(error);
    throw new BatonError(`failed waiting for debug-pause-${which} marker: ${why}`);
  }
}

/** A wait that a terminating signal ends with exit 128+N. */
async function stoppable<T>(router: SignalRouter, wait: (signal: AbortSignal) => Promise<T>): Promise<T> {
  try {
    return await router.during(wait);
  } catch (error) {
    if (error instanceof StoppedBy) throw new ExitWithoutMessage(error.exitCode);
    throw new BatonError(messageOf(error));
  }
}

/**
 * The container set's retryStrategy: `retries` attempts in all, `duration` apart (Argo: retry.OnError with a constant
 * backoff). An attempt fails when the command exits non-zero or cannot start. Argo runs no attempt at all for
 * retries < 1 and reports success; baton runs one. A terminating signal (to baton, or by the signal file) ends the
 * attempts: a command that was told to stop is not started again.
 */
async function runAttempts(argv: string[], template: Template, env: NodeJS.ProcessEnv, where: Where, router: SignalRouter, host: ArgoHost): Promise<CommandResult> {
  const { attempts, delayMs } = template.retry as { attempts: number; delayMs: number };
  for (let attempt = 1; ; attempt++) {
    const result = await runOnce(argv, template, env, where, router, host, attempt);
    if ((result.exitCode === 0 && !result.spawnError) || attempt >= attempts || router.stopped) return result;
    if (delayMs > 0) {
      try {
        await router.during((signal) => abortableSleep(delayMs, signal));
      } catch {
        return result;
      }
    }
  }
}

let reaping = false;

/** One attempt: the command in its own process group, its output captured if asked, until it exits. */
async function runOnce(argv: string[], template: Template, env: NodeJS.ProcessEnv, where: Where, router: SignalRouter, host: ArgoHost, attempt = 1): Promise<CommandResult> {
  const capture = env.ARGO_INCLUDE_SCRIPT_OUTPUT === "true" || template.archiveLogs;
  const stdoutPath = `${where.dir}/stdout`;
  const combinedPath = `${where.dir}/combined`;
  const files = new Map<string, WriteStream>();
  if (capture) {
    try {
      for (const path of [stdoutPath, combinedPath]) files.set(path, openCaptureFile(path));
    } catch (error) {
      for (const stream of files.values()) stream.destroy();
      return { exitCode: EXIT_EMISSARY_FAILURE, signal: null, spawnError: messageOf(error) };
    }
  }
  if (!reaping) startReaping({ isOurChild: isTrackedChild, warn: host.warn, subreaper: shouldBecomeSubreaper() });
  reaping = true;
  // Argo's emissary starts the command with Go's exec, which runs no file under /bin/sh (start-process.ts).
  // Its TRACEPARENT: runMainContainer's context, as Argo's emissary gives it (docs/tracing.md).
  traceCommand();
  const command = startCommand(argv, { stdio: capture ? ["inherit", "pipe", "pipe"] : "inherit", shellForScripts: false });
  if (command.pid !== undefined) {
    router.attach(command);
    mark("command", { argv, child: command.pid, attempt });
  }
  const tee = capture ? teeOutput(command, { stdoutPath: [stdoutPath, combinedPath], stderrPath: [combinedPath] }, files, host.warn) : undefined;
  const sidecarStop = template.sidecarNames.includes(where.name) ? stopWhenMainContainersEnd(template, where.root, env, command, host) : undefined;
  try {
    const result = await command.done;
    mark("exited", { exitCode: result.exitCode, signal: result.signal });
    return result;
  } finally {
    router.detach();
    sidecarStop?.abort();
    await tee?.finish();
  }
}

/**
 * A sidecar's emissary stops its own command once every main container has written its exitcode (Argo: emissary.Wait,
 * then Kill: SIGTERM, SIGKILL after ARGO_TERMINATION_GRACE_PERIOD_SECONDS, default 30 s). A main container whose baton
 * died without writing one counts as ended.
 */
function stopWhenMainContainersEnd(template: Template, root: string, env: NodeJS.ProcessEnv, command: { stop(signal: NodeJS.Signals, graceMs: number): void }, host: ArgoHost): AbortController {
  const controller = new AbortController();
  const seconds = Number.parseInt(env.ARGO_TERMINATION_GRACE_PERIOD_SECONDS ?? "", 10);
  const graceMs = /^[+-]?\d+$/.test(env.ARGO_TERMINATION_GRACE_PERIOD_SECONDS ?? "") && seconds > 0 ? seconds * 1000 : DEFAULT_GRACE_MS;
  const ends = mainContainerNames(template).map((main) => {
    const dir = containerDir(root, main);
    try {
      mkdirSync(dir, { recursive: true, mode: 0o777 });
    } catch {
      // the wait below reports a folder it cannot watch
    }
    return waitForExitCode(`${dir}/exitcode`, { signal: controller.signal, warn: host.warn }).catch((error: unknown) => {
      if (controller.signal.aborted) throw error;
      host.warn(messageOf(error)); // an exitcode that is not a file: that container has ended, one way or another
    });
  });
  Promise.all(ends).then(
    () => command.stop("SIGTERM", graceMs),
    () => undefined,
  );
  return controller;
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    sleep(ms).then(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    });
  });
}

/**
 * Argo's main writes an error's message to /dev/termination-log. baton writes it only where the kubelet made that
 * file (it bind-mounts it into every container), so a run outside a pod leaves nothing in /dev.
 */
function writeTerminationLog(message: string): void {
  let fd: number;
  try {
    fd = openSync(TERMINATION_LOG, constants.O_WRONLY | constants.O_TRUNC | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return;
  }
  try {
    if (fstatSync(fd).isFile()) writeSync(fd, message);
  } catch {
    // nowhere else to say it: the line on stderr remains
  } finally {
    closeSync(fd);
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
