import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { test } from "node:test";
import ts from "typescript";

// No function in src/ is longer than one screen (MAX_LINES, from its first line to its closing brace, comments within
// included): the next maintainer reads a function whole before changing it. A longer one is split into helpers named
// for what they do (docs/development.md "Layout"). The TypeScript is measured from its syntax tree (every function,
// arrow and method, nested ones too: a closure is read as part of its function and counted there as well); the C of
// the addon by its top-level definitions (a line that opens with the return type, `{` ending the signature, `}` alone).

const MAX_LINES = 80;
const SRC = resolve(import.meta.dirname, "../../src");

function filesOf(folder: string, extension: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return filesOf(path, extension);
    return entry.name.endsWith(extension) ? [path] : [];
  });
}

/** Every function of a TypeScript file: "file:line name" -> its length in lines. */
export function typeScriptFunctions(path: string, text: string): Map<string, number> {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found = new Map<string, number>();
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body !== undefined) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      found.set(`${relative(SRC, path)}:${first + 1} ${nameOf(node)}`, last - first + 1);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function nameOf(node: ts.Node): string {
  const named = node as { name?: ts.Node };
  if (named.name !== undefined && ts.isIdentifier(named.name)) return named.name.text;
  const parent = node.parent;
  if (parent !== undefined && ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  return "(anonymous)";
}

/** Every top-level function of a C file, as the addon writes them: "file:line name" -> its length in lines. */
export function cFunctions(path: string, text: string): Map<string, number> {
  const found = new Map<string, number>();
  const lines = text.split("\n");
  let open: { line: number; name: string } | undefined;
  lines.forEach((line, index) => {
    const signature = /^[A-Za-z_][\w\s*]*?\b(\w+)\s*\([^;]*\)\s*\{\s*$/.exec(line);
    if (open === undefined && signature !== null) open = { line: index, name: signature[1]! };
    else if (open !== undefined && line.startsWith("}")) {
      found.set(`${relative(SRC, path)}:${open.line + 1} ${open.name}`, index - open.line + 1);
      open = undefined;
    }
  });
  return found;
}

function tooLong(functions: Map<string, number>): string[] {
  return [...functions].filter(([, lines]) => lines > MAX_LINES).map(([where, lines]) => `${where}: ${lines} lines`);
}

test(`no TypeScript function in src/ is over ${MAX_LINES} lines`, () => {
  const functions = new Map<string, number>();
  for (const path of filesOf(SRC, ".ts")) for (const entry of typeScriptFunctions(path, readFileSync(path, "utf8"))) functions.set(...entry);
  assert.ok(functions.size > 300, `only ${functions.size} functions found: the walk is broken`);
  assert.deepEqual(tooLong(functions), []);
});

test(`no C function of the addon is over ${MAX_LINES} lines`, () => {
  const functions = new Map<string, number>();
  for (const path of filesOf(SRC, ".c")) for (const entry of cFunctions(path, readFileSync(path, "utf8"))) functions.set(...entry);
  assert.ok(functions.size > 20, `only ${functions.size} functions found: the walk is broken`);
  assert.deepEqual(tooLong(functions), []);
});

test("the measure counts a function from its first line to its closing brace, nested ones too", () => {
  const body = Array.from({ length: MAX_LINES - 2 }, (_, i) => `  const a${i} = ${i};`).join("\n");
  const text = `export function fits() {\n${body}\n}\nconst outer = () => {\n  const inner = function () {\n${body}\n  x();\n  };\n};\n`;
  const functions = typeScriptFunctions(join(SRC, "x.ts"), text);
  assert.equal(functions.get("x.ts:1 fits"), MAX_LINES);
  assert.equal(functions.get(`x.ts:${MAX_LINES + 1} outer`), MAX_LINES + 3);
  assert.equal(functions.get(`x.ts:${MAX_LINES + 2} inner`), MAX_LINES + 1);
  assert.deepEqual(tooLong(functions), [`x.ts:${MAX_LINES + 1} outer: ${MAX_LINES + 3} lines`, `x.ts:${MAX_LINES + 2} inner: ${MAX_LINES + 1} lines`]);
  const c = cFunctions(join(SRC, "x.c"), `static int f(int a) {\n${body}\n}\nint g(void) {\n  return 0;\n}\n`);
  assert.deepEqual([...c], [["x.c:1 f", MAX_LINES], [`x.c:${MAX_LINES + 1} g`, 3]]);
});
