import { readdirSync } from "node:fs";
import type { StepOptions } from "../cli/step-options.js";

// The optional features of a step that act before it waits: Tekton's credentials. Each feature's code is loaded only
// when the step uses it (dynamic import), so a plain step pays one check here and nothing more.

/**
 * Checks what can be checked before the step waits (reading the credential secrets: a missing one is a usage error)
 * and returns what to do once the options are all checked: write the credentials and copy them into $HOME.
 */
export async function prepareFeatures(options: StepOptions, tekton: boolean, warn: (message: string) => void): Promise<() => void> {
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

function hasEntries(dir: string): boolean {
  try {
    return readdirSync(dir).length > 0;
  } catch {
    return false;
  }
}
