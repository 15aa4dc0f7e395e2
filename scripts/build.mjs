// Bundles src/main.ts into dist/baton.cjs: one self-contained CommonJS file that runs on Node >= 20
// with no node_modules beside it. CJS because it starts ~5 ms faster than an ESM bundle.
// Code that only some steps run is in chunk files beside it (src/chunks.ts), which the bundle requires when a step
// needs them: every step reads and parses dist/baton.cjs, so code inside it costs every step's start-up.
//   dist/baton-tekton.cjs  Tekton's credentials, $(steps...) substitution, when, debug breakpoints (src/tekton/chunk.ts)
//   dist/baton-cel.cjs     the CEL evaluator of a `when` (src/tekton/cel-entry.ts and @bufbuild/cel)
//   dist/baton-init.cjs    `baton init` and Tekton's subcommands (src/init/install.ts), run only by init containers
import { build } from "esbuild";
import { chmodSync, readFileSync } from "node:fs";

const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));

const common = {
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  minify: true,
  legalComments: "none",
  // BATON_BUNDLED: src/chunks.ts loads chunk files instead of importing the sources (which esbuild then leaves out).
  define: { BATON_VERSION: JSON.stringify(version), BATON_BUNDLED: "true" },
  metafile: true,
  logLevel: "warning",
};

const result = await build({
  ...common,
  entryPoints: ["src/main.ts"],
  outfile: "dist/baton.cjs",
  banner: { js: "#!/usr/bin/env node" },
});
chmodSync("dist/baton.cjs", 0o755);
await build({ ...common, entryPoints: ["src/tekton/chunk.ts"], outfile: "dist/baton-tekton.cjs" });
await build({ ...common, entryPoints: ["src/tekton/cel-entry.ts"], outfile: "dist/baton-cel.cjs" });
await build({ ...common, entryPoints: ["src/init/install.ts"], outfile: "dist/baton-init.cjs" });
if (process.argv.includes("--analyze")) {
  const { analyzeMetafile } = await import("esbuild");
  console.log(await analyzeMetafile(result.metafile));
}
