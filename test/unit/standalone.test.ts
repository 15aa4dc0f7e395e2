import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { standaloneLauncher, standaloneRoot } from "../../src/process/standalone.js";

function standaloneFolder(launcher = "baton"): string {
  const root = mkdtempSync(join(tmpdir(), "baton-standalone-"));
  mkdirSync(join(root, "lib"));
  for (const file of [launcher, "lib/baton-node", "lib/ld-linux-x86-64.so.2"]) writeFileSync(join(root, file), "");
  return root;
}

test("standaloneRoot finds the folder from every execPath the standalone build can have", (t) => {
  const root = standaloneFolder();
  t.after(() => rmSync(root, { recursive: true, force: true }));
  for (const execPath of ["lib/ld-linux-x86-64.so.2", "lib/baton-node", "baton"]) {
    assert.equal(standaloneRoot({ isSea: true, execPath: join(root, execPath), argv1: undefined }), root, execPath);
  }
});

test("standaloneRoot does not depend on the launcher's name (a copy made by Tekton's init SRC DST)", (t) => {
  const root = standaloneFolder("entrypoint");
  t.after(() => rmSync(root, { recursive: true, force: true }));
  assert.equal(standaloneRoot({ isSea: true, execPath: join(root, "entrypoint"), argv1: join(root, "entrypoint") }), root);
});

test("standaloneRoot is undefined when baton does not run as the standalone build", (t) => {
  const root = standaloneFolder();
  t.after(() => rmSync(root, { recursive: true, force: true }));
  assert.equal(standaloneRoot({ isSea: false, execPath: join(root, "lib/baton-node"), argv1: undefined }), undefined);
  assert.equal(standaloneRoot(), undefined, "the test runner itself is plain Node");
});

test("standaloneRoot is undefined for a single executable that is not in the folder layout", (t) => {
  const root = mkdtempSync(join(tmpdir(), "baton-standalone-"));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  writeFileSync(join(root, "baton"), "");
  assert.equal(standaloneRoot({ isSea: true, execPath: join(root, "baton"), argv1: join(root, "baton") }), undefined);
});

test("standaloneLauncher is the launcher that started baton, else ROOT/baton", () => {
  const runtime = (argv1: string | undefined) => ({ isSea: true, execPath: "/opt/b/lib/ld-linux-x86-64.so.2", argv1 });
  assert.equal(standaloneLauncher("/opt/b", runtime("/opt/b/entrypoint")), "/opt/b/entrypoint");
  assert.equal(standaloneLauncher("/opt/b", runtime("/opt/b/lib/baton-node")), "/opt/b/baton");
  assert.equal(standaloneLauncher("/opt/b", runtime(undefined)), "/opt/b/baton");
});
