import { readdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import type { StepOptions } from "../cli/step-options.js";

// The optional features of a step that act around its command: Tekton's credentials (before the wait), the runtime
// substitution of $(steps...) references and `when` (just before the command). Each feature's code is loaded only
// when the step uses it (dynamic import), so a plain step pays a few string checks here and nothing more.

/**
 * Checks what can be checked before the step waits (the credential secrets, the `when` JSON: a usage error each) and
 * returns what to do once the options are all checked: write the credentials and copy them into $HOME.
 */
export async function prepareFeatures(options: StepOptions, tekton: boolean, warn: (message: string) => void): Promise<() => void> {
  if (options.when !== undefined) (await import("../tekton/when.js")).parseWhen(options.when);
  const credsDir = `${options.tektonRoot}/creds`;
  const flags = options.credentials;
  const given = flags.basicDocker.length + flags.dockerConfig.length + flags.dockerCfg.length + flags.basicGit.length + flags.sshGit.length > 0;
  // Tekton's entrypoint copies /tekton/creds into $HOME on every start, flags or not (an emptyDir in every step).
  if (!given && !(tekton && hasEntries(credsDir))) return () => {};
  const credentials = await import("../tekton/credentials.js");
  const secretsRoot = `${options.tektonRoot}/creds-secrets`;
  const read = given ? credentials.readCredentials(flags, secretsRoot) : undefined;
  return () => {
    if (read) credentials.writeCredentials(read, credsDir, secretsRoot, warn);
    credentials.copyCredentialsToHome(credsDir, process.env.HOME, warn);
  };
}

/** A Tekton `script:` step runs /tekton/scripts/<file>: artifact references in its text are substituted too. */
function isScriptWithReference(command: readonly string[], tektonRoot: string): boolean {
  if (command.length !== 1 || dirname(command[0]!) !== `${tektonRoot}/scripts`) return false;
  try {
    return readFileSync(command[0]!, "utf8").includes(STEP_REFERENCE);
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

/** What runs: the command (substituted), or why it does not (`when` false, or an unusable reference or expression). */
export type CommandDecision = { run: string[] } | { skip: true } | { error: string };

const STEP_REFERENCE = "$(steps.";

/**
 * Tekton's last moment before the command: $(steps.<step>.results|inputs|outputs...) replaced in the environment (of
 * baton itself, which the command inherits, as Tekton does) and in the command, then `when` evaluated.
 */
export async function decideCommand(options: StepOptions): Promise<CommandDecision> {
  let command = options.command;
  const env = process.env;
  const inEnv = Object.values(env).some((value) => value !== undefined && value.includes(STEP_REFERENCE));
  if (inEnv || command.some((arg) => arg.includes(STEP_REFERENCE)) || isScriptWithReference(command, options.tektonRoot)) {
    const { substituteCommand, SubstitutionError } = await import("../tekton/substitute.js");
    try {
      const substituted = substituteCommand(command, env, options.tektonRoot);
      command = substituted.command;
      if (substituted.env) Object.assign(process.env, substituted.env);
    } catch (error) {
      if (error instanceof SubstitutionError) return { error: error.message };
      throw error;
    }
  }
  if (options.when !== undefined) {
    const { parseWhen, evaluateWhen } = await import("../tekton/when.js");
    const loadCel = async () => (await import("../tekton/load-cel.js")).loadCel();
    try {
      if (!(await evaluateWhen(parseWhen(options.when), `${options.tektonRoot}/steps`, loadCel))) return { skip: true };
    } catch (error) {
      return { error: error instanceof Error ? error.message : String(error) };
    }
  }
  return { run: command };
}
