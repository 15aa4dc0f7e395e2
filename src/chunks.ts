import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { BatonError } from "./errors.js";

// Code that only some steps need lives in files of its own beside the bundle, built by scripts/build.mjs: every step
// reads and parses dist/baton.cjs at start-up, and a feature's code inside it would cost every step (make bench, row 3)
// even when never run. dist/baton-tekton.cjs holds Tekton's features (credentials, $(steps...) substitution, when, the
// debug breakpoints), dist/baton-cel.cjs the CEL evaluator, dist/baton-init.cjs `baton init` and Tekton's
// subcommands. The standalone build ships them in its lib/ folder.
// Run from the sources (the unit tests), there are no chunk files: callers import the modules themselves.

// Callers test `typeof BATON_BUNDLED === "boolean"` themselves (scripts/build.mjs defines it): esbuild folds that
// test where it is written, and leaves out the sources' import in the branch it proves dead.

export const TEKTON_CHUNK = "baton-tekton.cjs";
export const CEL_CHUNK = "baton-cel.cjs";
export const INIT_CHUNK = "baton-init.cjs";
export const CHUNKS: readonly string[] = [TEKTON_CHUNK, CEL_CHUNK, INIT_CHUNK];

/** Loads a chunk file: beside the bundle, or in the standalone build's lib/ (found from execPath, as the reaper addon). */
export function requireChunk<T>(file: string): T {
  const sea = process.getBuiltinModule?.("node:sea");
  const folders = sea?.isSea()
    ? [dirname(process.execPath), join(dirname(process.execPath), "lib")]
    : [typeof __dirname === "string" ? __dirname : dirname(process.argv[1] ?? ".")];
  const path = folders.map((folder) => join(folder, file)).find((candidate) => existsSync(candidate));
  if (path === undefined) throw new BatonError(`${file} is missing from ${folders.join(" and ")}: baton is not installed whole`);
  // The standalone build's own require() knows only Node's built-in modules: a require rooted at the file loads it.
  const getBuiltin = (process as unknown as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  const { createRequire } = (getBuiltin ? getBuiltin("node:module") : require("node:module")) as typeof import("node:module");
  return createRequire(path)(path) as T;
}
