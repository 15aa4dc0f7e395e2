// Compares CEL libraries for Tekton's `when` (docs/tekton.md, "CEL"): conformance on cel-spec's test suites restricted
// to what a `when` can use, bundle size, and the time to load the bundle and evaluate a first expression.
//
//   npm install --prefix /tmp/cel-candidates @marcbachmann/cel-js@8.0.0 cel-js@0.8.2
//   node scripts/cel-compare.mjs /tmp/cel-candidates
//
// @bufbuild/cel and @bufbuild/cel-spec (the conformance data) come from this repository's node_modules.
import { build } from "esbuild";
import { execFileSync } from "node:child_process";
import { mkdtempSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const candidates = process.argv[2] ? resolve(process.argv[2]) : undefined;
const here = createRequire(import.meta.url);
const { tests } = here("@bufbuild/cel-spec/testdata/conformance.js");

const LIBRARIES = [
  { name: "@bufbuild/cel 0.6.1", from: process.cwd(), source: `const { run, isCelError } = require("@bufbuild/cel");
module.exports = (e) => { const r = run(e, {}); if (isCelError(r)) throw r; return r; };` },
  { name: "@marcbachmann/cel-js 8.0.0", from: candidates, source: `const { evaluate } = require("@marcbachmann/cel-js"); module.exports = (e) => evaluate(e, {});` },
  { name: "cel-js 0.8.2", from: candidates, source: `const { evaluate } = require("cel-js"); module.exports = (e) => evaluate(e, {});` },
];

// Suites of extension libraries, proto messages and two-variable macros: not in cel-go's cel.NewEnv(), which Tekton uses.
const SKIPPED = new Set(["bindings_ext", "block_ext", "encoders_ext", "math_ext", "string_ext", "proto2", "proto2_ext", "proto3",
  "enums", "optionals", "unknowns", "wrappers", "namespace", "dynamic", "macros2"]);

function conformance(evaluate) {
  let pass = 0;
  let total = 0;
  const walk = (suite) => {
    for (const t of suite.tests ?? []) {
      const o = t.original;
      if (o.bindings || o.container || o.typeEnv || o.disableMacros || o.disableCheck) continue;
      if (/google\.protobuf|TestAllTypes|cel\.expr/.test(o.expr)) continue;
      const wantError = "evalError" in o;
      if (!(o.value && "boolValue" in o.value) && !wantError) continue;
      total++;
      let got;
      let error;
      try {
        got = evaluate(o.expr);
      } catch (e) {
        error = e;
      }
      if (wantError ? error !== undefined || typeof got !== "boolean" : error === undefined && got === o.value.boolValue) pass++;
    }
    for (const s of suite.suites ?? []) if (!SKIPPED.has(s.name)) walk(s);
  };
  walk(tests);
  return `${pass}/${total}`;
}

const work = mkdtempSync(join(tmpdir(), "cel-compare-"));
console.log("| library | conformance (bool or error cases) | bundle (minified) | load + first eval, median of 5 |");
console.log("|---|---|---|---|");
for (const library of LIBRARIES) {
  if (!library.from) {
    console.log(`| ${library.name} | (not installed: give the candidates' folder) | | |`);
    continue;
  }
  const entry = join(library.from, `cel-compare-entry-${LIBRARIES.indexOf(library)}.cjs`);
  writeFileSync(entry, library.source);
  const out = join(work, `${LIBRARIES.indexOf(library)}.cjs`);
  await build({ entryPoints: [entry], outfile: out, bundle: true, platform: "node", format: "cjs", target: "node20", minify: true, legalComments: "none", logLevel: "error" });
  const score = conformance(createRequire(out)(out));
  const probe = `const t=process.hrtime.bigint();require(${JSON.stringify(out)})("'a'=='a'");console.log(Number(process.hrtime.bigint()-t)/1e6)`;
  const times = Array.from({ length: 5 }, () => Number(execFileSync(process.execPath, ["-e", probe], { env: { PATH: "/usr/bin:/bin" } }).toString()));
  times.sort((a, b) => a - b);
  console.log(`| ${library.name} | ${score} | ${Math.round(statSync(out).size / 1024)} KB | ${times[2].toFixed(1)} ms |`);
}
