import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { test } from "node:test";

// src/'s layers (docs/development.md "Layout"), top to bottom. A module imports only from its own folder and from
// the folders of the layers below its own; folders that share a layer do not import each other. Type-only imports
// count: they are dependencies too, and a type that two layers need belongs in the lower one.
const LAYERS: readonly (readonly string[])[] = [
  ["main.ts"],
  ["sidecar", "init", "argo"],
  ["step"],
  ["tekton"],
  ["run", "report"],
  ["handoff"],
  ["trace"],
  ["cli"],
  ["process"],
  ["addon"],
  ["base"],
];

// Upward edges known and accepted for now, each "from -> to" (none: keep it so, or say why here).
const KNOWN_EDGES = new Set<string>();

const SRC = resolve(import.meta.dirname, "../../src");

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [relative(SRC, path)] : [];
  });
}

// Every relative specifier: import/export ... from "x", import "x", import("x") and typeof import("x").
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(["'])(\.{1,2}\/[^"']+)\1/g;

/** The src/ modules `file` imports (src-relative .ts paths). */
function importsOf(file: string, text: string): string[] {
  return [...text.matchAll(SPECIFIER)].map((match) =>
    relative(SRC, resolve(SRC, dirname(file), match[2]!.replace(/\.js$/, ".ts"))),
  );
}

function folderOf(file: string): string {
  return file.includes("/") ? file.slice(0, file.indexOf("/")) : file;
}

function layerOf(file: string): number {
  return LAYERS.findIndex((layer) => layer.includes(folderOf(file)));
}

function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) graph.set(file, importsOf(file, readFileSync(join(SRC, file), "utf8")));
  return graph;
}

/** Why `from` may not import `to`, or undefined when it may. */
function upwardImport(from: string, to: string): string | undefined {
  if (folderOf(from) === folderOf(to)) return undefined;
  const [above, below] = [layerOf(from), layerOf(to)];
  if (above < below) return undefined;
  return above === below ? "imports a folder of its own layer" : "imports a layer above its own";
}

/** Each cycle once, as the path of files that closes it. */
function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (file: string) => {
    state.set(file, "open");
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === "open") cycles.push([...path.slice(path.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(file, "done");
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return cycles;
}

function withoutKnownEdges(graph: Map<string, string[]>): Map<string, string[]> {
  const kept = (file: string, to: string) => !KNOWN_EDGES.has(`${file} -> ${to}`);
  return new Map([...graph].map(([file, imports]) => [file, imports.filter((to) => kept(file, to))]));
}

test("every file in src/ sits in a declared layer, and every declared folder exists", () => {
  const files = sourceFiles(SRC);
  assert.deepEqual(files.filter((file) => layerOf(file) < 0), [], "files outside LAYERS");
  const folders = new Set(files.map(folderOf));
  assert.deepEqual(LAYERS.flat().filter((folder) => !folders.has(folder)), [], "declared folders that do not exist");
});

test("every import of src/ goes down the layers: no upward import, none between folders of one layer", () => {
  const graph = withoutKnownEdges(importGraph());
  const edges = [...graph].flatMap(([from, imports]) => imports.map((to) => ({ from, to })));
  assert.ok(edges.length > 100, `the parser found ${edges.length} imports in src/: too few to be all of them`);
  for (const { to } of edges) assert.ok(graph.has(to), `an import resolves to ${to}, which is not a file of src/`);
  const wrong = edges.flatMap(({ from, to }) => {
    const why = upwardImport(from, to);
    return why === undefined ? [] : [`${from} -> ${to}: ${why}`];
  });
  assert.deepEqual(wrong, []);
});

test("docs/development.md's Layout names every folder of src/, in the order of the layers", () => {
  const doc = readFileSync(resolve(SRC, "../docs/development.md"), "utf8");
  const block = /## Layout\n\n```\n([\s\S]*?)```/.exec(doc)?.[1];
  assert.ok(block, "development.md has a Layout block");
  const named = [...block.matchAll(/^src\/(\S+?)\/?\s/gm)].map((match) => match[1]!);
  assert.deepEqual(named, LAYERS.flat(), "the src/ lines of the Layout block, top to bottom");
});

test("src/ has no import cycle", () => {
  assert.deepEqual(cyclesOf(withoutKnownEdges(importGraph())).map((cycle) => cycle.join(" -> ")), []);
});

test("the known edges are still there (remove a fixed one from KNOWN_EDGES)", () => {
  const graph = importGraph();
  for (const edge of KNOWN_EDGES) {
    const [from, to] = edge.split(" -> ") as [string, string];
    assert.ok(graph.get(from)?.includes(to), `${edge} is gone: take it out of KNOWN_EDGES`);
  }
});

test("the checks catch what they are for: an upward import, an import within a layer, a cycle", () => {
  assert.match(upwardImport("base/errors.ts", "cli/step-options.ts") ?? "", /above/);
  assert.match(upwardImport("run/output-tee.ts", "report/events.ts") ?? "", /own layer/);
  assert.equal(upwardImport("step/run-step.ts", "run/output-tee.ts"), undefined);
  assert.equal(upwardImport("step/run-step.ts", "step/outcome.ts"), undefined);
  const source = [
    'import { a } from "../base/errors.js";',
    'import type { B } from "./y.js";',
    'export { c } from "../run/z.js";',
    'await import("../sidecar/main.js");',
    'import "../process/signals.js";',
    'type T = typeof import("./w.js");',
  ].join("\n");
  assert.deepEqual(importsOf("step/x.ts", source), [
    "base/errors.ts", "step/y.ts", "run/z.ts", "sidecar/main.ts", "process/signals.ts", "step/w.ts",
  ]);
  const cyclic = new Map([["a.ts", ["b.ts"]], ["b.ts", ["c.ts"]], ["c.ts", ["a.ts"]], ["d.ts", ["a.ts"]]]);
  assert.deepEqual(cyclesOf(cyclic), [["a.ts", "b.ts", "c.ts", "a.ts"]]);
  assert.deepEqual(cyclesOf(new Map([["a.ts", ["b.ts"]], ["b.ts", []]])), []);
});
