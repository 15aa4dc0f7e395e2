import { readdirSync } from "node:fs";
import { dirname } from "node:path";
import type { StepOptions } from "../cli/step-options.js";
import { fromChunk } from "../base/errors.js";
import { READ_LIMIT, readTextBounded } from "../base/safe-files.js";
import { loadTektonFeatures } from "../tekton/load.js";

// Whether a step uses Tekton's features that act around its command (src/tekton/step-features.ts: credentials before
// the wait, $(steps...) substitution and `when` before the command). Only then is their code loaded, from
// the Tekton chunk (src/process/chunks.ts): a plain step pays the few checks here and nothing more.

/** What runs: the command (substituted), or why it does not (`when` false, or an unusable reference or expression). */
export type CommandDecision = { run: string[] } | { skip: true } | { error: string };

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
  try {
    return (await loadTektonFeatures()).prepareFeatures(options, copy, warn);
  } catch (error) {
    throw fromChunk(error); // a usage error keeps its exit code 2
  }
}

/**
 * Just before the command: the command to run, with $(steps...) references replaced, unless `when` says skip. Rejects
 * with `signal.reason` when `signal` aborts while a `when` is evaluated.
 */
export async function decideCommand(options: StepOptions, signal: AbortSignal): Promise<CommandDecision> {
  const { command } = options;
  const inEnv = Object.values(process.env).some((value) => value !== undefined && value.includes(STEP_REFERENCE));
  const used = options.when !== undefined || inEnv || command.some((arg) => arg.includes(STEP_REFERENCE)) || isScriptWithReference(command, options.tektonRoot);
  if (!used) return { run: command };
  try {
    return await (await loadTektonFeatures()).decideCommand(options, signal);
  } catch (error) {
    throw fromChunk(error); // signal.reason as it is
  }
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
