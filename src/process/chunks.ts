import { dirname } from "node:path";
import { BatonError, describeSystemError } from "../base/errors.js";

// Code that only some steps need is carried inside the bundle as a payload that V8 does not parse: scripts/build.mjs
// appends a trailing block comment holding, per chunk, a mark line and the chunk compressed with brotli in base64.
// Every step reads and pre-parses dist/baton.cjs at start-up, and a feature's code inside it as code would cost every
// step (~8 M instructions for 20 KB), while a comment is skipped at no measurable cost (docs/design.md#start-up).
// The chunks: baton-tekton.cjs holds Tekton's features (credentials, $(steps...) substitution, when, the debug
// breakpoints), baton-cel.cjs the CEL evaluator, baton-init.cjs `baton init` and Tekton's subcommands, baton-argo.cjs
// `baton emissary` and `baton kill` (Argo Workflows). The standalone
// build carries the same comment as a SEA asset, since it has no JavaScript file of its own to read.
// Run from the sources (the unit tests), there is no payload: callers import the modules themselves.

// Callers test `typeof BATON_BUNDLED === "boolean"` themselves (scripts/build.mjs defines it): esbuild folds that
// test where it is written, and leaves out the sources' import in the branch it proves dead.

export const TEKTON_CHUNK = "baton-tekton.cjs";
export const CEL_CHUNK = "baton-cel.cjs";
export const INIT_CHUNK = "baton-init.cjs";
export const ARGO_CHUNK = "baton-argo.cjs";
/** The name of the standalone build's asset that holds the payload (scripts/sea.mjs). */
const SEA_ASSET = "baton-chunks";

type Builtin = <T>(id: string) => T;
// A static import would load these modules at every step's start: only a step that needs a chunk loads them.
const builtin: Builtin = (id) => {
  const get = (process as unknown as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  return (get ? get(id) : require(id)) as never;
};

/**
 * Loads a chunk: its payload found in the bundle's own file (or the standalone build's asset), checked against the
 * digest written beside it, decompressed and compiled as a CommonJS module. Any failure is one BatonError.
 */
export function requireChunk<T>(name: string): T {
  const { source, file } = chunkCode(name);
  const module = { exports: {} as T };
  const { compileFunction } = builtin<typeof import("node:vm")>("node:vm");
  const wrapper = compileFunction(source, ["exports", "require", "module", "__filename", "__dirname"], { filename: `${file}#${name}` });
  // The chunk's own loads (the Tekton chunk loads the CEL chunk, the reaper addon) look where the bundle's do.
  wrapper.call(module.exports, module.exports, require, module, file, dirname(file));
  return module.exports;
}

/**
 * A chunk's JavaScript, checked, and the file it came from: what requireChunk compiles, and what a worker thread gets
 * to compile on its own (src/tekton/cel-worker.ts).
 */
export function chunkCode(name: string): { source: string; file: string } {
  // Only the standalone build (Node 24) can be a SEA; before Node 20.16 there is no getBuiltinModule, and before 20.12
  // node:sea has no isSea.
  const getBuiltin = (process as unknown as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  const sea = getBuiltin?.("node:sea") as typeof import("node:sea") | undefined;
  const standalone = sea?.isSea?.() === true;
  const file = standalone ? process.execPath : __filename;
  try {
    return { source: chunkSource(standalone ? sea!.getAsset(SEA_ASSET, "utf8") : builtin<typeof import("node:fs")>("node:fs").readFileSync(file, "latin1"), name), file };
  } catch (error) {
    const reason = error instanceof BatonError ? error.message : describeSystemError(error);
    throw new BatonError(`cannot load ${name} from ${file}: ${reason}: baton is not installed whole`);
  }
}

/** The chunk's JavaScript from the text of the payload: `\n@baton-chunk NAME SHA256\nBASE64\n` (scripts/build.mjs). */
function chunkSource(text: string, name: string): string {
  // The last mark: the payload follows all code, so a string in the code can never be taken for it.
  const mark = text.lastIndexOf(`\n@baton-chunk ${name} `);
  const lineEnd = mark < 0 ? -1 : text.indexOf("\n", mark + 1);
  const dataEnd = lineEnd < 0 ? -1 : text.indexOf("\n", lineEnd + 1);
  if (dataEnd < 0) throw new BatonError("its payload is not in the file");
  const digest = text.slice(mark + 1, lineEnd).split(" ")[2];
  const { brotliDecompressSync } = builtin<typeof import("node:zlib")>("node:zlib");
  // A bound on the output: a damaged stream must not claim gigabytes before the digest can refuse it.
  const source = brotliDecompressSync(Buffer.from(text.slice(lineEnd + 1, dataEnd), "base64"), { maxOutputLength: 16 << 20 });
  const { createHash } = builtin<typeof import("node:crypto")>("node:crypto");
  if (createHash("sha256").update(source).digest("hex") !== digest) throw new BatonError("its payload is damaged");
  return source.toString("utf8");
}
