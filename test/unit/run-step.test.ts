// The step lifecycle (src/step/run-step.ts) driven with a fake world (src/step/step-world.ts), as Tekton's
// entrypointer tests drive Go(): one row per way a step ends. What each row checks: the outcome handed to the
// writer (reason, POST or POST.err), baton's exit code, whether the command started, and the line on stderr.
// The real waiter, runner and writer are covered by the integration tests, on the bundle.
import assert from "node:assert/strict";
import { test } from "node:test";
import { BatonError } from "../../src/base/errors.js";
import { parseStepOptions } from "../../src/cli/step-options.js";
import type { WaitOptions, WaitOutcome } from "../../src/handoff/wait-for-file.js";
import type { CommandResult, RunningCommand } from "../../src/run/run-command.js";
import { batonExitCode, type Outcome } from "../../src/step/outcome.js";
import type { StepWorld } from "../../src/step/step-world.js";
import { runStep } from "../../src/step/run-step.js";

/** What the fakes saw. */
interface Seen {
  started: string[][];
  stoppedWith: NodeJS.Signals[];
  forwarded: (NodeJS.Signals | number)[];
  outcome: Outcome | undefined;
  warnings: string[];
  locked: boolean;
}

/** A fake world: how the waits end, how the command ends (undefined: only when stopped). */
interface Script {
  wait?: (file: string, options: WaitOptions, world: FakeWorld) => Promise<WaitOutcome>;
  result?: CommandResult;
  captureFails?: boolean;
}

interface FakeWorld {
  fakes: StepWorld;
  seen: Seen;
  /** A signal to baton, as src/process/signals.ts would deliver it. */
  signal(signal: NodeJS.Signals): void;
  /** Settles once the command has started. */
  started: Promise<void>;
}

function fakeWorld(script: Script): FakeWorld {
  const seen: Seen = { started: [], stoppedWith: [], forwarded: [], outcome: undefined, warnings: [], locked: false };
  let listener: ((signal: NodeJS.Signals) => void) | undefined;
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const world: FakeWorld = {
    seen,
    started,
    signal: (signal) => listener!(signal),
    fakes: {
      waitForFile: (file, options) => script.wait?.(file, options, world) ?? Promise.resolve("found"),
      openCaptureFiles() {
        if (script.captureFails) throw new Error("cannot open out.txt for the command's output: EACCES");
        return new Map();
      },
      startStepCommand(argv) {
        seen.started.push([...argv]);
        let exit!: (result: CommandResult) => void;
        const done = new Promise<CommandResult>((resolve) => (exit = resolve));
        const command: RunningCommand = {
          pid: script.result?.spawnError ? undefined : 4242,
          stdout: null,
          stderr: null,
          done,
          signal: (signal) => seen.forwarded.push(signal),
          stop(signal) {
            seen.stoppedWith.push(signal);
            exit({ exitCode: 143, signal: "SIGTERM", stoppedWith: signal });
          },
        };
        if (script.result) exit(script.result);
        markStarted();
        return { command, copied: () => Promise.resolve() };
      },
      holdLivenessLock: () => void (seen.locked = true),
      handOn(_options, outcome) {
        seen.outcome = outcome;
        return batonExitCode(outcome);
      },
      onSignal: (subscriber) => (listener = subscriber),
    },
  };
  return world;
}

/** A wait that ends only when the lifecycle aborts it, as the real one does (rejects with the abort's reason). */
function untilAborted(options: WaitOptions): Promise<WaitOutcome> {
  return new Promise((_, reject) => options.signal.addEventListener("abort", () => reject(options.signal.reason), { once: true }));
}

type Row = [
  name: string,
  args: string[],
  script: Script,
  expected: { reason: string; post: "POST" | "POST.err"; exit: number; ran: boolean; warning?: RegExp; stopped?: boolean },
];

const WAIT = ["--wait-file", "prev", "--post-file", "post"];
const exited = (exitCode: number): CommandResult => ({ exitCode, signal: null });

