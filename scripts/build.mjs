// Bundles src/main.ts into dist/baton.cjs: one self-contained CommonJS file that runs on Node >= 20
// with nothing beside it. CJS because it starts ~5 ms faster than an ESM bundle.
// Code that only some steps run is built apart and appended to the bundle as a payload inside a trailing block
// comment, which V8 skips without parsing (src/process/chunks.ts loads a chunk from it when a step needs it):
//   baton-tekton.cjs  Tekton's credentials, $(steps...) substitution, when, debug breakpoints (src/tekton/chunk.ts)
//   baton-cel.cjs     the CEL evaluator of a `when` (src/tekton/cel-entry.ts and @bufbuild/cel)
//   baton-init.cjs    `baton init` and Tekton's subcommands (src/init/install.ts), run only by init containers
//   baton-argo.cjs    `baton emissary` and `baton kill` (src/argo/chunk.ts), run only in Argo Workflows' pods
// Each is a mark line `@baton-chunk NAME SHA256` and the chunk compressed with brotli, in base64 on one line (base64
// has no `*/`, so the comment cannot end early). Compressed, the payload is ~90 KB instead of ~300 KB: V8 keeps the
// whole file's text in memory, in every step.
import { build } from "esbuild";
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, rmSync, readFileSync, writeFileSync } from "node:fs";
import { brotliCompressSync, constants } from "node:zlib";

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
  logLevel: "warning",
  write: false,
};
const CHUNKS = [
  ["baton-tekton.cjs", "src/tekton/chunk.ts"],
  ["baton-cel.cjs", "src/tekton/cel-entry.ts"],
  ["baton-init.cjs", "src/init/install.ts"],
  ["baton-argo.cjs", "src/argo/chunk.ts"],
];
/** The line that opens the payload's comment; scripts/sea.mjs cuts the bundle there (it searches for this line). */
const PAYLOAD_START = "/*baton-chunks\n";

const result = await build({ ...common, entryPoints: ["src/main.ts"], outfile: "dist/baton.cjs", banner: { js: "#!/usr/bin/env node" } });
let payload = PAYLOAD_START;
for (const [name, entry] of CHUNKS) {
  const { outputFiles } = await build({ ...common, entryPoints: [entry], outfile: `dist/${name}` });
  const source = outputFiles[0].contents;
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
// V8 keeps the bundle's text for the life of every step (functions compile lazily, from it), in one byte per character
// only while every character is Latin-1: one Greek mu made it two, +160 KiB of RssAnon in every waiting step. ASCII,
// the simpler rule, is checked here (esbuild escapes non-ASCII in strings, not in regular expression literals).
const firstNonAscii = result.outputFiles[0].contents.findIndex((byte) => byte > 0x7f);
if (firstNonAscii >= 0) {
  const around = Buffer.from(result.outputFiles[0].contents.subarray(Math.max(0, firstNonAscii - 40), firstNonAscii + 10)).toString();
  throw new Error(`dist/baton.cjs would hold a non-ASCII character (write it as a \\u escape in src/): ...${around}...`);
}
// write: false above, so nothing has made dist/ yet on a clean clone.
mkdirSync("dist", { recursive: true });
writeFileSync("dist/baton.cjs", Buffer.concat([result.outputFiles[0].contents, Buffer.from(`${payload}*/\n`)]));
chmodSync("dist/baton.cjs", 0o755); // a mode given to writeFileSync applies only when it creates the file
// Chunk files that an older build left in dist/: nothing reads them.
for (const [name] of CHUNKS) rmSync(`dist/${name}`, { force: true });
if (process.argv.includes("--analyze")) {
  const { analyzeMetafile } = await import("esbuild");
  console.log(await analyzeMetafile(result.metafile));
}
