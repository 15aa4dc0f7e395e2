// Pure logic of the Tekton features: result decoding and reference parsing (Tekton's ParamValue.UnmarshalJSON and
// resultref), `when` (TestAllowExec), the CEL evaluator against cel-spec's conformance data, the tknz: codec, and Go's
// URL rules for git credentials.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { inflateRawSync } from "node:zlib";
import { tmpdir } from "node:os";
import { createRequire } from "node:module";
import { join } from "node:path";
import { decodeResult, parseReference, StepResults, SubstitutionError } from "../../src/tekton/substitute.js";
import { evaluateWhen, parseWhen } from "../../src/tekton/when.js";
import { evaluateCel } from "../../src/tekton/cel-entry.js";
import { compress, decompress } from "../../src/report/compress.js";
import { composeMessage } from "../../src/report/termination-message.js";
import { escapeUserinfo, urlHasPath, urlWithUserPassword } from "../../src/tekton/go-url.js";
import { BatonError } from "../../src/base/errors.js";

test("result values decode as Tekton's ParamValue: array, object, JSON string, else raw", () => {
  assert.deepEqual(decodeResult(`["a","b"]`), { type: "array", value: ["a", "b"] });
  assert.deepEqual(decodeResult(`{"k":"v"}`), { type: "object", value: { k: "v" } });
  assert.deepEqual(decodeResult(`"x"`), { type: "string", value: "x" });
  assert.deepEqual(decodeResult("Hello"), { type: "string", value: "Hello" });
  assert.deepEqual(decodeResult("hello\n"), { type: "string", value: "hello\n" });
  assert.deepEqual(decodeResult("[1,2]"), { type: "string", value: "[1,2]" });
  assert.deepEqual(decodeResult(`{"k":1}`), { type: "string", value: `{"k":1}` });
  assert.deepEqual(decodeResult(""), { type: "string", value: "" });
});

test("references parse as Tekton's ParseStepExpression", () => {
  assert.deepEqual(parseReference("$(steps.s.results.r)"), { step: "s", result: "r", kind: "string" });
  assert.deepEqual(parseReference("$(steps.s.results.r[2])"), { step: "s", result: "r", kind: "index", index: 2 });
  assert.deepEqual(parseReference("$(steps.s.results.r[*])"), { step: "s", result: "r", kind: "all" });
  assert.deepEqual(parseReference("$(steps.s.results.r.k)"), { step: "s", result: "r", kind: "key", key: "k" });
  assert.throws(() => parseReference("$(steps.s.results.r.k.x)"), SubstitutionError);
  assert.throws(() => parseReference("$(steps.s.outputs.r)"), SubstitutionError);
});

test("StepResults: strings, indexes, keys, a lone [*] expands, [*] in other text and out of range are errors", () => {
  const dir = mkdtempSync(join(tmpdir(), "baton-steps-"));
  mkdirSync(join(dir, "step-foo/results"), { recursive: true });
  writeFileSync(join(dir, "step-foo/results/arr"), `["Hello","World"]`);
  writeFileSync(join(dir, "step-foo/results/obj"), `{"hello":"World"}`);
  const results = new StepResults(dir);
  assert.equal(results.inString("$(steps.foo.results.arr[1])!"), "World!");
  assert.equal(results.inString("$(steps.foo.results.obj.hello)/$(steps.foo.results.obj.none)"), "World/");
  assert.equal(results.inString("x$(steps.foo.results.arr[*])"), "x", "env and when input: an array gives its string part, empty");
  assert.deepEqual(results.inListItem("$(steps.foo.results.arr[*])"), ["Hello", "World"]);
  assert.throws(() => results.inListItem("$(steps.foo.results.arr[*])bbb"), /must be used alone/);
  assert.throws(() => results.inString("$(steps.foo.results.arr[2])"), /index 2 is out of range/);
  assert.throws(() => results.inString("$(steps.foo.results.obj[0])"), /index 0 is out of range: .* has 0 element/);
});

test("TestAllowExec: in/notin/cel", async () => {
  const dir = mkdtempSync(join(tmpdir(), "baton-when-"));
  const run = (expressions: object[]) => evaluateWhen(parseWhen(JSON.stringify(expressions)), dir, async (cels) => cels.every(evaluateCel));
  assert.equal(await run([{ input: "foo", operator: "in", values: ["foo", "bar"] }]), true);
  assert.equal(await run([{ input: "foobar", operator: "notin", values: ["foobar"] }]), false);
  assert.equal(await run([{ input: "foobar", operator: "in", values: ["foobar"] }, { input: "foo", operator: "notin", values: ["bar"] }]), true);
  assert.equal(await run([{ cel: "'foo'=='foo'" }]), true);
  assert.equal(await run([{ cel: "'foo'=='foo'" }, { cel: "'xxx'!='xxx'" }]), false);
  assert.equal(await run([{ input: "a", values: ["b"] }]), true, "no operator: not-in, as Tekton's isTrue");
  await assert.rejects(run([{ cel: "'foo'" }]), /gives the string "foo", not a bool/);
  await assert.rejects(run([{ cel: "foo==foo" }]), /CEL expression "foo==foo" failed/);
  await assert.rejects(run([{ cel: "'a' +" }]), /does not compile/);
  // No CEL entry: the evaluator is never asked for.
  assert.equal(await evaluateWhen(parseWhen(`[{"input":"a","operator":"in","values":["a"]}]`), dir, async () => assert.fail("loaded CEL")), true);
  assert.deepEqual(parseWhen("null"), []);
  assert.throws(() => parseWhen(`[{"values":"x"}]`), (e: unknown) => e instanceof BatonError && e.exitCode === 2);
});