const rows: Row[] = [
  ["completed", WAIT, { result: exited(0) }, { reason: "Completed", post: "POST", exit: 0, ran: true }],
  ["failed", WAIT, { result: exited(7) }, { reason: "Error", post: "POST.err", exit: 7, ran: true }],
  ["continued (--on-error continue)", [...WAIT, "--on-error", "continue"], { result: exited(7) },
    { reason: "Error", post: "POST", exit: 0, ran: true, warning: /exit code 7; continuing/ }],
  ["skipped: the previous step failed", WAIT, { wait: () => Promise.resolve("failed") },
    { reason: "Skipped", post: "POST.err", exit: 1, ran: false, warning: /previous step failed \(prev\.err\)/ }],
  ["the previous step died", WAIT, { wait: () => Promise.resolve("died") },
    { reason: "PreviousStepDied", post: "POST.err", exit: 1, ran: false, warning: /baton died before it handed on/ }],
  ["timed out (--timeout)", [...WAIT, "--timeout", "10ms"], {},
    { reason: "TimeoutExceeded", post: "POST.err", exit: 124, ran: true, stopped: true, warning: /ran longer than 10 ms/ }],
  ["gave up waiting (--wait-timeout)", [...WAIT, "--wait-timeout", "10ms"], { wait: (_, options) => untilAborted(options) },
    { reason: "WaitTimeout", post: "POST.err", exit: 124, ran: false, warning: /gave up waiting after 10 ms/ }],
  ["stopped by a signal while waiting", WAIT,
    { wait: (_, options, world) => (queueMicrotask(() => world.signal("SIGTERM")), untilAborted(options)) },
    { reason: "Signaled", post: "POST.err", exit: 143, ran: false, warning: /stopped by SIGTERM while waiting/ }],
  ["cancelled while waiting", [...WAIT, "--cancel-file", "cancel"],
    { wait: (file, options) => (file === "cancel" ? Promise.resolve("found") : untilAborted(options)) },
    { reason: "Cancelled", post: "POST.err", exit: 143, ran: false, warning: /cancelled by cancel before the command started/ }],
  ["cancelled while running", [...WAIT, "--cancel-file", "cancel"],
    { wait: (file, _, world) => (file === "cancel" ? world.started.then(() => "found" as const) : Promise.resolve("found")) },
    { reason: "Cancelled", post: "POST.err", exit: 143, ran: true, stopped: true, warning: /cancelled by cancel: SIGTERM/ }],
  ["could not start: not found", WAIT, { result: { exitCode: 127, signal: null, spawnError: "cannot run cmd: not found" } },
    { reason: "CommandNotFound", post: "POST.err", exit: 127, ran: true, warning: /cannot run cmd/ }],
  ["could not start: not executable", WAIT, { result: { exitCode: 126, signal: null, spawnError: "cannot run cmd: EACCES" } },
    { reason: "CommandNotExecutable", post: "POST.err", exit: 126, ran: true, warning: /EACCES/ }],
  ["baton failed: no process left to start the command",
    WAIT, { result: { exitCode: 126, signal: null, spawnError: "cannot run cmd: EAGAIN", batonFault: true } },
    { reason: "Error", post: "POST.err", exit: 1, ran: true, warning: /EAGAIN/ }],
  ["baton failed: a capture file cannot be opened", [...WAIT, "--stdout-path", "out.txt"], { captureFails: true },
    { reason: "Error", post: "POST.err", exit: 1, ran: false, warning: /cannot open out\.txt/ }],
  ["baton failed: the wait failed (an unreadable folder)", WAIT,
    { wait: () => Promise.reject(new BatonError("cannot watch /prev: EACCES")) },
    { reason: "Error", post: "POST.err", exit: 1, ran: false, warning: /^cannot watch \/prev: EACCES$/ }],
  ["baton failed: a bug of baton's", WAIT, { wait: () => Promise.reject(new TypeError("x is not a function")) },
    { reason: "Error", post: "POST.err", exit: 1, ran: false, warning: /^internal error: x is not a function$/ }],
];

for (const [name, args, script, expected] of rows) {
  test(`runStep: ${name}`, async () => {
    const world = fakeWorld(script);
    const options = parseStepOptions([...args, "--", "cmd", "arg"], {});
    const exitCode = await runStep(options, { warn: (line) => world.seen.warnings.push(line) }, world.fakes);
    const { outcome, started, stoppedWith, warnings } = world.seen;
    assert.ok(outcome, "the writer was given an outcome");
    assert.equal(outcome.reason, expected.reason);
    assert.equal(outcome.handOn ? "POST" : "POST.err", expected.post);
    assert.equal(exitCode, expected.exit, "baton's exit code");
    assert.deepEqual(started, expected.ran ? [["cmd", "arg"]] : [], "the command started");
    assert.deepEqual(stoppedWith, expected.stopped ? ["SIGTERM"] : [], "the command was stopped");
    if (expected.warning) assert.ok(warnings.some((line) => expected.warning!.test(line)), `a line ${expected.warning}: ${warnings.join(" | ")}`);
    else assert.deepEqual(warnings, []);
    assert.ok(world.seen.locked, "the liveness lock is held");
  });
}

test("runStep: a signal once the command runs goes to the command, and the step goes on", async () => {
  let exit!: () => void;
  const world = fakeWorld({});
  const start = world.fakes.startStepCommand;
  world.fakes.startStepCommand = (...args) => {
    const started = start(...args);
    const done = new Promise<CommandResult>((resolve) => (exit = () => resolve({ exitCode: 130, signal: "SIGINT" })));
    return { ...started, command: { ...started.command, done } };
  };
  const step = runStep(parseStepOptions([...WAIT, "--", "cmd"], {}), { warn: (line) => world.seen.warnings.push(line) }, world.fakes);
  await world.started;
  world.signal("SIGINT");
  exit();
  assert.equal(await step, 130);
  assert.deepEqual(world.seen.forwarded, ["SIGINT"]);
  assert.equal(world.seen.outcome?.reason, "Error");
});
