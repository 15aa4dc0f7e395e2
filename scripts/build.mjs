// Bundles src/main.ts into dist/baton.cjs: one self-contained CommonJS file that runs on Node >= 20
// with no node_modules beside it. CJS because it starts ~5 ms faster than an ESM bundle.
// The CEL evaluator (src/tekton/cel-entry.ts and @bufbuild/cel, ~400 KB) is a second file, dist/baton-cel.cjs, that
// src/tekton/load-cel.ts requires only for a step with a CEL `when`: inside the bundle, every step would parse it.
import { build } from "esbuild";
import { chmodSync, readFileSync } from "node:fs";

const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));

const result = await build({
  entryPoints: ["src/main.ts"],
  outfile: "dist/baton.cjs",
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  minify: true,
  legalComments: "none",
  banner: { js: "#!/usr/bin/env node" },
  define: { BATON_VERSION: JSON.stringify(version), BATON_CEL_FILE: JSON.stringify("baton-cel.cjs") },
  metafile: true,
  logLevel: "warning",
});
chmodSync("dist/baton.cjs", 0o755);
await build({
  entryPoints: ["src/tekton/cel-entry.ts"],
  outfile: "dist/baton-cel.cjs",
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  minify: true,
  legalComments: "none",
  logLevel: "warning",
});
if (process.argv.includes("--analyze")) {
  const { analyzeMetafile } = await import("esbuild");
  console.log(await analyzeMetafile(result.metafile));
}