test("CEL: cel-spec's conformance suites a `when` can meet (bool or error results), at least 549 of 554", () => {
  const require = createRequire(import.meta.url);
  const { tests } = require("@bufbuild/cel-spec/testdata/conformance.js") as { tests: Suite };
  interface Suite { name: string; suites?: Suite[]; tests?: { original: Record<string, unknown> & { expr: string; value?: { boolValue?: boolean } } }[] }
  const skipped = new Set(["bindings_ext", "block_ext", "encoders_ext", "math_ext", "string_ext", "proto2", "proto2_ext", "proto3",
    "enums", "optionals", "unknowns", "wrappers", "namespace", "dynamic", "macros2"]);
  let pass = 0;
  let total = 0;
  const walk = (suite: Suite) => {
    for (const { original: o } of suite.tests ?? []) {
      if (o.bindings || o.container || o.typeEnv || o.disableMacros || o.disableCheck || /google\.protobuf|TestAllTypes|cel\.expr/.test(o.expr)) continue;
      const wantError = "evalError" in o;
      if (!(o.value && "boolValue" in o.value) && !wantError) continue;
      total++;
      let got: boolean | undefined;
      try {
        got = evaluateCel(o.expr);
      } catch {
        got = undefined;
      }
      if (wantError ? got === undefined : got === o.value!.boolValue) pass++;
    }
    for (const s of suite.suites ?? []) if (!skipped.has(s.name)) walk(s);
  };
  walk(tests);
  assert.equal(total, 554);
  assert.ok(pass >= 549, `${pass}/${total}`);
});

test("tknz: raw DEFLATE, unpadded base64, decodable by inflateRaw; used only when shorter", () => {
  const json = JSON.stringify(Array.from({ length: 20 }, (_, i) => ({ key: `result-${i}`, value: "sha256:" + "a".repeat(64), type: 1 })));
  const packed = compress(json);
  assert.match(packed, /^tknz:[A-Za-z0-9+/]+$/);
  assert.equal(inflateRawSync(Buffer.from(packed.slice(5), "base64")).toString(), json);
  assert.equal(decompress(packed), json);
  assert.throws(() => decompress("tknz:abc="), /not unpadded base64/);
  const small = composeMessage("", { startedAt: "t", results: [] }, { compressed: true });
  assert.equal(small.text, `[{"key":"StartedAt","value":"t","type":3}]`);
  const big = composeMessage("", { startedAt: "t", results: Array.from({ length: 60 }, (_, i) => [`r${i}`, "x".repeat(80)]) }, { compressed: true });
  assert.equal(big.tooLarge, undefined, "over 4096 bytes as JSON, it fits compressed");
  assert.ok(big.text.startsWith("tknz:"));
  // sidecar-logs: results, step results and artifacts stay out.
  const sidecar = composeMessage("", { startedAt: "t", results: [["r", "v"]], stepResults: [["s", "v"]], taskArtifacts: ["/a", "{}"] }, { withoutResults: true });
  assert.equal(sidecar.text, `[{"key":"StartedAt","value":"t","type":3}]`);
});

test("Go's net/url, as git credentials go through it", () => {
  assert.equal(urlWithUserPassword("https://github.com", "u", "p"), "https://u:p@github.com");
  assert.equal(urlWithUserPassword("https://old@github.com/a?b#c", "u", "p"), "https://u:p@github.com/a?b#c");
  assert.equal(urlWithUserPassword("github.com", "foo", "BestEver"), "//foo:BestEver@github.com");
  assert.equal(urlWithUserPassword("https://h/x?", "u", "p"), "https://u:p@h/x?");
  assert.equal(escapeUserinfo("a:b@c/d?e f$&+,;=~"), "a%3Ab%40c%2Fd%3Fe%20f$&+,;=~");
  assert.equal(urlHasPath("https://github.com/"), false);
  assert.equal(urlHasPath("https://github.com/org/repo"), true);
  assert.equal(urlHasPath("gitlab.com"), true);
});
