import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { standaloneRoot } from "../../src/standalone.js";

function standaloneFolder(): string {
  const root = mkdtempSync(join(tmpdir(), "baton-standalone-"));
  mkdirSync(join(root, "lib"));
  for (const file of ["baton", "lib/baton-node", "lib/ld-linux-x86-64.so.2"]) writeFileSync(join(root, file), "");
  return root;
}

test("standaloneRoot finds the folder from every execPath the standalone build can have", (t) => {
  const root = standaloneFolder();
  t.after(() => rmSync(root, { recursive: true, force: true }));
  for (const execPath of ["lib/ld-linux-x86-64.so.2", "lib/baton-node", "baton"]) {
    assert.equal(standaloneRoot({ isSea: true, execPath: join(root, execPath) }), root, execPath);
  }
});

test("standaloneRoot is undefined when baton does not run as the standalone build", (t) => {
  const root = standaloneFolder();
  t.after(() => rmSync(root, { recursive: true, force: true }));
  assert.equal(standaloneRoot({ isSea: false, execPath: join(root, "lib/baton-node") }), undefined);
  assert.equal(standaloneRoot(), undefined, "the test runner itself is plain Node");
});

test("standaloneRoot is undefined for a single executable that is not in the folder layout", (t) => {
  const root = mkdtempSync(join(tmpdir(), "baton-standalone-"));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  writeFileSync(join(root, "baton"), "");
  assert.equal(standaloneRoot({ isSea: true, execPath: join(root, "baton") }), undefined);
});
