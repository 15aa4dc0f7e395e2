// The state a command starts in: every signal at its default disposition and none blocked (SigIgn and SigBlk 0 in
// /proc/PID/status), as under tini (`tini -s -- probe`), Tekton's entrypoint and Argo's emissary; on every path baton
// starts one by (a step, with its output captured, Tekton's argument vector, the emissary with and without its capture
// files, a sidecar), as PID 1 and not, from the bundle (with and without its addon) and the standalone build.
// The probe is grep reading its own /proc/self/status: exec'd directly, it changes neither.
import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync } from "node:fs";
import { BATON, IS_ROOT, NO_STANDALONE, STANDALONE, cleanEnv, join, runBaton, tempDir, type StartOptions } from "./helpers.js";
import { EMISSARY } from "./argo-helpers.js";

const PROBE = ["grep", "-E", "^Sig(Ign|Blk):", "/proc/self/status"];
const CLEAN = "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n";

interface SpawnPath {
  name: string;
  /** baton's arguments around the probe; DIR is a fresh folder. */
  args(dir: string): string[];
  env?(dir: string): NodeJS.ProcessEnv;
}

const PATHS: SpawnPath[] = [
  { name: "a step", args: (dir) => ["--post-file", join(dir, "post"), "--", ...PROBE] },
  { name: "a step with --stdout-path", args: (dir) => ["--post-file", join(dir, "post"), "--stdout-path", join(dir, "out"), "--", ...PROBE] },
  {
    name: "Tekton's argument vector",
    args: (dir) => ["-post_file", join(dir, "post"), "-termination_path", join(dir, "termination"), "-entrypoint", PROBE[0]!, "--", ...PROBE.slice(1)],
  },
  {
    name: "the emissary",
    args: () => [...EMISSARY, ...PROBE],
    env: (dir) => ({ BATON_ARGO_ROOT: dir, ARGO_CONTAINER_NAME: "main", ARGO_INCLUDE_SCRIPT_OUTPUT: "false", ARGO_TEMPLATE: "{}" }),
  },
  {
    name: "the emissary with its capture files",
    args: () => [...EMISSARY, ...PROBE],
    env: (dir) => ({ BATON_ARGO_ROOT: dir, ARGO_CONTAINER_NAME: "main", ARGO_INCLUDE_SCRIPT_OUTPUT: "true", ARGO_TEMPLATE: "{}" }),
  },
  { name: "a sidecar", args: (dir) => ["sidecar", "--stop-file", join(dir, "last"), "--", ...PROBE] },
];

async function probeState(path: SpawnPath, options: StartOptions): Promise<string> {
  const dir = tempDir();
  const exit = await runBaton(path.args(dir), { ...options, env: cleanEnv(path.env?.(dir) ?? {}) });
  assert.equal(exit.code, 0, exit.stderr);
  return exit.stdout;
}

/** dist/baton.cjs copied alone: every command then starts through Node's child_process. */
function bundleWithoutAddon(): string {
  const folder = join(tempDir(), "alone");
  mkdirSync(folder);
  copyFileSync(BATON, join(folder, "baton.cjs"));
  return join(folder, "baton.cjs");
}

const BUILDS: { name: string; words: () => string[]; skip: string | false }[] = [
  { name: "the bundle", words: () => [process.execPath, BATON], skip: false },
  { name: "the bundle without its addon", words: () => [process.execPath, bundleWithoutAddon()], skip: false },
  { name: "the standalone build", words: () => [STANDALONE], skip: NO_STANDALONE },
];

for (const build of BUILDS) {
  for (const pid1 of [false, true]) {
    const where = pid1 ? "as PID 1" : "not PID 1";
    const skip = build.skip || (pid1 && !IS_ROOT && "needs root for a PID namespace");
    test(`${build.name}, ${where}: every command starts with no signal ignored or blocked (SigIgn 0, SigBlk 0)`, { skip }, async () => {
      const baton = build.words();
      for (const path of PATHS) {
        assert.equal(await probeState(path, { baton, pid1 }), CLEAN, `${path.name} (${build.name}, ${where})`);
      }
    });
  }
}

test("tini -s, the reference, gives the same state (when Debian's tini is installed)", async (t) => {
  const { spawnSync } = await import("node:child_process");
  const tini = spawnSync("tini", ["-s", "--", ...PROBE], { encoding: "utf8" });
  if (tini.error) return t.skip("no tini here (apt-get install tini)");
  assert.equal(tini.stdout, CLEAN);
});

test("signals that baton's own caller ignored are at their default for the command too (as under Tekton's and Argo's; tini passes them on)", async () => {
  for (const [build, words, skip] of [["the bundle", [process.execPath, BATON], false], ["the standalone build", [STANDALONE], NO_STANDALONE]] as const) {
    if (skip) continue;
    const dir = tempDir();
    // sh's trap "" ignores them, and exec keeps them ignored: baton starts with SIGINT, SIGTTOU and SIGSEGV ignored.
    const exit = await runBaton(["--post-file", join(dir, "post"), "--", ...PROBE], { baton: [...words], prefix: ["sh", "-c", 'trap "" INT TTOU SEGV; exec "$@"', "sh"] });
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(exit.stdout, CLEAN, build);
  }
});
