// A signal in the standalone build's first milliseconds, when baton is not PID 1 (a shared process namespace, `docker
// run` without --init): as PID 1 the kernel drops a signal that has no handler yet, anywhere else its default action
// applies. SIGUSR1 while the loader mapped Node killed baton with no post file; the launcher blocks the signals baton
// listens to before anything else, and Node keeps SIGUSR1 blocked through its own start (scripts/sea/launcher.c).
// early-signal.c sends the signal at offsets counted from the launcher's exec of the loader (a point the process has
// provably reached), so each run tests the same window, not the scheduler.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { NO_STANDALONE, STANDALONE, existsSync, join, readJson, repetitions, runBaton, tempDir } from "./helpers.js";

const LOADER = "/ld-linux-x86-64.so.2";

function compileProbe(): string | undefined {
  const probe = join(tempDir(), "early-signal");
  try {
    execFileSync("cc", ["-O2", "-o", probe, join(import.meta.dirname, "early-signal.c")], { stdio: "ignore" });
    return probe;
  } catch {
    return undefined;
  }
}

test("the standalone build, not PID 1: SIGUSR1 at every offset 0-4 ms after the launcher's exec of the loader leaves it alive, a post file each time", { skip: NO_STANDALONE }, async (t) => {
  const probe = compileProbe();
  if (probe === undefined) return t.skip("no C compiler (cc) for test/integration/early-signal.c");
  const dir = tempDir();
  const post = join(dir, "out");
  const deaths: string[] = [];
  for (let round = 0; round < repetitions(2); round++) {
    for (let offset = 0; offset <= 4000; offset += 100) {
      rmSync(post, { force: true });
      rmSync(`${post}.err`, { force: true });
      const how = execFileSync(probe, ["10", String(offset), LOADER, STANDALONE, "--post-file", post, "--", "true"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
      // Alive: baton ended by itself and handed on. POST.err would do too: a signal that reached the command (baton's
      // listeners in place already) fails it, as it should.
      const handedOn = existsSync(post) || existsSync(`${post}.err`);
      if (!how.startsWith("exit ") || !handedOn) deaths.push(`${offset} µs: ${how}, ${handedOn ? "a post file" : "no post file"}`);
    }
  }
  assert.deepEqual(deaths, []);
});

test("the standalone build: the command still starts with no signal blocked or ignored", { skip: NO_STANDALONE }, async () => {
  const dir = tempDir();
  const exit = await runBaton(["--post-file", join(dir, "out"), "--", "grep", "-E", "^Sig(Blk|Ign):", "/proc/self/status"], { baton: [STANDALONE] });
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(exit.stdout, "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
  assert.equal(readJson(join(dir, "out")).reason, "Completed");
});
