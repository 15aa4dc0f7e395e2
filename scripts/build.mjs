// Bundles src/main.ts into dist/baton.cjs: one self-contained CommonJS file that runs on Node >= 20
// with nothing beside it. CJS because it starts ~5 ms faster than an ESM bundle.
// Code that only some steps run is built apart and appended to the bundle as a payload inside a trailing block
// comment, which V8 skips without parsing (src/chunks.ts loads a chunk from it when a step needs it):
//   baton-tekton.cjs  Tekton's credentials, $(steps...) substitution, when, debug breakpoints (src/tekton/chunk.ts)
//   baton-cel.cjs     the CEL evaluator of a `when` (src/tekton/cel-entry.ts and @bufbuild/cel)
//   baton-init.cjs    `baton init` and Tekton's subcommands (src/init/install.ts), run only by init containers
//   baton-stack.cjs   an internal error's stack mapped to src/ with BATON_DEBUG=1 (src/source-stack.ts)
// Each is a mark line `@baton-chunk NAME SHA256` and the chunk compressed with brotli, in base64 on one line (base64
// has no `*/`, so the comment cannot end early). Compressed, the payload is ~90 KB instead of ~300 KB: V8 keeps the
// whole file's text in memory, in every step.
import { build } from "esbuild";
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, rmSync, readFileSync, writeFileSync } from "node:fs";
import { relative } from "node:path";
import { brotliCompressSync, constants } from "node:zlib";

const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));

const common = {
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  minify: true,
  legalComments: "none",
  // BATON_BUNDLED: src/chunks.ts loads chunks instead of importing the sources (which esbuild then leaves out).
  define: { BATON_VERSION: JSON.stringify(version), BATON_BUNDLED: "true" },
  metafile: true,
  // External maps (dist/NAME.map, without the sources' text): read only by BATON_DEBUG=1 (src/source-stack.ts), never
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
  ["baton-stack.cjs", "src/source-stack.ts"],
];
/** The line that opens the payload's comment; scripts/sea.mjs cuts the bundle there (it searches for this line). */
const PAYLOAD_START = "/*baton-chunks\n";
/** A chunk's import of a module the bundle has (src/chunks.ts answers it with the bundle's own instance). */
const HOST_PREFIX = "baton-host:";

// A chunk shares the bundle's modules instead of carrying copies (a copy's BatonError would not be the bundle's, a
// copy's state not the bundle's). First the bundle, to learn which modules it holds; then each chunk, its imports of
// those left out as `require("baton-host:src/...")`; then the bundle again, with src/host-modules.ts holding each of
// those modules by its path, where src/chunks.ts finds them when it loads a chunk.
const mainOptions = { ...common, entryPoints: ["src/main.ts"], outfile: "dist/baton.cjs", banner: { js: "#!/usr/bin/env node" } };
const first = await build({ ...mainOptions, plugins: [hostModules([])] });
const inBundle = new Set(Object.keys(first.metafile.inputs).filter((path) => path.startsWith("src/")));
const shared = new Set();
const chunks = [];
for (const [name, entry] of CHUNKS) {
  const { outputFiles } = await build({ ...common, entryPoints: [entry], outfile: `dist/${name}`, plugins: [fromHost(inBundle, shared)] });
  chunks.push([name, output(outputFiles, name), output(outputFiles, `${name}.map`)]);
}
const result = await build({ ...mainOptions, plugins: [hostModules([...shared].sort())] });
const added = Object.keys(result.metafile.inputs).filter((path) => path.startsWith("src/") && !inBundle.has(path));
if (added.length > 0) throw new Error(`build.mjs: the bundle grew by ${added.join(", ")} when it gave its modules to the chunks`);

let payload = PAYLOAD_START;
for (const [name, source] of chunks) {
  const digest = createHash("sha256").update(source).digest("hex");
  const compressed = brotliCompressSync(source, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
      [constants.BROTLI_PARAM_LGWIN]: constants.BROTLI_MAX_WINDOW_BITS,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_SIZE_HINT]: source.length,
    },
  });
  payload += `@baton-chunk ${name} ${digest}\n${compressed.toString("base64")}\n`;
}
// write: false above, so nothing has made dist/ yet on a clean clone.
mkdirSync("dist", { recursive: true });
writeFileSync("dist/baton.cjs", Buffer.concat([output(result.outputFiles, "baton.cjs"), Buffer.from(`${payload}*/\n`)]));
writeFileSync("dist/baton.cjs.map", output(result.outputFiles, "baton.cjs.map"));
for (const [name, , map] of chunks) writeFileSync(`dist/${name}.map`, map);
chmodSync("dist/baton.cjs", 0o755); // a mode given to writeFileSync applies only when it creates the file
// Chunk files that an older build left in dist/: nothing reads them.
for (const [name] of CHUNKS) rmSync(`dist/${name}`, { force: true });
if (process.argv.includes("--analyze")) {
  const { analyzeMetafile } = await import("esbuild");
  console.log(await analyzeMetafile(result.metafile));
}

/** The contents of the output file NAME of a build. */
function output(outputFiles, name) {
  const file = outputFiles.find((candidate) => candidate.path.endsWith(`/${name}`));
  if (file === undefined) throw new Error(`build.mjs: esbuild wrote no ${name}`);
  return file.contents;
}

/** In a chunk's build: an import of a module that the bundle holds becomes `require("baton-host:PATH")`. */
function fromHost(inBundle, shared) {
  return {
    name: "baton-from-host",
    setup(build) {
      build.onResolve({ filter: /^\.\.?\// }, async (args) => {
        if (args.pluginData === "baton-resolving") return undefined;
        const resolved = await build.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: "baton-resolving" });
        if (resolved.errors.length > 0) return { errors: resolved.errors };
        const path = relative(process.cwd(), resolved.path);
        if (!inBundle.has(path)) return { path: resolved.path };
        shared.add(path);
        return { path: `${HOST_PREFIX}${path}`, external: true };
      });
    },
  };
}

/** In the bundle's build: src/host-modules.ts exports `hostModules`, each shared module by its path. */
function hostModules(paths) {
  return {
    name: "baton-host-modules",
    setup(build) {
      build.onLoad({ filter: /[\\/]src[\\/]host-modules\.ts$/ }, () => ({
        loader: "ts",
        resolveDir: process.cwd(),
        contents:
          paths.map((path, i) => `import * as m${i} from ${JSON.stringify(`./${path}`)};\n`).join("") +
          `export const hostModules = {${paths.map((path, i) => `${JSON.stringify(path)}: m${i}`).join(", ")}};\n`,
      }));
    },
  };
}
