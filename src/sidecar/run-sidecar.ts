import { rmSync } from "node:fs";
import { traceCommand } from "../trace/load.js";
import { monotonicMs } from "../base/clock.js";
import { holdLivenessLock, PostFileTaken, releaseLivenessLock } from "../handoff/liveness-lock.js";
import { BatonError, describeSystemError, EXIT_FAILURE } from "../base/errors.js";
import { writeFileAtomic } from "../base/atomic-write.js";
import { writeEmptyErrorPostFile } from "../handoff/post-file.js";
import { emit } from "../report/events.js";
import { isTrackedChild } from "../run/children.js";
import { shouldBecomeSubreaper, startReaping } from "../run/reaper.js";
import { startCommand, type CommandResult, type RunningCommand } from "../run/run-command.js";
import { endsWait, onSignal } from "../process/signals.js";
import type { SidecarOptions } from "./options.js";
import { decideSidecarOutcome, type SidecarEnded } from "./outcome.js";
import { pollUntilReady, type Probe } from "./probe.js";
import { stopFileThere, waitForAnyStopFile } from "./stop-files.js";
import { postStopUrl } from "./stop-url.js";

// The sidecar lifecycle, top to bottom: start the sidecar (if baton runs it), probe it until it is ready and say so
// in the ready file, wait for a stop file, then stop it (stop URLs, then the stop signal, SIGKILL after the grace).
// Each end says what happened; outcome.ts turns that into baton's exit code and its line on stderr.

export interface SidecarIO {
  warn(message: string): void;
}

/** A terminating signal that ended the killer's wait; used as an AbortSignal reason. */
class StoppedBySignal {
  constructor(readonly signal: NodeJS.Signals | number) {}
}

type FirstOutcome =
  | { kind: "stop"; file: string; stopFile: string; writerDied: boolean }
  | { kind: "exited"; result: CommandResult }
  | { kind: "failed"; error: unknown };

const never = new Promise<never>(() => {});

/**
 * Runs the sidecar lifecycle. The one place that settles the ready file: whatever ended the sidecar (a stop file
 * before the probe succeeded, the sidecar's own end, a failure of baton's), a sidecar that was never ready leaves
 * READY.err, so the first step ends instead of waiting on READY forever.
 */
export async function runSidecar(options: SidecarOptions, io: SidecarIO): Promise<number> {
  const readyFile = options.readyFile;
  const state = { ready: false };
  let exitCode = EXIT_FAILURE;
  try {
    // The first step waiting on READY notices if this baton is killed before the sidecar is ready. Then an earlier
    // run's READY goes (a restarted sidecar is not ready yet): under the lock, so a step that looks waits for it.
    if (readyFile) holdLivenessLock(readyFile, io.warn);
    if (readyFile) clearReadyFile(readyFile);
    exitCode = await sidecarLifecycle(options, io, state);
    return exitCode;
  } catch (error) {
    // Another sidecar's ready file: neither READY nor READY.err is this one's to write.
    if (error instanceof PostFileTaken) state.ready = true;
    throw error;
  } finally {
    if (readyFile && !state.ready) markNotReady(readyFile, exitCode);
    if (readyFile) releaseLivenessLock(readyFile);
  }
}

async function sidecarLifecycle(options: SidecarOptions, io: SidecarIO, state: { ready: boolean }): Promise<number> {
  // 1. Start the sidecar: the same spawn path as a step's command, in a process group of its own.
  // Not when the steps are already over (a container restarted after the last step): then there is nothing to serve.
  // As PID 1 it inherits the orphans of the sidecar and of exec probes: reap them, as in a step.
  startReaping({ isOurChild: isTrackedChild, warn: io.warn, subreaper: shouldBecomeSubreaper() });
  let command: RunningCommand | undefined;
  const stoppedAtStart = stopFileThere(options.stopFiles) !== undefined;
  if (options.command.length > 0 && !stoppedAtStart) {
    // Its TRACEPARENT: the sidecar span's context (docs/tracing.md); nothing unless this baton traces.
    traceCommand();
    command = startCommand(options.command);
    if (command.pid !== undefined) emit("command", { argv: options.command, child: command.pid });
  }

  // Signals go to the sidecar's group as in a step. Without a sidecar, a terminating signal ends the wait.
  const stopWait = new AbortController();
  onSignal((signal) => {
    emit("signal", { signal, to: command?.pid ?? null });
    if (command) command.signal(signal);
    else if (endsWait(signal) && !stopWait.signal.aborted) stopWait.abort(new StoppedBySignal(signal));
  });

  // 2. Beside it: the ready probe, and the wait for a stop file.
  // Nothing can be ready when the steps are already over or the sidecar could not start: a file: probe that is true
  // at once would otherwise write READY for a sidecar that never ran.
  const serving = !stoppedAtStart && (options.command.length === 0 || command?.pid !== undefined);
  const probing = new AbortController();
  const readiness = options.readyProbe && serving
    ? becomeReady(options.readyProbe, options.readyFile!, probing.signal).then(() => (state.ready = true))
    : undefined;
  for (const file of options.stopFiles) emit("waiting", { file });
  const stopFile = waitForAnyStopFile(options.stopFiles, {
    signal: stopWait.signal,
    safetyPollMs: options.safetyPollMs,
    warn: io.warn,
  });

  const first: FirstOutcome = await Promise.race([
    stopFile.then(({ name, file, writerDied }): FirstOutcome => ({ kind: "stop", file: name, stopFile: file, writerDied }), (error): FirstOutcome => ({ kind: "failed", error })),
    command ? command.done.then((result): FirstOutcome => ({ kind: "exited", result })) : never,
    // Readiness decides nothing by succeeding; only a failure to write the ready file ends the race.
    readiness
      ? readiness.then(() => never, (error) => (probing.signal.aborted ? never : ({ kind: "failed", error } as FirstOutcome)))
      : never,
  ]);
  probing.abort();
  if (!stopWait.signal.aborted) stopWait.abort();

  // 3a. The sidecar ended on its own before any stop file: its code is baton's.
  if (first.kind === "exited") {
    const { result } = first;
    emit("exited", { exitCode: result.exitCode, signal: result.signal });
    const lateStop = result.spawnError ? undefined : stopFileThere(options.stopFiles);
    if (lateStop) emit("stopping", { file: lateStop });
    return end({
      kind: "exited",
      exitCode: result.exitCode,
      ...(result.spawnError ? { spawnError: result.spawnError } : {}),
      stopFileThere: lateStop !== undefined,
      ...(options.readyProbe && !state.ready ? { neverReady: options.readyProbe.text } : {}),
    }, io);
  }

  // 3b. baton itself failed (the ready file cannot be written), or a signal ended the killer's wait.
  if (first.kind === "failed") {
    if (first.error instanceof StoppedBySignal) return end({ kind: "signaled", signal: first.error.signal }, io);
    if (command) await stopCommand(command, options, io);
    throw first.error;
  }

  // 3c. A stop file appeared (or the step that writes it was killed): the steps are over.
  return stopOnStopFile(first, command, options, io, state.ready);
}

