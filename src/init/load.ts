import { INIT_CHUNK, requireChunk } from "../process/chunks.js";

// `baton init` and Tekton's subcommands, from the init chunk inside the bundle (src/process/chunks.ts): only an init container runs them,
// so no step should read their code.

declare const BATON_BUNDLED: boolean | undefined;

export type InstallCommands = typeof import("./install.js");

export async function loadInstallCommands(): Promise<InstallCommands> {
  return typeof BATON_BUNDLED === "boolean" ? requireChunk<InstallCommands>(INIT_CHUNK) : await import("./install.js");
}
