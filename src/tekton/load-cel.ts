import { CEL_CHUNK, requireChunk } from "../process/chunks.js";

declare const BATON_BUNDLED: boolean | undefined;
import type { CelEvaluator } from "./when.js";

// The CEL evaluator (src/tekton/cel-entry.ts and @bufbuild/cel, ~280 KB minified) is a chunk of its own inside the
// bundle (src/process/chunks.ts), loaded only for a step whose `when` has a `cel` entry.

export async function loadCel(): Promise<CelEvaluator> {
  if (typeof BATON_BUNDLED !== "boolean") return (await import("./cel-entry.js")).evaluateCel;
  return requireChunk<{ evaluateCel: CelEvaluator }>(CEL_CHUNK).evaluateCel;
}
