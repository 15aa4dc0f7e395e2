import { ARGO_CHUNK, requireChunk } from "../process/chunks.js";

// `baton emissary` and `baton kill`, from the Argo chunk inside the bundle (src/process/chunks.ts), or from the sources when
// not bundled: only Argo's pods run them, so no other step reads their code.

declare const BATON_BUNDLED: boolean | undefined;

export type ArgoCommands = typeof import("./chunk.js");

/** The words that select Argo's commands, as Argo's controller writes them after the binary's path. */
export const ARGO_COMMANDS: readonly string[] = ["emissary", "kill"];

export async function loadArgoCommands(): Promise<ArgoCommands> {
  return typeof BATON_BUNDLED === "boolean" ? requireChunk<ArgoCommands>(ARGO_CHUNK) : await import("./chunk.js");
}
