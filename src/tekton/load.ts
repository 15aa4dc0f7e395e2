import { requireChunk, TEKTON_CHUNK } from "../process/chunks.js";

declare const BATON_BUNDLED: boolean | undefined;

// Tekton's features for a step, from the Tekton chunk inside the bundle (src/process/chunks.ts), or from the sources when not bundled.

export type TektonFeatures = typeof import("./chunk.js");

let loaded: TektonFeatures | undefined;

export async function loadTektonFeatures(): Promise<TektonFeatures> {
  loaded ??= typeof BATON_BUNDLED === "boolean" ? requireChunk<TektonFeatures>(TEKTON_CHUNK) : await import("./chunk.js");
  return loaded;
}
