import { dirname } from "node:path";
import { BatonError, describeSystemError } from "../base/errors.js";
import { hostModule } from "./host-modules.js";
import { lazyBuiltin } from "../base/builtin.js";

// Code that only some steps need is carried inside the bundle as a payload that V8 does not parse: scripts/build.mjs
// appends trailing line comments holding, per chunk, a mark line and the chunk compressed with brotli in base64.
// Every step reads and pre-parses dist/baton.cjs at start-up, and a feature's code inside it as code would cost every
// step its pre-parse, while a comment is skipped at no measurable cost (measured: docs/design.md#start-up).
// The standalone build carries the same comment as a SEA asset, since it has no JavaScript file of its own to read.
//
// Each chunk has one loader beside its code (src/tekton/load.ts, src/init/load.ts, src/argo/load.ts,
// src/process/internal-error.ts; the CEL chunk's, src/tekton/cel-worker.ts, compiles it in its worker thread from
// chunkCode), which declares what the chunk provides (an interface its entry module must satisfy) and calls loadChunk
// with the chunk's name and the import of its entry: the import runs from the sources (the unit tests), and the build
// leaves it out of the bundle (scripts/build.mjs). BATON_BUNDLED, which the build defines, is tested here only.
//
// A chunk uses the bundle's own instances of the modules they share (errors, the file wait, this loader): the build
// leaves those imports out of the chunk as `require("baton-host:src/...")`, which chunkRequire answers from the
// bundle (src/process/host-modules.ts). So a BatonError thrown in a chunk is the bundle's BatonError, and
// state (the signal hub, the loaded chunks) exists once.

declare const BATON_BUNDLED: boolean | undefined;
/** Whether this is the bundle (scripts/build.mjs defines BATON_BUNDLED), or the sources run as they are. */
const BUNDLED = typeof BATON_BUNDLED === "boolean";

/** The name of the standalone build's asset that holds the payload (scripts/sea.mjs). */
const SEA_ASSET = "baton-chunks";
/** How a chunk's import of a module the bundle has is written (scripts/build.mjs). */
const HOST_PREFIX = "baton-host:";

const loaded = new Map<string, Promise<unknown>>();

/**
 * The chunk NAME (dist/baton-NAME.cjs in the payload), loaded once; `fromSources` imports its entry module when not
 * bundled. Any failure to load it is one BatonError, "baton is not installed whole", from every call.
 */
export function loadChunk<T>(name: string, fromSources: () => Promise<T>): Promise<T> {
  let chunk = loaded.get(name) as Promise<T> | undefined;
  if (chunk === undefined) {
    chunk = BUNDLED ? new Promise((resolve) => resolve(requireChunk<T>(name))) : fromSources();
    loaded.set(name, chunk);
  }
  return chunk;
}

/**
 * A chunk's JavaScript, checked, and the file name to compile it under (`FILE#baton-NAME.cjs`: src/process/
 * source-stack.ts finds its map by it), read once: what requireChunk compiles, and what a worker thread gets to
 * compile on its own (src/tekton/cel-worker.ts). undefined when run from the sources, where there is no payload.
 */
export function chunkCode(name: string): { source: string; filename: string } | undefined {
  if (!BUNDLED) return undefined;
  let code = codes.get(name);
  if (code === undefined) {
    code = readChunkCode(`baton-${name}.cjs`);
    codes.set(name, code);
  }
  return code;
}

const codes = new Map<string, { source: string; filename: string }>();

function readChunkCode(file: string): { source: string; filename: string } {
  // Only the standalone build (Node 24) can be a SEA; before Node 20.16 there is no getBuiltinModule, and before 20.12
  // node:sea has no isSea.
  const getBuiltin = (process as unknown as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  const sea = getBuiltin?.("node:sea") as typeof import("node:sea") | undefined;
  const standalone = sea?.isSea?.() === true;
  const bundle = standalone ? process.execPath : __filename;
  try {
    const text = standalone ? sea!.getAsset(SEA_ASSET, "utf8") : lazyBuiltin<typeof import("node:fs")>("node:fs").readFileSync(bundle, "latin1");
    return { source: chunkSource(text, file), filename: `${bundle}#${file}` };
  } catch (error) {
    const reason = error instanceof BatonError ? error.message : describeSystemError(error);
    throw new BatonError(`cannot load ${file} from ${bundle}: ${reason}: baton is not installed whole`);
  }
}

/** Compiles a chunk as a CommonJS module, its `baton-host:` imports answered by the bundle's own modules. */
function requireChunk<T>(name: string): T {
  const { source, filename } = chunkCode(name)!;
  const module = { exports: {} as T };
  const { compileFunction } = lazyBuiltin<typeof import("node:vm")>("node:vm");
  const wrapper = compileFunction(source, ["exports", "require", "module", "__filename", "__dirname"], { filename });
  // The chunk's own loads of Node's modules and of the native addon look where the bundle's do.
  const bundle = filename.slice(0, filename.lastIndexOf("#"));
  wrapper.call(module.exports, module.exports, chunkRequire, module, bundle, dirname(bundle));
  return module.exports;
}

/** The bundle's `require`, and the bundle's own modules for a chunk's `baton-host:` imports. */
function chunkRequire(id: string): unknown {
  if (!id.startsWith(HOST_PREFIX)) return require(id);
  const module = hostModule(id.slice(HOST_PREFIX.length));
  if (module === undefined) throw new Error(`the bundle has no module ${id}`);
  return module;
}

/**
 * The chunk's JavaScript from the text of the payload: `\n//@baton-chunk NAME SHA256 CRC32\n//BASE64\n` (scripts/build.mjs).
 * The check against damage is the CRC-32, from node:zlib, which the decompression has loaded already: the SHA-256 would
 * load node:crypto (~8 M instructions, a fifth of what `baton emissary` adds to a plain step's start: docs/performance.md).
 * A Node without zlib.crc32 (before 20.15) checks the SHA-256.
 */
function chunkSource(text: string, name: string): string {
  // The last mark: the payload follows all code, so a string in the code can never be taken for it.
  const mark = text.lastIndexOf(`\n//@baton-chunk ${name} `);
  const lineEnd = mark < 0 ? -1 : text.indexOf("\n", mark + 1);
  const dataEnd = lineEnd < 0 ? -1 : text.indexOf("\n", lineEnd + 1);
  if (dataEnd < 0 || !text.startsWith("//", lineEnd + 1)) throw new BatonError("its payload is not in the file");
  const [, , sha256, crc] = text.slice(mark + 1, lineEnd).split(" ");
  const zlib = lazyBuiltin<typeof import("node:zlib") & { crc32?: (data: Buffer) => number }>("node:zlib");
  // A bound on the output: a damaged stream must not claim gigabytes before the digest can refuse it.
  const source = zlib.brotliDecompressSync(Buffer.from(text.slice(lineEnd + 3, dataEnd), "base64"), { maxOutputLength: 16 << 20 });
  const intact = zlib.crc32 !== undefined
    ? zlib.crc32(source).toString(16).padStart(8, "0") === crc
    : lazyBuiltin<typeof import("node:crypto")>("node:crypto").createHash("sha256").update(source).digest("hex") === sha256;
  if (!intact) throw new BatonError("its payload is damaged");
  return source.toString("utf8");
}