/** Stops the sidecar on purpose once a stop file appeared: that is a success. */
async function stopOnStopFile(
  first: Extract<FirstOutcome, { kind: "stop" }>,
  command: RunningCommand | undefined,
  options: SidecarOptions,
  io: SidecarIO,
  ready: boolean,
): Promise<number> {
  emit("stopping", { file: first.file });
  if (first.writerDied) io.warn(`the step that writes ${first.stopFile} died before it handed on: stopping`);
  if (options.readyProbe && !ready) io.warn(`${first.file} appeared before the sidecar was ready: it never will be`);
  if (options.stopUrls.length > 0) {
    const outcomes = await Promise.all(options.stopUrls.map((url) => postStopUrl(url)));
    for (const outcome of outcomes) {
      emit("stop-url", { url: outcome.url, status: outcome.status });
      if (outcome.error) io.warn(`stop URL ${outcome.url} did not accept the stop: ${outcome.error}; exiting 0 anyway`);
    }
  }
  if (command) await stopCommand(command, options, io);
  return end({ kind: "stopped" }, io);
}

/** Sends the stop signal to the sidecar's group, SIGKILL after the grace period; settles once the group is gone. */
async function stopCommand(command: RunningCommand, options: SidecarOptions, io: SidecarIO): Promise<void> {
  const stoppedAt = monotonicMs();
  command.stop(options.stopSignal, options.gracePeriodMs);
  const result = await command.done;
  emit("exited", { exitCode: result.exitCode, signal: result.signal });
  if (options.stopSignal !== "SIGKILL" && monotonicMs() - stoppedAt >= options.gracePeriodMs) {
    io.warn(`the sidecar did not stop within ${options.gracePeriodMs} ms of ${options.stopSignal}: killed it (SIGKILL)`);
  }
}

/** Probes until the first success, then writes the ready file: one line of JSON, never empty. */
async function becomeReady(probe: Probe, readyFile: string, signal: AbortSignal): Promise<void> {
  await pollUntilReady(probe, signal);
  try {
    writeFileAtomic(readyFile, `${JSON.stringify({ probe: probe.text, readyAt: new Date().toISOString() })}\n`);
  } catch (error) {
    throw new BatonError(`cannot write ready file ${readyFile}: ${describeSystemError(error)}`);
  }
  releaseLivenessLock(readyFile); // READY is there: a waiter blocked on the lock wakes and finds it
  emit("probe-ok", { probe: probe.text, file: readyFile });
}

/** A ready file left by an earlier run of this container would let the first step start too soon. */
function clearReadyFile(readyFile: string): void {
  rmSync(readyFile, { force: true });
  rmSync(`${readyFile}.err`, { force: true });
}

/**
 * The sidecar will never be ready: READY.err tells the first step so, and it ends (skipped) instead of waiting forever,
 * exactly as after a failed step. Best effort: the sidecar's own exit is what must be reported.
 */
export function markNotReady(readyFile: string, exitCode: number): void {
  try {
    writeFileAtomic(`${readyFile}.err`, `${JSON.stringify({ exitCode, reason: "NotReady", finishedAt: new Date().toISOString() })}\n`);
  } catch {
    // A full disk: an empty READY.err (an inode, no data block) still ends the first step's wait. Otherwise nothing
    // better to do: the exit code and the message on stderr say what happened, and the liveness lock goes with this baton.
    writeEmptyErrorPostFile(readyFile);
  }
}

/** Says the outcome's line, if any, and returns its exit code. */
function end(ended: SidecarEnded, io: SidecarIO): number {
  const { exitCode, warning } = decideSidecarOutcome(ended);
  if (warning !== undefined) io.warn(warning);
  emit("done", { exitCode });
  return exitCode;
}
