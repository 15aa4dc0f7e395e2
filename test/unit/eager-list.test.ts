// scripts/eager-functions.mjs: the one list of the functions V8 compiles with the bundle, and the build step that
// wraps them (docs/design.md#eager-functions). Whether V8 does compile them early is the integration test's to see
// (test/integration/eager-functions.test.ts); here: the list names real functions, and the wrapping is right.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import ts from "typescript";
import { EAGER_FUNCTIONS, eagerFunctionsIn, makeEager } from "../../scripts/eager-functions.mjs";

const ROOT = resolve(import.meta.dirname, "../..");

test("each function the list names is in its file, once", () => {
  assert.ok(EAGER_FUNCTIONS.size > 20, "the list is nearly empty");
  for (const [file, names] of EAGER_FUNCTIONS) {
    assert.equal(new Set(names).size, names.length, `${file} lists a name twice`);
    assert.doesNotThrow(() => eagerFunctionsIn(file, readFileSync(join(ROOT, file), "utf8"), names), file);
  }
});

test("the wrapped files keep every line where it was and still parse", () => {
  for (const [file, names] of EAGER_FUNCTIONS) {
    const text = readFileSync(join(ROOT, file), "utf8");
    const eager = makeEager(file, text, names);
    assert.equal(eager.split("\n").length, text.split("\n").length, file);
    const source = ts.createSourceFile(file, eager, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
    const diagnostics = (source as unknown as { parseDiagnostics: ts.Diagnostic[] }).parseDiagnostics;
    assert.deepEqual(diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n")), [], file);
    const { functions } = eagerFunctionsIn(file, eager, names);
    for (const node of functions) assert.ok(ts.isParenthesizedExpression(node.parent), `${file}: ${node.name!.text} is not wrapped`);
  }
});

test("the wrapping: a declaration becomes a const, an expression gets parentheses, a wrapped one is left alone", () => {
  const text = [
    "export async function a<T>(x: T): Promise<T> {",
    "  return x;",
    "}",
    "function b() {}",
    "on('exit', function c(code: number) { void code; });",
    "const o = { d: function d() {}, e: (function e() {}) };",
  ].join("\n");
  assert.equal(
    makeEager("x.ts", text, ["a", "b", "c", "d", "e"]),
    [
      "export const a = (async function a<T>(x: T): Promise<T> {",
      "  return x;",
      "});",
      "const b = (function b() {});",
      "on('exit', (function c(code: number) { void code; }));",
      "const o = { d: (function d() {}), e: (function e() {}) };",
    ].join("\n"),
  );
  assert.throws(() => makeEager("x.ts", text, ["f"]), /x.ts has 0 functions named f/);
  assert.throws(() => makeEager("x.ts", `${text}\nfunction b() {}`, ["b"]), /x.ts has 2 functions named b/);
});

test("src/ has no `// Eager:` tag left: an eager function is listed in scripts/eager-functions.mjs", () => {
  const tagged = readdirSync(join(ROOT, "src"), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts"))
    .filter((file) => /^\s*\/\/ Eager:/m.test(readFileSync(join(ROOT, "src", file), "utf8")));
  assert.deepEqual(tagged, []);
});
