// Entry point. The first import installs the signal listeners: nothing of baton runs before them.
import { emissaryForwards, endsWait, onSignal } from "./process/signals.js";
import { checkStepPaths, namedAsGiven } from "./cli/check-paths.js";
import { checkPostFileNames, clearEarlierOutcome } from "./handoff/post-file.js";
import { holdLivenessLock, letWaitersStart, PostFileTaken } from "./handoff/liveness-lock.js";
import { stepHelp, VERSION } from "./cli/help.js";
import { findPostFile, parseStepOptions, type StepOptions } from "./cli/step-options.js";
import { findTektonPostFile, isTektonArgv, TEKTON_SUBCOMMANDS, translateTektonArgv } from "./cli/tekton-argv.js";
import { BatonError, EXIT_FAILURE } from "./base/errors.js";
import { loadInstallCommands } from "./init/load.js";
import { ARGO_COMMANDS, loadArgoCommands } from "./argo/load.js";
import { closeStrayInspector } from "./process/inspector-guard.js";
import { describeInternalError } from "./process/internal-error.js";
import { configureEvents, emit } from "./report/events.js";
import { prepareFeatures } from "./step/features.js";
import { reportEarlyFailure, runStep } from "./step/run-step.js";
import { reserveDescriptor } from "./base/spare-descriptor.js";
import { warn } from "./base/warn.js";
import { exitBaton } from "./process/exit.js";
import { describeTrace, finishTracing, startTracing, tracing } from "./trace/load.js";
import { exportTimeoutMs } from "./base/trace-switch.js";


async function main(argv: string[]): Promise<number> {
  const first = argv[0];
  if (first === "--help" || first === "-h" || first === "help") {
    process.stdout.write(stepHelp());
    return 0;
  }
  if (first === "--version" || first === "version") {
    process.stdout.write(`baton ${VERSION}\n`);
    return 0;
  }
  if (first === "sidecar") {
    // Lazy: esbuild keeps sidecar mode in the same bundle but evaluates it only here.
    const { sidecarMode } = await import("./sidecar/main.js");
    return sidecarMode(argv.slice(1), { warn });
  }
  if (first !== undefined && ARGO_COMMANDS.includes(first)) {
    return (await loadArgoCommands()).runArgoCommand(first, argv.slice(1), process.env, { onSignal, endsWait, emissaryForwards, warn });
  }
  if (first === "init" || (first !== undefined && TEKTON_SUBCOMMANDS.includes(first))) {
    return installMode(first, argv.slice(1));
  }
  if (isTektonArgv(argv)) {
    let tekton;
    try {
      tekton = translateTektonArgv(argv);
    } catch (error) {
      reportEarlyFailure(namedAsGiven(findTektonPostFile(argv)), error instanceof BatonError ? error.exitCode : EXIT_FAILURE);
      throw error;
    }
    if (tekton.kind === "help") {
      process.stdout.write(stepHelp());
      return 0;
    }
    if (tekton.kind === "subcommand") return installMode(tekton.name, tekton.args);
    return stepMode(tekton.argv, true);
  }
  return stepMode(argv, false);
}

async function installMode(name: string, args: string[]): Promise<number> {
  return (await loadInstallCommands()).runInstallCommand(name, args, process.env);
}

async function stepMode(argv: string[], tekton: boolean): Promise<number> {
  let options: StepOptions;
  let setUp: () => void;
  // Nothing unless this baton traces (src/base/trace-switch.ts); then a failure from here on is a span too.
  describeTrace({ mode: "step", engine: tekton ? "tekton" : "plain" });
  try {
    // Tekton's entrypoint starts the command with Go's exec, which runs no file under /bin/sh (start-process.ts).
    options = { ...parseStepOptions(argv), shellForScripts: !tekton };
    // Before the events file or anything else takes a descriptor: at the descriptor limit, the one the post file needs.
    if (options.postFile !== undefined) reserveDescriptor();
    configureEvents({ file: options.events, postFile: options.postFile });
    describeTrace({ name: process.env.BATON_NAME || undefined, postFile: options.postFile, stepMetadataDir: options.stepMetadataDir, tektonRoot: options.tektonRoot });
    emit("start", { mode: "step" });
    checkStepPaths(options);
    checkPostFileNames(options);
    // As early as the post file's name is known to be sound: a step killed before its lock is held leaves the next
    // one waiting for ever (docs/design.md "A step that dies"). Then an earlier run's outcome (a restarted container)
    // goes, so that a step starting now waits for this run's.
    if (options.postFile !== undefined) {
      holdLivenessLock(options.postFile, warn);
      clearEarlierOutcome(options.postFile);
    }
    setUp = await prepareFeatures(options, tekton, warn);
  } catch (error) {
    // Another step's post file: neither POST nor POST.err is this step's to write.
    if (!(error instanceof PostFileTaken)) reportEarlyFailure(namedAsGiven(findPostFile(argv)), error instanceof BatonError ? error.exitCode : EXIT_FAILURE);
    throw error;
  }
  setUp();
  await startTracing(warn);
  return runStep(options, { warn });
}

// A SIGUSR1 that came before process/signals.ts may have opened Node's inspector: look after the first tick, once the mode is
// under way, and once more a second later in case the inspector's thread was slow to listen.
function closeInspectorOpenedAtStartup(): void {
  closeStrayInspector().then(
    (closed) => closed && warn("a SIGUSR1 during start-up opened Node's inspector; closed it"),
    () => undefined,
  );
}
setImmediate(closeInspectorOpenedAtStartup);
setTimeout(closeInspectorOpenedAtStartup, 1000).unref();

function end(code: number): never {
  // The next steps first: this process's unmapping waits until they have started their commands (at most
  // WAITERS_START_MS: docs/design.md "Stepping aside").
  letWaitersStart();
  return exitBaton(code);
}

/**
 * A traced baton's end (docs/tracing.md "What a collector cannot do"): its work is done (the post file written), so the
 * next steps are let go first, then the spans are sent, and whatever the collector does, baton exits by the export
 * timeout.
 */
async function exportThenEnd(code: number): Promise<never> {
  const deadline = performance.now() + exportTimeoutMs(process.env);
  letWaitersStart();
  // The export ends itself at the deadline and says so; this is the net under it (a DNS lookup that never returns).
  setTimeout(() => end(code), Math.max(0, deadline - performance.now()) + EXIT_GRACE_MS);
  try {
    await finishTracing(code, warn, deadline);
  } catch (error) {
    warn(`traces not sent: ${error instanceof Error ? error.message : String(error)}`);
  }
  return end(code);
}

/** How long past the export's deadline baton waits for the export to say why it failed, before it exits anyway. */
const EXIT_GRACE_MS = 100;

function finish(code: number): never | Promise<never> {
  return tracing() ? exportThenEnd(code) : end(code);
}

main(process.argv.slice(2)).then(
  finish,
  async (error: unknown) => {
    if (error instanceof BatonError) {
      warn(error.message);
      return finish(error.exitCode);
    }
    // A bug of ours: still one line (BATON_DEBUG=1: and its stack), and the step fails instead of hanging.
    warn(await describeInternalError(error));
    return finish(EXIT_FAILURE);
  },
);
