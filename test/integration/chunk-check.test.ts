// A chunk is checked against damage with the CRC-32 of node:zlib, which its decompression loads anyway, not with a
// SHA-256 from node:crypto: loading node:crypto was a fifth of what `baton emissary` added to a plain step's start
// (~8 M instructions, docs/performance.md). V8's log names every script a run loads, Node's built-ins among them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { BATON, cleanEnv, join, runBaton, tempDir } from "./helpers.js";

/** The Node built-ins (`node:...`) that a run of the bundle with `args` loaded, from V8's log. */
async function builtinsLoaded(args: string[], env: NodeJS.ProcessEnv): Promise<string[]> {
  const log = join(tempDir(), "v8.log");
  const exit = await runBaton(args, {
    baton: [process.execPath, "--log-function-events", `--logfile=${log}`, "--no-logfile-per-isolate", BATON],
    env: cleanEnv(env),
  });
  assert.equal(exit.code, 0, exit.stderr);
  return readFileSync(log, "utf8").split("\n").map((line) => line.split(","))
    .filter((f) => f[0] === "script-details" && f[2]!.startsWith("node:")).map((f) => f[2]!);
}

test("baton emissary loads its chunk (checked) without node:crypto", async () => {
  const root = tempDir();
  writeFileSync(join(root, "template"), JSON.stringify({ name: "main", container: { image: "x", command: ["true"] } }));
  const loaded = await builtinsLoaded(["emissary", "--", "true"], { BATON_ARGO_ROOT: root, ARGO_CONTAINER_NAME: "main" });
  assert.ok(loaded.includes("node:zlib"), `the chunk was not decompressed: ${loaded.join(", ")}`);
  assert.ok(!loaded.includes("node:crypto"), "node:crypto was loaded");
});
