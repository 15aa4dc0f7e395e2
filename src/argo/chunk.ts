// The Argo chunk, baton-argo.cjs (src/process/chunks.ts): `baton emissary` and `baton kill`. Loaded only by a container of
// an Argo workflow pod, so a Tekton or plain step never reads it. The signal hub and the warnings are the host's:
// the chunk bundles its own copies of the modules it imports, and the hub's listeners must exist only once.
import { BatonError } from "../base/errors.js";
import { runEmissary, type ArgoHost } from "./emissary.js";
import { runKill } from "./kill.js";

export type { ArgoHost };

export async function runArgoCommand(name: string, args: readonly string[], env: NodeJS.ProcessEnv, host: ArgoHost): Promise<number> {
  if (name === "emissary") return runEmissary(args, env, host);
  if (name === "kill") return runKill(args);
  throw new BatonError(`unknown Argo command ${name}`);
}
