// The step's environment belongs to its command. Node acts at start-up on the variables named for it (NODE_*) and for
// libuv (UV_*): a Node step's NODE_V8_COVERAGE or NODE_COMPILE_CACHE made baton, itself a Node program, write files
// into the user's folders. The standalone build's launcher starts Node without them and baton hands them back to the
// command; the bundle, started by the image's Node, cannot keep Node from reading them, but baton no longer acts on
// them itself (no coverage or profile written at its exit). Either way the command gets them unchanged.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { NO_STANDALONE, STANDALONE, cleanEnv, existsSync, join, runBaton, tempDir } from "./helpers.js";

/** Every file below `folder` (none when it does not exist). */
function filesBelow(folder: string): string[] {
  if (!existsSync(folder)) return [];
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

/** The variables a Node step's image may set, each pointing into `dir`, and some of the step's own. */
function stepEnv(dir: string): NodeJS.ProcessEnv {
  return {
    NODE_V8_COVERAGE: join(dir, "coverage"),
    NODE_COMPILE_CACHE: join(dir, "compile-cache"),
    NODE_REDIRECT_WARNINGS: join(dir, "warnings"),
    NODE_PENDING_DEPRECATION: "1",
    NODE_DEBUG: "module",
    UV_THREADPOOL_SIZE: "1",
    BATON_KEPT_MINE: "a", // a name the launcher's renaming uses: the command must still get it as it was
    BATON_KEPT: "mine",
  };
}

/** The variables of `env` output that the step set (the command's view). */
function received(stdout: string, names: readonly string[]): Record<string, string> {
  const seen: Record<string, string> = {};
  for (const line of stdout.split("\n")) {
    const eq = line.indexOf("=");
    if (eq > 0 && names.includes(line.slice(0, eq))) seen[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return seen;
}

test("the standalone build: Node's variables of the step reach only the command, unchanged; baton writes nothing for them", { skip: NO_STANDALONE }, async () => {
  for (const capture of [[], ["--stdout-path"]]) {
    const dir = tempDir();
    const vars = stepEnv(dir);
    const hook = join(dir, "hook.js");
    writeFileSync(hook, `require("node:fs").appendFileSync(${JSON.stringify(join(dir, "hooked"))}, "x");`);
    const env = cleanEnv({ ...vars, NODE_OPTIONS: `--require ${hook}` });
    const flags = capture.length ? [capture[0]!, join(dir, "out")] : [];
    // A CEL `when`: its worker must not see them either.
    const exit = await runBaton(["--post-file", join(dir, "post"), "--when", '[{"cel":"1 == 1"}]', ...flags, "--", "env"], { baton: [STANDALONE], env, cwd: dir });
    assert.equal(exit.code, 0, exit.stderr);
    assert.deepEqual(received(exit.stdout, [...Object.keys(vars), "NODE_OPTIONS"]), { ...vars, NODE_OPTIONS: `--require ${hook}` });
    assert.doesNotMatch(exit.stdout, /^BATON_KEPT_NODE|^BATON_KEPT_UV|^BATON_KEPT_BATON/m);
    assert.equal(exit.stderr, "", "no warning, no debug output of Node's");
    for (const folder of ["coverage", "compile-cache", "warnings"]) assert.equal(existsSync(join(dir, folder)), false, folder);
    assert.equal(existsSync(join(dir, "hooked")), false, "NODE_OPTIONS' --require ran in baton");
  }
});

test("the standalone build: a NODE_* variable that fits exec(2) only under its own name (the kernel's 128 KiB for one string) still starts baton, and the command gets it", { skip: NO_STANDALONE }, async () => {
  // Renamed BATON_KEPT_<name>, it was 11 bytes too long: the launcher's exec failed (E2BIG), exit 127, no post file.
  const dir = tempDir();
  const value = "v".repeat(128 * 1024 - "NODE_LONG=".length - 1 - 4);
  const exit = await runBaton(["--post-file", join(dir, "post"), "--", "sh", "-c", 'printf %s "$NODE_LONG" | wc -c'], { baton: [STANDALONE], env: cleanEnv({ NODE_LONG: value }) });
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(exit.stdout.trim(), String(value.length));
  assert.equal(existsSync(join(dir, "post")), true);
});

test("the bundle: baton writes no coverage or profile for the step's NODE_V8_COVERAGE or NODE_OPTIONS; the command gets them", async () => {
  const dir = tempDir();
  // Node 20 refuses --cpu-prof in NODE_OPTIONS (it would not start): --cpu-prof from Node 22 on.
  const profiler = Number(process.versions.node.split(".")[0]) >= 22 ? { NODE_OPTIONS: "--cpu-prof" } : {};
  const vars = {
    NODE_V8_COVERAGE: join(dir, "coverage"),
    NODE_COMPILE_CACHE: join(dir, "compile-cache"),
    // Node writes every warning of baton's into this file: baton (its step, its capture, its CEL worker) gives none.
    NODE_REDIRECT_WARNINGS: join(dir, "warnings"),
    NODE_PENDING_DEPRECATION: "1",
    ...profiler,
  };
  const args = ["--post-file", join(dir, "post"), "--stdout-path", join(dir, "out"), "--when", '[{"cel":"[1, 2].all(x, x > 0)"}]', "--", "env"];
  const exit = await runBaton(args, { env: cleanEnv(vars), cwd: dir });
  assert.equal(exit.code, 0, exit.stderr);
  assert.deepEqual(received(exit.stdout, Object.keys(vars)), vars);
  assert.deepEqual(filesBelow(join(dir, "coverage")), [], "coverage written by baton");
  // Node 22 and later make the cache's folder at start-up, before baton's first line: no file in it, though.
  assert.deepEqual(filesBelow(join(dir, "compile-cache")), [], "compile cache written by baton");
  assert.deepEqual(readdirSync(dir).filter((name) => name.endsWith(".cpuprofile")), [], "CPU profile written by baton");
  assert.equal(existsSync(join(dir, "warnings")), false, "a warning of baton's");
});

test("the bundle: BATON_PROFILE=1 still lets NODE_V8_COVERAGE write baton's coverage (someone debugging baton)", async () => {
  const dir = tempDir();
  const exit = await runBaton(["--post-file", join(dir, "post"), "--", "true"], { env: cleanEnv({ NODE_V8_COVERAGE: join(dir, "coverage"), BATON_PROFILE: "1" }) });
  assert.equal(exit.code, 0, exit.stderr);
  const written = filesBelow(join(dir, "coverage")).filter((name) => name.endsWith(".json"));
  assert.equal(written.length, 1, "no coverage file");
  const coverage = JSON.parse(readFileSync(written[0]!, "utf8")) as { result: { url: string }[] };
  assert.ok(coverage.result.some((script) => script.url.endsWith("baton.cjs")), "the coverage covers the bundle");
});
