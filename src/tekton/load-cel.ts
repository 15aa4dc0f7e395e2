import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import type { CelEvaluator } from "./when.js";

// Where the CEL evaluator comes from. The bundle does not hold it: scripts/build.mjs builds src/tekton/cel-entry.ts into
// dist/baton-cel.cjs beside dist/baton.cjs (~400 KB that every step would otherwise read and parse at start-up), and
// the standalone build ships it as lib/baton-cel.cjs. Run from the sources (tests), it is imported directly.

declare const BATON_CEL_FILE: string | undefined;

export const CEL_FILE = typeof BATON_CEL_FILE === "string" ? BATON_CEL_FILE : "baton-cel.cjs";

export async function loadCel(): Promise<CelEvaluator> {
  if (typeof BATON_CEL_FILE !== "string") return (await import("./cel-entry.js")).evaluateCel;
  const file = celFile();
  // The standalone build's own require() knows only Node's built-in modules: a require rooted at the file loads it.
  const { createRequire } = process.getBuiltinModule?.("node:module") ?? (await import("node:module"));
  return (createRequire(file)(file) as { evaluateCel: CelEvaluator }).evaluateCel;
}

/** Beside the bundle; in the standalone build, in ROOT/lib, found from execPath as the reaper addon is. */
function celFile(): string {
  const sea = process.getBuiltinModule?.("node:sea");
  const folders = sea?.isSea()
    ? [dirname(process.execPath), join(dirname(process.execPath), "lib")]
    : [typeof __dirname === "string" ? __dirname : dirname(process.argv[1] ?? ".")];
  for (const folder of folders) {
    const file = join(folder, CEL_FILE);
    if (existsSync(file)) return file;
  }
  throw new Error(`${CEL_FILE} is missing from ${folders.join(" and ")}: a CEL "when" cannot be evaluated without it`);
}
