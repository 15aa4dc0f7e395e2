// Bundles src/main.ts into dist/baton.cjs: one self-contained CommonJS file that runs on Node >= 20
// with nothing beside it. CJS because it starts faster than an ESM bundle (README.md, Dependencies).
// Code that only some steps run is built apart and appended to the bundle as a payload in trailing line comments,
// which V8 skips without parsing (src/process/chunks.ts loads a chunk from it when a step needs it):
//   baton-tekton.cjs  Tekton's credentials, $(steps...) substitution, when, debug breakpoints (src/tekton/chunk.ts)
//   baton-cel.cjs     the CEL evaluator of a `when` (src/tekton/cel-entry.ts and @bufbuild/cel)
//   baton-init.cjs    `baton init` and Tekton's subcommands (src/init/install.ts), run only by init containers
//   baton-argo.cjs    `baton emissary` and `baton kill` (src/argo/chunk.ts), run only in Argo Workflows' pods
//   baton-stack.cjs   an internal error's stack mapped to src/ with BATON_DEBUG=1 (src/process/source-stack.ts)
//   baton-trace.cjs   the spans and their export, loaded only when tracing is on (src/trace/chunk.ts, docs/tracing.md)
// Each is a mark line `@baton-chunk NAME SHA256 CRC32` (the loader checks the CRC-32, or the SHA-256 on a Node without
// zlib.crc32) and the chunk compressed with brotli, in base64 on one line. Compressed, because V8 keeps the whole
// file's text in memory, in every step.
//
// The file's shape, so that a copy cut short at any byte past its first line of code says so in one line instead of
// Node's SyntaxError (docs/design.md#a-bundle-cut-short):
//   #!/usr/bin/env node
//   {...}                             the guard (scripts/bundle-guard.cjs, minified, on one line), the only code
//   //LINE 2 ...                      the program as esbuild wrote it but for its `#!` line, every line behind `//`
//   //baton-chunks                    the payload: `//@baton-chunk NAME SHA256 CRC32`, then `//BASE64`, per chunk
//   //baton-end START LENGTH          the end mark: where the program's lines are (scripts/bundle-layout.mjs reads it)
// The guard knows the file's size and its end mark (written into it here), checks both, and compiles the program with
// its first line empty (where the `#!` line was), so that its lines and columns are those of baton.cjs.map.
import { build, transform } from "esbuild";
import { bundleLayout } from "./bundle-layout.mjs";
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, rmSync, readFileSync, writeFileSync } from "node:fs";
import { relative } from "node:path";
import { brotliCompressSync, constants, crc32 } from "node:zlib";
import { EAGER_FUNCTIONS, eagerFunctionsPlugin } from "./eager-functions.mjs";

const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));

const common = {
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  minify: true,
  legalComments: "none",
  // BATON_BUNDLED: src/process/chunks.ts loads chunks instead of importing the sources (which esbuild then leaves out).
  define: { BATON_VERSION: JSON.stringify(version), BATON_BUNDLED: "true" },
  metafile: true,
  // External maps (dist/NAME.map, without the sources' text): read only by BATON_DEBUG=1 (src/process/source-stack.ts), never
  // named in the code (no sourceMappingURL), so that nothing else looks for them.
  sourcemap: "external",
  sourcesContent: false,
  logLevel: "warning",
  write: false,
};
const CHUNKS = [
  ["baton-tekton.cjs", "src/tekton/chunk.ts"],
  ["baton-cel.cjs", "src/tekton/cel-entry.ts"],
  ["baton-init.cjs", "src/init/install.ts"],
  ["baton-argo.cjs", "src/argo/chunk.ts"],
  ["baton-stack.cjs", "src/process/source-stack.ts"],
  ["baton-trace.cjs", "src/trace/chunk.ts"],
];
/** The line that opens the payload; scripts/sea.mjs cuts the bundle there (it searches for this line). */
const PAYLOAD_START = "//baton-chunks\n";

/** A chunk's import of a module the bundle has (src/process/chunks.ts answers it with the bundle's own instance). */
const HOST_PREFIX = "baton-host:";

