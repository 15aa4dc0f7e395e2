// baton ends with _exit(2) once everything is written (src/process/exit.ts): Node's own exit shuts down its platform first,
// and that can deadlock (a V8 worker waiting for a main-thread GC while the main thread joins it), leaving a step that
// never exits. Seen from outside: Node's 'exit' listeners, which that shutdown path runs, do not run.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { cleanEnv, join, readJson, runBaton, tempDir } from "./helpers.js";

test("baton exits by _exit once the post file is written: Node's exit path (its 'exit' listeners, its platform shutdown) is skipped, the code kept", async () => {
  const dir = tempDir();
  const hook = join(dir, "hook.cjs");
  writeFileSync(hook, `process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(join(dir, "node-exit-ran"))}, ""));\n`);
  const exit = await runBaton(["--post-file", join(dir, "post"), "--", "sh", "-c", "exit 3"], {
    env: cleanEnv({ NODE_OPTIONS: `--require ${hook}` }),
  });
  assert.equal(exit.code, 3, exit.stderr);
  assert.equal((readJson(join(dir, "post.err")) as { exitCode: number }).exitCode, 3);
  assert.equal(existsSync(join(dir, "node-exit-ran")), false, "Node's exit path ran: baton ended by process.exit()");
});
