// What the command sees when it starts, under Debian's tini and under baton (the bundle on this Node, and the
// standalone build), each as PID 1 of a PID namespace of its own: every signal disposition at its default and an
// empty mask (tini's own `sigconf` test asks this of an init), the same umask, working folder, arguments, environment
// and descriptors. tini is the reference every init is held to; the engines' peers are in tekton.test.ts and
// argo.test.ts.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { BATON, cleanEnv, NO_STANDALONE, runBaton, STANDALONE, tempDir } from "../integration/helpers.js";
import { peer, probe } from "./peers.js";

interface Seen {
  argv: string[];
  env: string[];
  cwd: string;
  Umask: string;
  SigBlk: string;
  SigIgn: string;
  SigCgt: string;
  fds: Record<string, string>;
}

/** Runs the probe under `init` (the words that start it, then `--` and the probe) and returns what it reported. */
async function seenUnder(init: string[], dir: string, umask: string): Promise<Seen> {
  const out = join(tempDir(), "probe.json");
  const exit = await runBaton([...init, "--", probe(), "report"], {
    pid1: true,
    // Through the probe's `exec`: every signal at its default, whatever started the test (make leaves 32 ignored).
    baton: ["sh", "-c", `umask ${umask} && exec "$0" exec "$@"`, probe()],
    env: cleanEnv({ PROBE_OUT: out, HOME: "/home/step" }),
    cwd: dir,
  });
  assert.equal(exit.code, 0, exit.stderr);
  const lines = readFileSync(out, "utf8").trim().split("\n");
  assert.equal(lines.length, 1, "the probe reported once");
  return JSON.parse(lines[0]!) as Seen;
}

/** What a command may see differ by nature: the environment variables an init sets for itself are compared apart. */
function comparable(seen: Seen) {
  return {
    argv: seen.argv.slice(1),
    env: seen.env.filter((v) => !v.startsWith("_=") && !v.startsWith("PROBE_OUT=")).sort(),
    cwd: seen.cwd,
    umask: seen.Umask,
    blocked: seen.SigBlk,
    ignored: seen.SigIgn,
    caught: seen.SigCgt,
    fds: Object.keys(seen.fds).sort(),
  };
}

const builds: [string, string[], string | false][] = [
  ["the bundle", [process.execPath, BATON], false],
  ["the standalone build", [STANDALONE], NO_STANDALONE],
];

for (const umask of ["022", "077"]) {
  for (const [name, words, skip] of builds) {
    test(`${name} starts its command as tini does (umask ${umask}): default dispositions, empty mask`, { skip }, async () => {
      const tini = peer("tini");
      const dir = tempDir();
      const underTini = comparable(await seenUnder([tini.path, "-s"], dir, umask));
      const underBaton = comparable(await seenUnder(words, dir, umask));
      assert.equal(underTini.ignored, "0000000000000000", "tini's own reference");
      assert.deepEqual(underBaton, underTini);
    });
  }
}