// A chunk shares the bundle's modules instead of carrying copies (a copy's BatonError would not be the bundle's, a
// copy's state not the bundle's). First the bundle, to learn which modules it holds; then each chunk, its imports of
// those left out as `require("baton-host:src/...")`; then the bundle again, with src/process/host-modules.ts holding
// each of those modules by its path, where src/process/chunks.ts finds them when it loads a chunk.
const mainOptions = { ...common, entryPoints: ["src/main.ts"], outfile: "dist/baton.cjs", banner: { js: "#!/usr/bin/env node" } };
// Every build compiles the functions listed in scripts/eager-functions.mjs with the bundle (docs/design.md#eager-functions).
const eagerLoaded = new Set();
const eager = eagerFunctionsPlugin(process.cwd(), eagerLoaded);
const first = await build({ ...mainOptions, plugins: [chunkBoundary(new Set(), new Map()), hostModules(new Map()), eager] });
const inBundle = new Set(sources(first));
/** Each module of the bundle that a chunk imports -> the names imported from it. */
const shared = new Map();
const chunks = [];
for (const [name, entry] of CHUNKS) {
  const imports = new Map();
  const plugins = [chunkBoundary(inBundle, imports), eager];
  const { outputFiles } = await build({ ...common, entryPoints: [entry], outfile: `dist/${name}`, plugins });
  chunks.push([name, output(outputFiles, name), output(outputFiles, `${name}.map`)]);
  // The names it imports from each of those modules, read from the same chunk built as ESM, so that the bundle keeps
  // only what chunks use.
  const esm = await build({ ...common, format: "esm", sourcemap: false, minify: false, entryPoints: [entry], outfile: `dist/${name}.mjs`, plugins });
  for (const [, names, path] of esm.outputFiles[0].text.matchAll(/^import \{([^}]*)\} from "baton-host:([^"]+)";$/gm)) {
    for (const imported of names.split(",").map((item) => item.trim().split(/\s+as\s+/)[0]).filter(Boolean)) imports.get(path).add(imported);
  }
  // The CEL chunk runs in a worker thread (src/tekton/cel-worker.ts), where the bundle's modules are not.
  if (name === "baton-cel.cjs" && imports.size > 0) throw new Error(`build.mjs: ${name} imports ${[...imports.keys()].join(", ")}`);
  for (const [path, names] of imports) shared.set(path, new Set([...(shared.get(path) ?? []), ...names]));
}
const unnamed = [...shared].filter(([, names]) => names.size === 0).map(([path]) => path);
if (unnamed.length > 0) throw new Error(`build.mjs: a chunk imports ${unnamed.join(", ")} other than by names`);
const result = await build({ ...mainOptions, plugins: [chunkBoundary(new Set(), new Map()), hostModules(shared), eager] });
const unbuilt = [...EAGER_FUNCTIONS.keys()].filter((file) => !eagerLoaded.has(file));
if (unbuilt.length > 0) throw new Error(`build.mjs: scripts/eager-functions.mjs lists ${unbuilt.join(", ")}, which no build took in`);
const added = sources(result).filter((path) => !inBundle.has(path));
if (added.length > 0) throw new Error(`build.mjs: the bundle grew by ${added.join(", ")} when it gave its modules to the chunks`);

let payload = PAYLOAD_START;
for (const [name, source] of chunks) {
  const digest = `${createHash("sha256").update(source).digest("hex")} ${crc32(source).toString(16).padStart(8, "0")}`;
  const compressed = brotliCompressSync(source, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
      [constants.BROTLI_PARAM_LGWIN]: constants.BROTLI_MAX_WINDOW_BITS,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_SIZE_HINT]: source.length,
    },
  });
  payload += `//@baton-chunk ${name} ${digest}\n//${compressed.toString("base64")}\n`;
}
// V8 keeps the bundle's text for the life of every step (functions compile lazily, from it), in one byte per character
// only while every character is Latin-1: one Greek mu made it two, +160 KiB of RssAnon in every waiting step. ASCII,
// the simpler rule, is checked here (esbuild escapes non-ASCII in strings, not in regular expression literals).
const code = output(result.outputFiles, "baton.cjs");
const firstNonAscii = code.findIndex((byte) => byte > 0x7f);
if (firstNonAscii >= 0) {
  const around = Buffer.from(code.subarray(Math.max(0, firstNonAscii - 40), firstNonAscii + 10)).toString();
  throw new Error(`dist/baton.cjs would hold a non-ASCII character (write it as a \\u escape in src/): ...${around}...`);
}
// write: false above, so nothing has made dist/ yet on a clean clone.
mkdirSync("dist", { recursive: true });
writeFileSync("dist/baton.cjs", await guardedBundle(Buffer.from(code).toString("latin1"), payload), "latin1");
writeFileSync("dist/baton.cjs.map", output(result.outputFiles, "baton.cjs.map"));
for (const [name, , map] of chunks) writeFileSync(`dist/${name}.map`, map);
chmodSync("dist/baton.cjs", 0o755); // a mode given to writeFileSync applies only when it creates the file
// Chunk files that an older build left in dist/: nothing reads them.
for (const [name] of CHUNKS) rmSync(`dist/${name}`, { force: true });
if (process.argv.includes("--analyze")) {
  const { analyzeMetafile } = await import("esbuild");
  console.log(await analyzeMetafile(result.metafile));
}

/**
 * The bundle as it is written: the `#!` line, the guard, the program's other lines in `//` comments, the payload, the
 * end mark. The guard holds the file's size and the program's place in it, and its own length depends on theirs
 * (esbuild writes numbers as short as it can): made again until nothing moves.
 */
