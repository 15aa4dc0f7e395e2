import { loadChunk } from "../process/chunks.js";
import type { ArgoHost } from "./emissary.js";

// `baton emissary` and `baton kill`, in the Argo chunk (src/process/chunks.ts): only Argo's pods run them, so no
// other step reads their code.

/** What the Argo chunk provides: its entry, src/argo/chunk.ts, must satisfy this. */
export interface ArgoChunk {
  runArgoCommand(name: string, args: readonly string[], env: NodeJS.ProcessEnv, host: ArgoHost): Promise<number>;
}

/** The words that select Argo's commands, as Argo's controller writes them after the binary's path. */
export const ARGO_COMMANDS: readonly string[] = ["emissary", "kill"];

export function loadArgoCommands(): Promise<ArgoChunk> {
  return loadChunk<ArgoChunk>("argo", () => import("./chunk.js"));
}
