// The Argo chunk, baton-argo.cjs (src/process/chunks.ts): `baton emissary` and `baton kill`. Loaded only by a container
// of an Argo workflow pod, so a Tekton or plain step never reads it. What it must provide: src/argo/load.ts (ArgoChunk).
// The signal hub and the warnings come in as ArgoHost, from main.ts.
import { BatonError } from "../base/errors.js";
import { runEmissary, type ArgoHost } from "./emissary.js";
import { runKill } from "./kill.js";

export type { ArgoHost };

export async function runArgoCommand(name: string, args: readonly string[], env: NodeJS.ProcessEnv, host: ArgoHost): Promise<number> {
  if (name === "emissary") return runEmissary(args, env, host);
  if (name === "kill") return runKill(args);
  throw new BatonError(`unknown Argo command ${name}`);
}