async function guardedBundle(program, payload) {
  if (program.includes("\r")) throw new Error("build.mjs: the bundle's code holds a carriage return, which would end its `//` comment");
  const hashbang = program.slice(0, program.indexOf("\n") + 1);
  if (hashbang !== "#!/usr/bin/env node\n" || !program.endsWith("\n")) throw new Error("build.mjs: esbuild's output does not start with the #! line or end with a newline");
  // Every line of the program but the `#!` line behind `//`, each after its `\n`: the guard makes each `\n//` a `\n`
  // again, which gives back the program with its first line empty.
  const commented = `\n//${program.slice(hashbang.length, -1).replaceAll("\n", "\n//")}`;
  const guardSource = readFileSync(new URL("./bundle-guard.cjs", import.meta.url), "utf8");
  let guard = "";
  let text = "";
  for (let round = 0; round < 5; round++) {
    // The end mark: a copy whose size is right but whose last line is not this (a preallocated file, zeros) is damaged.
    const end = `//baton-end ${hashbang.length + guard.length} ${commented.length}\n`;
    const size = hashbang.length + guard.length + commented.length + 1 + payload.length + end.length;
    const define = {
      BATON_SIZE: String(size),
      BATON_PROGRAM_START: String(hashbang.length + guard.length),
      BATON_PROGRAM_LENGTH: String(commented.length),
      BATON_END: JSON.stringify(end),
    };
    // No template literals: esbuild would write a `\n` in one as a line break, and the guard must be one line.
    const made = (await transform(guardSource, { minify: true, legalComments: "none", target: "node20", supported: { "template-literal": false }, define })).code.trimEnd();
    text = `${hashbang}${made}${commented}\n${payload}${end}`;
    if (made === guard) break;
    guard = made;
  }
  const layout = bundleLayout(text);
  if (!/^\{[^\n]*\}$/.test(guard) || Buffer.byteLength(text, "latin1") !== text.length || layout.program !== `\n${program.slice(hashbang.length, -1)}`) {
    throw new Error("build.mjs: the guard did not settle into one block on one line before the program");
  }
  return text;
}

/** The contents of the output file NAME of a build. */
function output(outputFiles, name) {
  const file = outputFiles.find((candidate) => candidate.path.endsWith(`/${name}`));
  if (file === undefined) throw new Error(`build.mjs: esbuild wrote no ${name}`);
  return file.contents;
}

/** The src/ modules a build took in. */
function sources(result) {
  return Object.keys(result.metafile.inputs).filter((path) => path.startsWith("src/"));
}

/**
 * Where a chunk ends. Every build: a chunk loader's `import()` of a chunk's entry (run only from the sources,
 * src/process/chunks.ts) stays out, as an external that nothing requires; a static import of an entry is refused,
 * since it would put the chunk into the bundle. A chunk's build: an import of a module that the bundle holds
 * (`inBundle`) becomes `require("baton-host:PATH")`, and PATH is added to `shared`.
 */
function chunkBoundary(inBundle, shared) {
  const entries = new Set(CHUNKS.map(([, entry]) => entry));
  return {
    name: "baton-chunk-boundary",
    setup(build) {
      build.onResolve({ filter: /^\.\.?\// }, async (args) => {
        if (args.pluginData === "baton-resolving") return undefined;
        const options = { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: "baton-resolving" };
        const resolved = await build.resolve(args.path, options);
        if (resolved.errors.length > 0) return { errors: resolved.errors };
        const path = relative(process.cwd(), resolved.path);
        if (entries.has(path) && args.kind !== "entry-point") {
          if (args.kind === "dynamic-import") return { path: `baton-sources:${path}`, external: true };
          return { errors: [{ text: `${args.importer} imports the chunk entry ${path}: load it with loadChunk` }] };
        }
        if (!inBundle.has(path)) return { path: resolved.path };
        if (!shared.has(path)) shared.set(path, new Set());
        return { path: `${HOST_PREFIX}${path}`, external: true };
      });
    },
  };
}

/**
 * In the bundle's build: src/process/host-modules.ts, whose hostModule(PATH) gives a chunk the bundle's exports of
 * PATH that chunks import, made only when a chunk asks (getters: an export that changes is seen as it is).
 */
function hostModules(shared) {
  const paths = [...shared.keys()].sort();
  const imports = paths.map((path, i) => `import * as m${i} from ${JSON.stringify(`./${path}`)};\n`).join("");
  const cases = paths.map((path, i) => {
    const getters = [...shared.get(path)].sort().map((name) => `${name}: m${i}.${name}`);
    return `    case ${JSON.stringify(path)}: return { ${getters.join(", ")} };\n`;
  });
  return {
    name: "baton-host-modules",
    setup(build) {
      build.onLoad({ filter: /[\\/]src[\\/]process[\\/]host-modules\.ts$/ }, () => ({
        loader: "ts",
        resolveDir: process.cwd(),
        contents: `${imports}export function hostModule(path: string): unknown {\n  switch (path) {\n${cases.join("")}  }\n  return undefined;\n}\n`,
      }));
    },
  };
}
