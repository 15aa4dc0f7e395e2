import type { Worker as WorkerThread } from "node:worker_threads";
import { chunkCode } from "../process/chunks.js";
import { parseDuration } from "../cli/duration.js";
import { usageError } from "../base/errors.js";

// A step's CEL expressions run in a worker thread, under a budget of time and memory. CEL has no loops, but nested
// macros multiply: 11 nested .all() over a 10-element list are 10^11 steps, 7 nested .map() build 10^7 lists, and
// on the main thread either one would hold baton for good (no signal, --timeout or --cancel-file handled: their
// listeners are JavaScript) or end it with V8's fatal out-of-memory abort (exit 134, no POST.err). In a worker, the main
// thread stays free to hear them, and V8 ends the worker, not the process, at its heap limit.
// The worker compiles the CEL chunk (src/tekton/cel-entry.ts and @bufbuild/cel), taken from the same payload as
// everywhere else (src/process/chunks.ts). Run from the sources (the unit tests), there is no chunk: CEL runs in this thread.

/** How long all of a step's CEL expressions may take together, and how much heap their worker may use. */
export interface CelBudget {
  timeMs: number;
  memoryMb: number;
}

const DEFAULT_TIME_MS = 10_000;
const DEFAULT_MEMORY_MB = 64;

/** The budget: BATON_CEL_TIMEOUT (a Go duration) and BATON_CEL_MEMORY (MiB), each a usage error when malformed. */
export function celBudget(env: NodeJS.ProcessEnv): CelBudget {
  const time = env.BATON_CEL_TIMEOUT;
  const memory = env.BATON_CEL_MEMORY;
  const timeMs = time ? parseDuration(time, "BATON_CEL_TIMEOUT") : DEFAULT_TIME_MS;
  if (!(timeMs > 0)) throw usageError(`invalid BATON_CEL_TIMEOUT "${time}": must be more than 0`);
  if (memory && !/^[1-9]\d{0,5}$/.test(memory)) throw usageError(`invalid BATON_CEL_MEMORY "${memory}": a number of MiB, 1 to 999999`);
  return { timeMs, memoryMb: memory ? Number(memory) : DEFAULT_MEMORY_MB };
}

/** A CEL expression that cannot be evaluated, or went over its budget: the step fails (POST.err). */
export class CelError extends Error {}

/**
 * True when every expression gives true (in order, stopping at the first false). Rejects with CelError when one does
 * not compile, fails, is not a bool or goes over the budget, and with `signal.reason` as soon as `signal` aborts (a
 * signal, --timeout or --cancel-file): the worker is terminated then, wherever it is.
 */
export async function allCelTrue(expressions: readonly string[], budget: CelBudget, signal: AbortSignal): Promise<boolean> {
  signal.throwIfAborted();
  const code = chunkCode("cel");
  if (code === undefined) {
    const { evaluateCel } = await import("./cel-entry.js");
    return expressions.every(evaluateCel);
  }
  // Loaded here, not with the Tekton chunk: a step that uses only credentials or substitution does not need it.
  const { Worker } = require("node:worker_threads") as typeof import("node:worker_threads");
  return new Promise((resolve, reject) => {
    const worker: WorkerThread = new Worker(WORKER_CODE, {
      eval: true,
      workerData: { ...code, expressions },
      // Young generation: a sixteenth of the budget, at least 1 MiB (V8's own ratio is about that).
      resourceLimits: { maxOldGenerationSizeMb: budget.memoryMb, maxYoungGenerationSizeMb: Math.max(1, budget.memoryMb >> 4) },
      env: {}, // CEL reads no environment: no copy of baton's
      stdin: false,
    });
    const finish = (settle: () => void) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", aborted);
      worker.removeAllListeners();
      worker.on("error", () => {}); // terminate() may still report the error of the code it interrupts
      void worker.terminate();
      settle();
    };
    const aborted = () => finish(() => reject(signal.reason));
    const timer = setTimeout(() => {
      finish(() => reject(new CelError(`the CEL expressions of --when took longer than ${budget.timeMs} ms, their budget (BATON_CEL_TIMEOUT): stopped`)));
    }, budget.timeMs);
    signal.addEventListener("abort", aborted, { once: true });
    worker.once("message", (answer: { value?: boolean; error?: string }) => {
      finish(() => (answer.error === undefined ? resolve(answer.value === true) : reject(new CelError(answer.error))));
    });
    worker.once("error", (error: Error & { code?: string }) => {
      const why =
        error.code === "ERR_WORKER_OUT_OF_MEMORY"
          ? `the CEL expressions of --when needed more than ${budget.memoryMb} MiB, their budget (BATON_CEL_MEMORY): stopped`
          : `the CEL evaluator of --when failed: ${error.message}`;
      finish(() => reject(new CelError(why)));
    });
    worker.once("exit", () => finish(() => reject(new CelError("the CEL evaluator of --when ended without an answer"))));
  });
}

/** While the step waits: reads the CEL chunk's code and loads node:worker_threads, so that the `when` does not. */
export function prepareCel(): void {
  try {
    chunkCode("cel");
    require("node:worker_threads");
  } catch {
    // told when the step evaluates its `when`
  }
}

/** The worker: compiles the CEL chunk as requireChunk would, evaluates, posts {value} or {error}. */
const WORKER_CODE = `"use strict";
const { parentPort, workerData } = require("node:worker_threads");
const module = { exports: {} };
require("node:vm")
  .compileFunction(workerData.source, ["exports", "require", "module", "__filename", "__dirname"], { filename: workerData.filename })
  .call(module.exports, module.exports, require, module, workerData.filename, "");
let answer;
try {
  answer = { value: workerData.expressions.every((expression) => module.exports.evaluateCel(expression)) };
} catch (error) {
  answer = { error: error instanceof Error ? error.message : String(error) };
}
parentPort.postMessage(answer);
`;
