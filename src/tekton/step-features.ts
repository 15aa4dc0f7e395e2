import type { StepOptions } from "../cli/step-options.js";
import { copyCredentialsToHome, readCredentials, writeCredentials } from "./credentials.js";
import { allCelTrue, celBudget, prepareCel } from "./cel-worker.js";
import { substituteCommand, SubstitutionError } from "./substitute.js";
import { evaluateWhen, parseWhen } from "./when.js";

// Tekton's features that act around a step's command: the credentials (before the wait), the runtime substitution of
// $(steps...) references and `when` (just before the command). In the Tekton chunk; src/step/features.ts decides
// whether a step needs them at all.

/** What runs: the command (substituted), or why it does not (`when` false, or an unusable reference or expression). */
export type CommandDecision = { run: string[] } | { skip: true } | { error: string };

/**
 * Checks what can be checked before the step waits (the credential secrets, the `when` JSON: a usage error each) and
 * returns what to do once the options are all checked: write the credentials, and copy them into $HOME.
 */
export function prepareTektonFeatures(options: StepOptions, copyCredentials: boolean, warn: (message: string) => void): () => void {
  if (options.when !== undefined) {
    parseWhen(options.when);
    celBudget(process.env);
  }
  const credsDir = `${options.tektonRoot}/creds`;
  const secretsRoot = `${options.tektonRoot}/creds-secrets`;
  const flags = options.credentials;
  const read = Object.values(flags).some((list: string[]) => list.length > 0) ? readCredentials(flags, secretsRoot) : undefined;
  return () => {
    if (read) writeCredentials(read, credsDir, secretsRoot, warn);
    if (read || copyCredentials) copyCredentialsToHome(credsDir, process.env.HOME, warn);
  };
}

/**
 * Tekton's last moment before the command: $(steps.<step>.results|inputs|outputs...) replaced in the environment (of
 * baton itself, which the command inherits, as Tekton does) and in the command, then `when` evaluated. Rejects with
 * `signal.reason` when `signal` aborts first (a signal, --timeout or --cancel-file while CEL runs).
 */
export async function decideTektonCommand(options: StepOptions, signal: AbortSignal): Promise<CommandDecision> {
  let command: string[];
  try {
    const substituted = substituteCommand(options.command, process.env, options.tektonRoot);
    command = substituted.command;
    if (substituted.env) Object.assign(process.env, substituted.env);
  } catch (error) {
    if (error instanceof SubstitutionError) return { error: error.message };
    throw error;
  }
  if (options.when !== undefined) {
    try {
      const budget = celBudget(process.env);
      const allTrue = (cels: readonly string[]) => allCelTrue(cels, budget, signal);
      if (!(await evaluateWhen(parseWhen(options.when), `${options.tektonRoot}/steps`, allTrue))) return { skip: true };
    } catch (error) {
      if (signal.aborted && error === signal.reason) throw error;
      return { error: error instanceof Error ? error.message : String(error) };
    }
  }
  return { run: command };
}

/** While the step waits: reads the CEL chunk's code when the step's `when` has a CEL entry (src/tekton/cel-worker.ts). */
export function prepareWhen(when: string): void {
  let needsCel: boolean;
  try {
    needsCel = parseWhen(when).some((expression) => expression.cel !== "");
  } catch {
    return; // a usage error, told by prepareTektonFeatures
  }
  if (needsCel) prepareCel();
}
