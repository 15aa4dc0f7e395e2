// Argo's debug-pause marker wait (src/argo/wait-marker.ts) when the folder watch refuses at once, while it is being
// made: a folder on the way that this uid may not search. The wait then rejects with the refusal, not with a
// ReferenceError from state declared after the closure that used it (the watch, before it was returned). Run as
// nobody (root may search anything), through tsx, in a process of its own.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const WAIT_MARKER = resolve(import.meta.dirname, "../../src/argo/wait-marker.ts");
/** Run from the sources, the addon is looked for beside the script (src/addon/load-addon.ts). */
const ADDON = resolve(import.meta.dirname, "../../dist/baton-reaper.node");

test("a marker under a folder nobody may search: the wait rejects with the refusal", { skip: process.getuid?.() !== 0 && "needs root to run as nobody" }, (t) => {
  const dir = mkdtempSync(join(tmpdir(), "baton-marker-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  chmodSync(dir, 0o755);
  const hidden = mkdtempSync(join(tmpdir(), "baton-marker-hidden-")); // 0700, root's
  t.after(() => rmSync(hidden, { recursive: true, force: true }));
  const script = join(dir, "wait.mts");
  copyFileSync(ADDON, join(dir, "baton-reaper.node"));
  writeFileSync(
    script,
    `import { waitForMarker } from ${JSON.stringify(WAIT_MARKER)};\n` +
      `waitForMarker(${JSON.stringify(join(hidden, "ctr", "before"))}, new AbortController().signal, () => {})` +
      `.then(() => console.log("resolved"), (error) => console.log("rejected: " + error.message));\n`,
  );
  chmodSync(script, 0o644);
  const out = execFileSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, "--import", "tsx", script], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 20_000,
  });
  assert.equal(out.trim(), `rejected: cannot watch ${hidden}: permission denied (EACCES)`);
});
