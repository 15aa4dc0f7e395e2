import { loadChunk } from "../process/chunks.js";
import type { CelEvaluator } from "./when.js";

// The CEL evaluator (src/tekton/cel-entry.ts and @bufbuild/cel, ~280 KB minified), a chunk of its own
// (src/process/chunks.ts), loaded only for a step whose `when` has a `cel` entry.

/** What the CEL chunk provides: its entry, src/tekton/cel-entry.ts, must satisfy this. */
export interface CelChunk {
  evaluateCel: CelEvaluator;
}

export async function loadCel(): Promise<CelEvaluator> {
  return (await loadChunk<CelChunk>("cel", () => import("./cel-entry.js"))).evaluateCel;
}
