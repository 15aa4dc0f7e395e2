// docs/reference.md states the contract; these checks fail when the code grows an environment variable or a post-file
// reason that the page does not state, or the page keeps one the code no longer has. (Flags: help-reference.test.ts.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");
const reference = readFileSync(join(ROOT, "docs/reference.md"), "utf8");

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|c)$/.test(e.name))
    .map((e) => readFileSync(join(e.parentPath, e.name), "utf8"));
}

/** The section of reference.md under `## title`, up to the next `## `. */
function section(title: string): string {
  const start = reference.indexOf(`\n## ${title}\n`);
  assert.ok(start >= 0, `docs/reference.md has no "## ${title}"`);
  const end = reference.indexOf("\n## ", start + 1);
  return reference.slice(start, end < 0 ? undefined : end);
}

test("every environment variable baton reads is in docs/reference.md's table, and every one there is read", () => {
  const read = new Set<string>();
  for (const text of sources("src")) {
    for (const m of text.matchAll(/\benv(?:\?)?\.([A-Z][A-Z0-9_]+)|getenv\("([A-Z][A-Z0-9_]+)"\)/g)) read.add(m[1] ?? m[2]);
  }
  read.delete("PATH"); // the launcher finds its folder on PATH without /proc; the command gets PATH as it is
  const rows = [...section("Environment variables").matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map((m) => m[1]);
  assert.ok(read.has("BATON_EVENTS"), "found the variables in src/");
  assert.deepEqual([...read].filter((v) => !rows.includes(v)).sort(), [], "read by baton but not in docs/reference.md");
  assert.deepEqual(rows.filter((v) => !read.has(v)).sort(), [], "in docs/reference.md but not read by baton");
});

test("every post-file reason in src/handoff/post-file.ts is in docs/reference.md's table, and only those", () => {
  const type = /export type Reason =([^;]+);/.exec(readFileSync(join(ROOT, "src/handoff/post-file.ts"), "utf8"));
  assert.ok(type, "src/handoff/post-file.ts declares the Reason type");
  const reasons = [...type[1].matchAll(/"(\w+)"/g)].map((m) => m[1]).sort();
  const rows = [...section("Post file").matchAll(/^\| `(\w+)` \| `POST/gm)].map((m) => m[1]).sort();
  assert.ok(reasons.length >= 10);
  assert.deepEqual(rows, reasons);
});
