// Debugging baton where it runs (docs/development.md, "Debugging a failing pod"): BATON_DEBUG=1 prints an internal
// error's stack in src/ terms through the source maps shipped beside the bundle, and Node's profilers and coverage
// write their files although baton normally ends with _exit (src/process/exit.ts).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { BATON, NO_STANDALONE, STANDALONE_DIR, cleanEnv, existsSync, join, readJson, runBaton, tempDir } from "./helpers.js";

/**
 * A step whose $(steps...) substitution hits a fault that baton does not expect: a preloaded module (NODE_OPTIONS)
 * makes the assignment to process.env throw, inside the Tekton chunk, called from the bundle.
 */
function faultyStep(extraEnv: NodeJS.ProcessEnv) {
  const dir = tempDir();
  const root = join(dir, "tekton");
  mkdirSync(join(root, "steps/step-a/results"), { recursive: true });
  writeFileSync(join(root, "steps/step-a/results/r"), "value");
  const fault = join(dir, "fault.cjs");
  writeFileSync(
    fault,
    `const assign = Object.assign;
Object.assign = function (target, ...sources) {
  if (target === process.env) throw new Error("injected fault");
  return assign(target, ...sources);
};
`,
  );
  const env = cleanEnv({ BATON_TEKTON_ROOT: root, FROM_STEP_A: "$(steps.a.results.r)", NODE_OPTIONS: `--require ${fault}`, ...extraEnv });
  return { env, post: join(dir, "out"), run: () => runBaton(["--post-file", join(dir, "out"), "--", "true"], { env }) };
}

test("an internal error is one line; with BATON_DEBUG=1 its stack follows, frames of the bundle and of the Tekton chunk in src/", async () => {
  const quiet = faultyStep({});
  const plain = await quiet.run();
  assert.equal(plain.code, 1);
  assert.equal(plain.stderr, "baton: internal error: injected fault\n");
  assert.equal(readJson(`${quiet.post}.err`).exitCode, 1);

  const debug = faultyStep({ BATON_DEBUG: "1" });
  const exit = await debug.run();
  assert.equal(exit.code, 1, exit.stderr);
  const [line, ...frames] = exit.stderr.trimEnd().split("\n");
  assert.equal(line, "baton: internal error: injected fault");
  assert.match(frames[0]!, /^ {4}at .*fault\.cjs:3:\d+\)$/);
  // The chunk's frame (it runs from the bundle's payload, BUNDLE#baton-tekton.cjs) and the bundle's own.
  assert.match(frames[1]!, /^ {4}at .* \(src\/tekton\/step-features\.ts:\d+:\d+\)$/, exit.stderr);
  assert.match(frames[2]!, /^ {4}at .* \(src\/step\/features\.ts:\d+:\d+\)$/, exit.stderr);
  // To the very line and column of the call: the bundle's program is compiled by its guard out of line comments
  // (scripts/bundle-guard.cjs), and an offset it got wrong would still name src/ files, but other places in them.
  const source = readFileSync(new URL("../../src/step/features.ts", import.meta.url), "utf8").split("\n");
  const call = source.findIndex((text) => text.includes(".decideTektonCommand(options, signal)"));
  assert.ok(frames[2]!.endsWith(`(src/step/features.ts:${call + 1}:${source[call]!.indexOf("decideTektonCommand") + 1})`), frames[2]);
  assert.ok(frames.some((frame) => /\(src\/step\/run-step\.ts:\d+:\d+\)$/.test(frame)), exit.stderr);
  assert.doesNotMatch(exit.stderr, /baton\.cjs/, "every frame of baton's is mapped");
  assert.equal(readJson(`${debug.post}.err`).exitCode, 1, "the step still hands on");
});

test("BATON_DEBUG=1 in a copy made by baton init (an init container's /tekton/bin): its frames are named in src/ too", async () => {
  const dir = tempDir();
  const copy = join(dir, "tekton/bin/baton");
  const init = await runBaton(["init", copy]);
  assert.equal(init.code, 0, init.stderr);
  const { env } = faultyStep({ BATON_DEBUG: "1" });
  const exit = await runBaton(["--post-file", join(dir, "out"), "--", "true"], { baton: [process.execPath, copy], env });
  assert.equal(exit.code, 1, exit.stderr);
  assert.match(exit.stderr, /^ {4}at .* \(src\/tekton\/step-features\.ts:\d+:\d+\)$/m, exit.stderr);
  assert.match(exit.stderr, /^ {4}at .* \(src\/step\/run-step\.ts:\d+:\d+\)$/m, exit.stderr);
  assert.doesNotMatch(exit.stderr, /tekton\/bin\/baton/, "every frame of baton's is mapped");
});

test("BATON_DEBUG=1 without the maps beside the bundle: the stack as it is, still no crash", async () => {
  const dir = tempDir();
  const copy = join(dir, "baton.cjs");
  writeFileSync(copy, readFileSync(BATON));
  const { env } = faultyStep({ BATON_DEBUG: "1" });
  const exit = await runBaton(["--", "true"], { baton: [process.execPath, copy], env });
  assert.equal(exit.code, 1, exit.stderr);
  assert.match(exit.stderr, /^baton: internal error: injected fault\n {4}at /);
  assert.match(exit.stderr, /baton\.cjs#baton-tekton\.cjs:\d+:\d+\)$/m);
});

/** Runs `node FLAGS dist/baton.cjs --post-file POST -- sh -c 'exit 3'` in a folder of its own; returns what it wrote. */
async function profiledRun(flags: string[], env: NodeJS.ProcessEnv = {}) {
  const dir = tempDir();
  const exit = await runBaton(["--post-file", join(dir, "post"), "--", "sh", "-c", "exit 3"], {
    baton: [process.execPath, ...flags, BATON],
    env: cleanEnv(env),
    cwd: dir,
  });
  assert.equal(exit.code, 3, exit.stderr);
  assert.equal(readJson(join(dir, "post.err")).exitCode, 3);
  return { dir, files: (folder: string) => (existsSync(join(dir, folder)) ? readdirSync(join(dir, folder)) : []) };
}

test("node --cpu-prof and --heap-prof on the bundle write their profiles (Node's own exit when a profiler is on)", async () => {
  const cpu = await profiledRun(["--cpu-prof", "--cpu-prof-dir", "cpu"]);
  assert.equal(cpu.files("cpu").filter((name) => name.endsWith(".cpuprofile")).length, 1, "no CPU profile");
  const profile = JSON.parse(readFileSync(join(cpu.dir, "cpu", cpu.files("cpu")[0]!), "utf8")) as { nodes: { callFrame: { url: string } }[] };
  assert.ok(profile.nodes.some((node) => node.callFrame.url.endsWith("baton.cjs")), "the profile shows the bundle's code");
  const heap = await profiledRun(["--heap-prof", "--heap-prof-dir", "heap"]);
  assert.equal(heap.files("heap").filter((name) => name.endsWith(".heapprofile")).length, 1, "no heap profile");
});

test("the standalone folder ships the source maps of the bundle and of each chunk", { skip: NO_STANDALONE }, () => {
  const maps = readdirSync(join(STANDALONE_DIR, "lib")).filter((name) => name.endsWith(".map"));
  const built = readdirSync(join(BATON, "..")).filter((name) => /^baton[\w-]*\.cjs\.map$/.test(name));
  assert.ok(built.includes("baton.cjs.map") && built.includes("baton-tekton.cjs.map"), built.join(" "));
  assert.deepEqual(maps.sort(), built.sort());
});

