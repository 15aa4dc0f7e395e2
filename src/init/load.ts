import { loadChunk } from "../process/chunks.js";

// `baton init` and Tekton's subcommands, in the init chunk (src/process/chunks.ts): only an init container runs them,
// so no step reads their code.

/** What the init chunk provides: its entry, src/init/install.ts, must satisfy this. */
export interface InitChunk {
  runInstallCommand(name: string, args: readonly string[], env: NodeJS.ProcessEnv): number;
}

export function loadInstallCommands(): Promise<InitChunk> {
  return loadChunk<InitChunk>("init", () => import("./install.js"));
}
