import { dirname } from "node:path";
import type { StepOptions } from "./cli/step-options.js";
import { BatonError, describeSystemError } from "./errors.js";
import { hostModules } from "./host-modules.js";
import type { DebugWait } from "./tekton/debug.js";
import type { CommandDecision } from "./tekton/step-features.js";
import type { CelEvaluator } from "./tekton/when.js";

// Code that only some steps need is carried inside the bundle as a payload that V8 does not parse: scripts/build.mjs
// appends a trailing block comment holding, per chunk, a mark line and the chunk compressed with brotli in base64.
// Every step reads and pre-parses dist/baton.cjs at start-up, and a feature's code inside it as code would cost every
// step (~8 M instructions for 20 KB), while a comment is skipped at no measurable cost (docs/design.md#start-up).
// The standalone build carries the same comment as a SEA asset, since it has no JavaScript file of its own to read.
// Run from the sources (the unit tests), there is no payload: the loader imports the chunk's entry module instead.
//
// A chunk uses the bundle's own instances of the modules they share (errors, the file wait, the addon's loader): the
// build leaves those imports out of the chunk as `require("baton-host:src/...")`, which the loader answers from the
// bundle (scripts/build.mjs). So a BatonError thrown in a chunk is the bundle's BatonError.

/** What each chunk provides: its entry module must satisfy this (the loader's source branch checks it). */
export interface Chunks {
  /** src/tekton/chunk.ts: Tekton's features that act around a step's command. */
  tekton: TektonChunk;
  /** src/tekton/cel-entry.ts and @bufbuild/cel (~280 KB): the CEL evaluator of a `when`. */
  cel: { evaluateCel: CelEvaluator };
  /** src/init/install.ts: `baton init` and Tekton's subcommands, which only an init container runs. */
  init: { runInstallCommand(name: string, args: readonly string[], env: NodeJS.ProcessEnv): number };
  /** src/source-stack.ts: an internal error's stack in src/ terms, with BATON_DEBUG=1 (src/internal-error.ts). */
  stack: { sourceStack(stack: string): string };
}

export interface TektonChunk {
  /** Before the wait: checks the credential secrets and the `when` JSON; returns what to do once all is checked. */
  prepareTektonFeatures(options: StepOptions, copyCredentials: boolean, warn: (message: string) => void): () => void;
  /** After the wait: $(steps...) substituted, `when` evaluated (CEL loaded through loadCel). */
  decideTektonCommand(options: StepOptions, loadCel: () => Promise<CelEvaluator>): Promise<CommandDecision>;
  /** Whether a --when holds a CEL entry (false when it does not parse: prepareTektonFeatures says why). */
  whenNeedsCel(when: string): boolean;
  /** -debug_before_step: whether to run the command. */
  waitBeforeStep(postFile: string, wait: DebugWait): Promise<boolean>;
  /** -breakpoint_on_failure: the exit code the user's script wrote. */
  waitForBreakpointExit(postFile: string, wait: DebugWait): Promise<number>;
}

export type ChunkName = keyof Chunks;

declare const BATON_BUNDLED: boolean | undefined;

/** The name of the standalone build's asset that holds the payload (scripts/sea.mjs). */
const SEA_ASSET = "baton-chunks";
/** How a chunk's import of a module the bundle has is written (scripts/build.mjs). */
const HOST_PREFIX = "baton-host:";

const loading = new Map<ChunkName, Promise<unknown>>();

/** The chunk, loaded once. Any failure to load it is one BatonError ("baton is not installed whole"). */
export function loadChunk<N extends ChunkName>(name: N): Promise<Chunks[N]> {
  let chunk = loading.get(name) as Promise<Chunks[N]> | undefined;
  if (chunk !== undefined) return chunk;
  // esbuild folds this test where it is written, and leaves the sources' imports in the other branch out of the bundle.
  if (typeof BATON_BUNDLED === "boolean") {
    chunk = new Promise((resolve) => resolve(requireChunk<Chunks[N]>(`baton-${name}.cjs`)));
  } else {
    // Typed as the contract: tsc checks that each entry module provides what its chunk must.
    const sources: { [K in ChunkName]: () => Promise<Chunks[K]> } = {
      tekton: () => import("./tekton/chunk.js"),
      cel: () => import("./tekton/cel-entry.js"),
      init: () => import("./init/install.js"),
      stack: () => import("./source-stack.js"),
    };
    chunk = sources[name]();
  }
  loading.set(name, chunk);
  return chunk;
}

/** Starts loading a chunk that the step will need, while it waits; a failure is told when the step asks for it. */
export function preloadChunk(name: ChunkName): void {
  loadChunk(name).catch(() => undefined);
}

type Builtin = <T>(id: string) => T;
// A static import would load these modules at every step's start: only a step that needs a chunk loads them.
const builtin: Builtin = (id) => {
  const get = (process as unknown as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  return (get ? get(id) : require(id)) as never;
};

/**
 * Reads a chunk: its payload found in the bundle's own file (or the standalone build's asset), checked against the
 * digest written beside it, decompressed and compiled as a CommonJS module.
 */
function requireChunk<T>(name: string): T {
  // Only the standalone build (Node 24) can be a SEA; before Node 20.16 there is no getBuiltinModule, and before 20.12
  // node:sea has no isSea.
  const getBuiltin = (process as unknown as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  const sea = getBuiltin?.("node:sea") as typeof import("node:sea") | undefined;
  const standalone = sea?.isSea?.() === true;
  const file = standalone ? process.execPath : __filename;
  let source: string;
  try {
    source = chunkSource(standalone ? sea!.getAsset(SEA_ASSET, "utf8") : builtin<typeof import("node:fs")>("node:fs").readFileSync(file, "latin1"), name);
  } catch (error) {
    const reason = error instanceof BatonError ? error.message : describeSystemError(error);
    throw new BatonError(`cannot load ${name} from ${file}: ${reason}: baton is not installed whole`);
  }
  const module = { exports: {} as T };
  const { compileFunction } = builtin<typeof import("node:vm")>("node:vm");
  const wrapper = compileFunction(source, ["exports", "require", "module", "__filename", "__dirname"], { filename: `${file}#${name}` });
  // The chunk's own loads (Node's modules, the reaper addon) look where the bundle's do.
  wrapper.call(module.exports, module.exports, chunkRequire, module, file, dirname(file));
  return module.exports;
}

/** The bundle's `require`, and the bundle's own modules for a chunk's `baton-host:` imports. */
function chunkRequire(id: string): unknown {
  if (!id.startsWith(HOST_PREFIX)) return require(id);
  const module = hostModules[id.slice(HOST_PREFIX.length)];
  if (module === undefined) throw new Error(`the bundle has no module ${id}`);
  return module;
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
