import { readdirSync } from "node:fs";
import { dirname } from "node:path";
import type { StepOptions } from "../cli/step-options.js";
import { READ_LIMIT, readTextBounded } from "../base/safe-files.js";
import { loadTektonChunk } from "../tekton/load.js";
import type { CommandDecision } from "../tekton/step-features.js";
import { mark } from "../base/trace-marks.js";

// Whether a step uses Tekton's features that act around its command (src/tekton/step-features.ts: credentials before
// the wait, $(steps...) substitution and `when` before the command). Only then is their code loaded, from
// the Tekton chunk (src/process/chunks.ts): a plain step pays the few checks here and nothing more.

const STEP_REFERENCE = "$(steps.";

/**
 * Before the wait: checks the credential secrets and the `when` JSON (a usage error each), and returns what to do
 * once all options are checked (write the credentials and copy them into $HOME).
 */
export async function prepareFeatures(options: StepOptions, tekton: boolean, warn: (message: string) => void): Promise<() => void> {
  const flags = options.credentials;
  const credentials = flags.basicDocker.length + flags.dockerConfig.length + flags.dockerCfg.length + flags.basicGit.length + flags.sshGit.length > 0;
  // Tekton's entrypoint copies /tekton/creds into $HOME on every start, flags or not (an emptyDir in every step).
  const copy = tekton && hasEntries(`${options.tektonRoot}/creds`);
  if (options.when === undefined && !credentials && !copy) return () => {};
  if (!credentials && !copy) return (await loadTektonChunk()).prepareTektonFeatures(options, copy, warn);
  // The credentials phase of a traced step (docs/tracing.md): their check here, their writing when the step calls back.
  mark("credentials");
  const setUp = (await loadTektonChunk()).prepareTektonFeatures(options, copy, warn);
  mark("credentials-checked");
  return () => {
    mark("credentials");
    setUp();
    mark("credentials-written");
  };
}

/**
 * While the step waits: loads the code that the rest of the step will need (the Tekton chunk for $(steps...), `when`
 * and the debug breakpoints; the CEL chunk's code for a `when` with CEL), so that the hand-off after the wait does not.
 */
export function preloadFeatures(options: StepOptions): void {
  if (!needsFeatures(options)) return;
  const when = options.when;
  // A chunk that does not load is told when the step asks for it.
  loadTektonChunk().then(
    (tekton) => when !== undefined && tekton.prepareWhen(when),
    () => undefined,
  );
}

/**
 * Just before the command: the command to run, with $(steps...) references replaced, unless `when` says skip. Rejects
 * with `signal.reason` when `signal` aborts while a `when` is evaluated.
 */
export async function decideCommand(options: StepOptions, signal: AbortSignal): Promise<CommandDecision> {
  if (!usesStepFeatures(options)) return { run: options.command };
  mark("decide");
  return (await loadTektonChunk()).decideTektonCommand(options, signal);
}

/** Whether the step needs the Tekton chunk after its wait: a debug breakpoint, a `when`, a $(steps...) reference. */
export function needsFeatures(options: StepOptions): boolean {
  return options.debugBeforeStep || options.breakpointOnFailure || usesStepFeatures(options);
}

/** A `when`, or a $(steps...) reference in the environment, the command or a Tekton script. */
function usesStepFeatures(options: StepOptions): boolean {
  const { command } = options;
  const inEnv = Object.values(process.env).some((value) => value !== undefined && value.includes(STEP_REFERENCE));
  return options.when !== undefined || inEnv || command.some((arg) => arg.includes(STEP_REFERENCE)) || isScriptWithReference(command, options.tektonRoot);
}

/** A Tekton `script:` step runs /tekton/scripts/<file>: artifact references in its text are substituted too. */
function isScriptWithReference(command: readonly string[], tektonRoot: string): boolean {
  if (command.length !== 1 || dirname(command[0]!) !== `${tektonRoot}/scripts`) return false;
  try {
    return readTextBounded(command[0]!, READ_LIMIT.script).includes(STEP_REFERENCE);
  } catch {
    return false; // starting it will say what is wrong
  }
}

function hasEntries(dir: string): boolean {
  try {
    return readdirSync(dir).length > 0;
  } catch {
    return false;
  }
}
