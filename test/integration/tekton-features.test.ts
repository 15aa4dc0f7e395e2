// Tekton's entrypoint features on the real bundle (and the standalone build for CEL and compression), as PID 1, against
// real files: step results and artifacts in the termination message, sidecar-logs, runtime $(steps...) substitution,
// when (in/notin/CEL), the compressed termination message, the debug breakpoints and the keep-pod-on-cancel file.
// Cases named after a Tekton test reproduce that test's input and expected output (tektoncd/pipeline 3ee1745).
import { test } from "node:test";
import assert from "node:assert/strict";
import { inflateRawSync } from "node:zlib";
import { copyFileSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { BATON, IS_ROOT, NO_STANDALONE, STANDALONE, cleanEnv, eventSeen, existsSync, fileAppears, join, readJson, readOr, runBaton, startBaton, tempDir, waitFor, type StartOptions } from "./helpers.js";

function pod(extraEnv: NodeJS.ProcessEnv = {}) {
  const dir = tempDir();
  const root = join(dir, "tekton");
  mkdirSync(join(root, "results"), { recursive: true });
  const env = cleanEnv({ BATON_TEKTON_ROOT: root, ...extraEnv });
  const meta = join(root, "run/0/status");
  const base = ["-post_file", join(root, "run/0/out"), "-termination_path", join(root, "termination"), "-step_metadata_dir", meta];
  const run = (flags: string[], command: string[], options: StartOptions = {}) =>
    runBaton([...base, ...flags, "-entrypoint", command[0]!, "--", ...command.slice(1)], { env, pid1: IS_ROOT, ...options });
  /** Writes <root>/steps/step-<step>/results/<name>, as an earlier step's $(step.results.<name>.path) would. */
  const stepResult = (step: string, name: string, content: string) => {
    mkdirSync(join(root, "steps", `step-${step}`, "results"), { recursive: true });
    writeFileSync(join(root, "steps", `step-${step}`, "results", name), content);
  };
  const termination = () => JSON.parse(readFileSync(join(root, "termination"), "utf8")) as { key: string; value: string; type: number }[];
  return { dir, root, env, meta, base, run, stepResult, termination };
}

/** What the controller does with a termination message (pkg/termination/parse.go): tknz: -> unpadded base64 -> inflate. */
function controllerDecode(text: string): unknown {
  if (!text.startsWith("tknz:")) return JSON.parse(text);
  const encoded = text.slice(5);
  assert.match(encoded, /^[A-Za-z0-9+/]*$/, "RawStdEncoding: no padding, no newlines");
  return JSON.parse(inflateRawSync(Buffer.from(encoded, "base64"), { maxOutputLength: 128 * 1024 }).toString("utf8"));
}

// ---- step results and artifacts ---------------------------------------------------------------------------------

test("-step_results: type 4 entries from DIR/results/, raw; a missing one is left out; artifacts as types 5 and 6", async () => {
  const { root, meta, run, termination } = pod();
  const provenance = `{"outputs":[{"name":"image","values":[{"digest":{"sha256":"64d0"},"uri":"docker:x"}]}]}`;
  mkdirSync(join(root, "artifacts"), { recursive: true });
  writeFileSync(join(root, "artifacts/provenance.json"), `{"inputs":[]}`);
  const script = `printf 'a b\\n' > ${meta}/results/digest; printf '%s' '${provenance}' > ${meta}/artifacts/provenance.json; printf 1 > ${root}/results/sum`;
  const exit = await run(["-step_results", "digest,missing", "-results", "sum"], ["sh", "-c", script]);
  assert.equal(exit.code, 0, exit.stderr);
  const entries = termination();
  assert.deepEqual(entries.slice(1), [
    { key: "sum", value: "1", type: 1 },
    { key: "digest", value: "a b\n", type: 4 },
    { key: `${meta}/artifacts/provenance.json`, value: provenance, type: 5 },
    { key: `${root}/artifacts/provenance.json`, value: `{"inputs":[]}`, type: 6 },
  ]);
});

test("-result_from sidecar-logs: no type 1/4/5/6 entries, the files stay for the results sidecar; an unreadable one still fails", async () => {
  const { root, meta, run, termination } = pod();
  const script = `printf x > ${meta}/results/r; printf y > ${root}/results/t; echo '{}' > ${meta}/artifacts/provenance.json`;
  const exit = await run(["-result_from", "sidecar-logs", "-step_results", "r", "-results", "t"], ["sh", "-c", script]);
  assert.equal(exit.code, 0, exit.stderr);
  assert.deepEqual(termination().map((e) => e.key), ["StartedAt"]);
  assert.equal(readFileSync(join(meta, "results/r"), "utf8"), "x");
  assert.equal(existsSync(join(root, "run/0/out")), true);
  // A step result that is a folder cannot be read: the step fails (Tekton: exit 1), POST.err so the sidecar stops.
  const bad = pod();
  const failed = await bad.run(["-result_from", "sidecar-logs", "-step_results", "r"], ["mkdir", join(bad.meta, "results/r")]);
  assert.equal(failed.code, 1);
  assert.match(failed.stderr, /^baton: cannot read step result r: .*EISDIR/);
  assert.equal(existsSync(join(bad.root, "run/0/out.err")), true);
});

// ---- runtime substitution ----------------------------------------------------------------------------------------

test("TestApplyStepResultSubstitutions: env (string, [1], .key, two in one), command ([*] spliced, [0]-[1])", async () => {
  const { run, stepResult } = pod({
    S: "$(steps.foo.results.res)",
    A: "$(steps.foo.results.arr[1])",
    O: "$(steps.foo.results.obj.hello)",
    M: "$(steps.foo.results.multi.first)-$(steps.foo.results.multi.second)",
  });
  stepResult("foo", "res", "Hello");
  stepResult("foo", "arr", `["Hello","World"]`);
  stepResult("foo", "obj", `{"hello":"World"}`);
  stepResult("foo", "multi", `{"first":"hello", "second":"world"}`);
  const exit = await run([], [
    "sh", "-c", `printf '%s|' "$S" "$A" "$O" "$M" "$@"`, "sh",
    "start", "$(steps.foo.results.arr[*])", "stop", "$(steps.foo.results.arr[0])-$(steps.foo.results.arr[1])",
  ]);
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(exit.stdout, "Hello|World|World|hello-world|start|Hello|World|stop|Hello-World|");
});

test("a result file's value: a JSON string is decoded, anything else taken raw (newline kept)", async () => {
  const { run, stepResult } = pod();
  stepResult("a", "quoted", `"x y"`);
  stepResult("a", "raw", "hello\n");
  stepResult("a", "numbers", "[1,2]");
  const exit = await run([], ["printf", "%s|", "$(steps.a.results.quoted)", "$(steps.a.results.raw)", "$(steps.a.results.numbers)"]);
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(exit.stdout, "x y|hello\n|[1,2]|");
});

test("an unusable reference fails the step with one line and POST.err, the command not run (Tekton: logs, or panics)", async () => {
  const cases: [string, string][] = [
    ["$(steps.foo.results.arr[7])", "index 7 is out of range: result arr of step foo has 2 element\\(s\\)"],
    ["$(steps.nope.results.r)", "cannot read .*step-nope/results/r: no such file or directory"],
    ["$(steps.foo.results.arr[*])bbb", "an array result must be used alone"],
    ["$(steps.foo.results.obj.hello.bar)", "must be \\$\\(steps"],
    ["$(steps.foo.outputs.nothing)", "cannot read .*step-foo/artifacts/provenance.json"],
  ];
  for (const [arg, message] of cases) {
    const { root, dir, run, stepResult } = pod();
    stepResult("foo", "arr", `["Hello","World"]`);
    const exit = await run([], ["sh", "-c", `touch ${dir}/ran`, arg]);
    assert.equal(exit.code, 1, arg);
    assert.match(exit.stderr, new RegExp(`^baton: .*${message}`), arg);
    assert.equal(exit.stderr.split("\n").length, 2, `one line: ${exit.stderr}`);
    assert.equal(existsSync(join(dir, "ran")), false, arg);
    assert.equal(existsSync(join(root, "run/0/out.err")), true, arg);
  }
});

test("TestApplyStepArtifactSubstitutions: args, env and a /tekton/scripts script (run from a substituted copy)", async () => {
  const { root, run } = pod({ IMG: "abc-$(steps.name.outputs.image)" });
  mkdirSync(join(root, "steps/step-name/artifacts"), { recursive: true });
  const digest = "64d0f8b6e94d7f3d5e8d08c2a9f6e5b3a7c9d1e2f3a4b5c6d7e8f9a0b1c2d3e4";
  writeFileSync(
    join(root, "steps/step-name/artifacts/provenance.json"),
    JSON.stringify({ outputs: [{ name: "image", values: [{ uri: "docker:example.registry.com/outputs", digest: { sha256: digest } }] }] }),
  );
  const values = `[{"digest":{"sha256":"${digest}"},"uri":"docker:example.registry.com/outputs"}]`;
  const exit = await run([], ["sh", "-c", `printf '%s\\n' "$1" "$IMG"`, "sh", "$(steps.name.outputs.image)"]);
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(exit.stdout, `${values}\nabc-${values}\n`);
  mkdirSync(join(root, "scripts"));
  const script = join(root, "scripts", "script-0-abcde");
  writeFileSync(script, "#!/bin/sh\necho $(steps.name.outputs.image)\n", { mode: 0o755 });
  const scripted = await pod({ BATON_TEKTON_ROOT: root }).run([], [script]);
  assert.equal(scripted.code, 0, scripted.stderr);
  assert.equal(scripted.stdout, `${values.replaceAll('"', "")}\n`, "the shell's echo of the substituted text");
  assert.equal(readFileSync(script, "utf8"), "#!/bin/sh\necho $(steps.name.outputs.image)\n", "the original is untouched");
});

// ---- when --------------------------------------------------------------------------------------------------------

test("when false: the command is not run; POST with exitCode 0 and Reason Skipped, DIR/exitCode 0, no results, exit 0", async () => {
  const { root, dir, meta, run, termination } = pod();
  writeFileSync(join(root, "results/sum"), "3");
  const when = JSON.stringify([{ input: "foo", operator: "notin", values: ["foo"] }]);
  const exit = await run(["--when_expressions", when, "-results", "sum"], ["touch", join(dir, "ran")]);
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(existsSync(join(dir, "ran")), false);
  const post = readJson(join(root, "run/0/out"));
  assert.equal(post.exitCode, 0);
  assert.equal(post.reason, "Skipped");
  assert.equal(readFileSync(join(meta, "exitCode"), "utf8"), "0");
  assert.deepEqual(termination(), [
    { key: "StartedAt", value: post.startedAt, type: 3 },
    { key: "Reason", value: "Skipped", type: 3 },
  ]);
});

// TestAllowExec (pkg/entrypoint/entrypointer_test.go): true runs, false skips, error fails.
const ALLOW_EXEC: [string, object[], "run" | "skip" | "error"][] = [
  ["in", [{ input: "foo", operator: "in", values: ["foo", "bar"] }], "run"],
  ["notin", [{ input: "foobar", operator: "notin", values: ["foobar"] }], "skip"],
  ["in, in (false)", [{ input: "foobar", operator: "in", values: ["foobar"] }, { input: "foo", operator: "in", values: ["bar"] }], "skip"],
  ["in, notin", [{ input: "foobar", operator: "in", values: ["foobar"] }, { input: "foo", operator: "notin", values: ["bar"] }], "run"],
  ["cel true", [{ cel: "'foo'=='foo'" }], "run"],
  ["cel false", [{ cel: "'foo'!='foo'" }], "skip"],
  ["cel true, in false", [{ cel: "'foo'=='foo'" }, { input: "foo", operator: "in", values: ["bar"] }], "skip"],
  ["cel true, cel false", [{ cel: "'foo'=='foo'" }, { cel: "'xxx'!='xxx'" }], "skip"],
  ["cel not a bool", [{ cel: "'foo'" }], "error"],
  ["cel does not compile", [{ cel: "foo==foo" }], "error"],
];

for (const [baton, label] of [[undefined, "bundle"], [[STANDALONE], "standalone build"]] as const) {
  test(`${label}: TestAllowExec's table (in, notin, CEL)`, { skip: baton && NO_STANDALONE }, async () => {
    for (const [name, expressions, expected] of ALLOW_EXEC) {
      if (baton && !name.startsWith("cel")) continue; // the standalone build: the CEL rows (the CEL chunk from its SEA asset)
      const { root, dir, run } = pod();
      const exit = await run(["--when_expressions", JSON.stringify(expressions)], ["touch", join(dir, "ran")], baton ? { baton: [...baton] } : {});
      assert.equal(existsSync(join(dir, "ran")), expected === "run", name);
      assert.equal(exit.code, expected === "error" ? 1 : 0, `${name}: ${exit.stderr}`);
      assert.equal(existsSync(join(root, "run/0/out")), expected !== "error", name);
      if (expected === "error") {
        assert.match(exit.stderr, /^baton: CEL expression .* (does not compile|failed|gives the string "foo", not a bool)/, name);
        assert.equal(existsSync(join(root, "run/0/out.err")), true, name);
      }
    }
  });
}

test("a step that waits loads the Tekton and CEL chunks during the wait: its bundle can be gone once the previous step hands on", async () => {
  const { dir, root, env } = pod();
  const copy = join(dir, "bundle");
  mkdirSync(copy);
  copyFileSync(BATON, join(copy, "baton.cjs"));
  copyFileSync(join(BATON, "..", "baton-reaper.node"), join(copy, "baton-reaper.node"));
  const start = (flags: string[], post: string) =>
    startBaton(["-wait_file", join(root, "run/0/out"), "-post_file", join(root, post), ...flags, "-entrypoint", "touch", "--", join(dir, post.replaceAll("/", "-"))], {
      env: { ...env, BATON_EVENTS: join(dir, `${post.replaceAll("/", "-")}.events`) },
      baton: [process.execPath, join(copy, "baton.cjs")],
    });
  // Bytes read by a process (/proc/PID/io): a chunk's load reads the whole bundle once more, the Tekton chunk's and
  // the CEL chunk's each.
  const bytesRead = (pid: number) => Number(/^rchar: (\d+)$/m.exec(readOr(`/proc/${pid}/io`, ""))?.[1] ?? 0);
  const plain = start([], "run/1/out");
  const step = start(["--when_expressions", JSON.stringify([{ cel: "'a' == 'a'" }])], "run/2/out");
  await eventSeen(join(dir, "run-1-out.events"), "waiting");
  await eventSeen(join(dir, "run-2-out.events"), "waiting");
  const size = statSync(join(copy, "baton.cjs")).size;
  await waitFor(() => (bytesRead(step.child.pid!) > bytesRead(plain.child.pid!) + size * 1.5 ? true : undefined), "the chunks to load during the wait");
  // The bundle replaced by one without a payload: only what was loaded during the wait can decide the `when`.
  const text = readFileSync(join(copy, "baton.cjs"), "latin1");
  writeFileSync(join(copy, "cut.cjs"), text.slice(0, text.lastIndexOf("//baton-chunks")), "latin1");
  renameSync(join(copy, "cut.cjs"), join(copy, "baton.cjs"));
  mkdirSync(join(root, "run/0"), { recursive: true });
  writeFileSync(join(root, "run/0/out"), "");
  const [plainExit, exit] = await Promise.all([plain.exited, step.exited]);
  assert.equal(plainExit.code, 0, plainExit.stderr);
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(existsSync(join(dir, "run-2-out")), true);
});

test("when with step results: values [*] expands, input and cel are substituted", async () => {
  const { dir, run, stepResult } = pod();
  stepResult("foo", "res", `["Hello","World"]`);
  stepResult("foo", "s", "Hello");
  const when = [
    { input: "World", operator: "in", values: ["$(steps.foo.results.res[*])"] },
    { input: "$(steps.foo.results.s)", operator: "in", values: ["Hello"] },
    { cel: "'$(steps.foo.results.s)' == 'Hello'" },
  ];
  const exit = await run(["--when_expressions", JSON.stringify(when)], ["touch", join(dir, "ran")]);
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(existsSync(join(dir, "ran")), true);
});

test("--when_expressions that is not JSON, or not a list of expressions: exit 2 before anything runs, POST.err", async () => {
  for (const bad of ["[{", `{"input":"x"}`, `[{"values":"x"}]`]) {
    const { root, dir, run } = pod();
    const exit = await run(["--when_expressions", bad], ["touch", join(dir, "ran")]);
    assert.equal(exit.code, 2, bad);
    assert.match(exit.stderr, /^baton: --when/, bad);
    assert.equal(existsSync(join(root, "run/0/out.err")), true);
  }
});

// ---- compression -------------------------------------------------------------------------------------------------

for (const [baton, label] of [[undefined, "bundle"], [[STANDALONE], "standalone build"]] as const) {
  test(`${label}: -compress_termination_message: tknz: when shorter, decoded as the controller does; plain JSON otherwise`, { skip: baton && NO_STANDALONE }, async () => {
    // TestWriteCompressedMessage_ExceedsLimitUncompressedButFitsCompressed: 50 digests, over 4096 bytes as JSON.
    const { root, run } = pod();
    const names = Array.from({ length: 50 }, (_, i) => `image-digest-${i}`);
    const script = names.map((n, i) => `printf 'sha256:%064d' ${i} > ${root}/results/${n}`).join("; ");
    const exit = await run(["-compress_termination_message=true", "-results", names.join(",")], ["sh", "-c", script], baton ? { baton: [...baton] } : {});
    assert.equal(exit.code, 0, exit.stderr);
    const text = readFileSync(join(root, "termination"), "utf8");
    assert.ok(text.startsWith("tknz:"), text.slice(0, 40));
    assert.ok(text.length <= 4096);
    const entries = controllerDecode(text) as { key: string; value: string; type: number }[];
    assert.equal(entries.length, 51);
    assert.deepEqual(entries[1], { key: "image-digest-0", value: `sha256:${"0".repeat(64)}`, type: 1 });
    // A short message does not shrink: it stays JSON.
    const small = pod();
    assert.equal((await small.run(["-compress_termination_message"], ["true"], baton ? { baton: [...baton] } : {})).code, 0);
    assert.match(readFileSync(join(small.root, "termination"), "utf8"), /^\[\{"key":"StartedAt"/);
  });
}

test("a compressed message already in the file is merged, and the result compressed again", async () => {
  const { root, run } = pod();
  const earlier = Array.from({ length: 40 }, (_, i) => ({ key: `earlier-${i}`, value: "x".repeat(60), type: 1 }));
  const { deflateRawSync } = await import("node:zlib");
  writeFileSync(join(root, "termination"), `tknz:${deflateRawSync(JSON.stringify(earlier)).toString("base64").replace(/=+$/, "")}`);
  const exit = await run(["-compress_termination_message"], ["true"]);
  assert.equal(exit.code, 0, exit.stderr);
  const entries = controllerDecode(readFileSync(join(root, "termination"), "utf8")) as { key: string }[];
  assert.deepEqual(entries.map((e) => e.key), [...earlier.map((e) => e.key), "StartedAt"]);
});

// ---- debug -------------------------------------------------------------------------------------------------------

test("-breakpoint_on_failure: a failed step writes no post file and no exitCode, waits, and exits with POST.breakpointexit's code", async () => {
  const { root, meta, base, env, termination } = pod();
  const step = startBaton([...base, "-breakpoint_on_failure", "-entrypoint", "sh", "--", "-c", "exit 3"], { env, pid1: IS_ROOT });
  await fileAppears(join(root, "termination"));
  assert.equal(termination()[0]!.key, "StartedAt");
  assert.equal(existsSync(join(root, "run/0/out")) || existsSync(join(root, "run/0/out.err")), false);
  assert.equal(existsSync(join(meta, "exitCode")), false);
  // What /tekton/debug/scripts/debug-fail-continue does.
  writeFileSync(join(root, "run/0/out.err"), "");
  writeFileSync(join(root, "run/0/out.breakpointexit"), "1\n");
  const exit = await step.exited;
  assert.equal(exit.code, 1);
  assert.match(exit.stderr, /debug onFailure breakpoint has taken effect, waiting for user's decision:\n1\) continue, use cmd: \/tekton\/debug\/scripts\/debug-continue\n2\) fail-continue/);
});

test("found: -breakpoint_on_failure with a POST.breakpointexit that is a folder: one line naming it, not an internal error", async () => {
  // The wait ran in the Tekton chunk, whose own copy of BatonError the step took for a bug of baton's.
  const { root, base, env } = pod();
  mkdirSync(join(root, "run/0/out.breakpointexit"), { recursive: true });
  const exit = await runBaton([...base, "-breakpoint_on_failure", "-entrypoint", "sh", "--", "-c", "exit 3"], { env, pid1: IS_ROOT });
  assert.match(exit.stderr, /^baton: wait file \S+\/run\/0\/out\.breakpointexit is a directory$/m);
  assert.doesNotMatch(exit.stderr, /internal error/);
  // The breakpoint cannot be held: the step hands on as without it, its command's failure and all.
  assert.equal(exit.code, 3, exit.stderr);
  assert.equal(existsSync(join(root, "run/0/out.err")), true);
});

test("-breakpoint_on_failure: the step runs although the previous one failed (its .err), so each can be debugged", async () => {
  const { root, dir, env } = pod();
  mkdirSync(join(root, "run/0"), { recursive: true });
  writeFileSync(join(root, "run/0/out.err"), "");
  const argv = ["-wait_file", join(root, "run/0/out"), "-post_file", join(root, "run/1/out"), "-breakpoint_on_failure", "-entrypoint", "touch", "--", join(dir, "ran")];
  const exit = await runBaton(argv, { env, pid1: IS_ROOT });
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(existsSync(join(dir, "ran")), true);
  assert.equal(existsSync(join(root, "run/1/out")), true);
});

test("-debug_before_step: waits for POST.beforestepexit; POST.beforestepexit.err skips the command (POST.err, exit 1)", async () => {
  for (const [file, runs] of [["out.beforestepexit", true], ["out.beforestepexit.err", false]] as const) {
    const { root, dir, base, env } = pod();
    const step = startBaton([...base, "-debug_before_step", "-entrypoint", "touch", "--", join(dir, "ran")], { env, pid1: IS_ROOT });
    // Nothing runs before the user decides: the step's folders exist, the command has not run.
    await fileAppears(join(root, "run/0/status/artifacts"));
    assert.equal(existsSync(join(dir, "ran")), false);
    writeFileSync(join(root, "run/0", file), runs ? "0\n" : "1\n"); // what debug-beforestep-(fail-)continue writes
    const exit = await step.exited;
    assert.equal(exit.code, runs ? 0 : 1, exit.stderr);
    assert.equal(existsSync(join(dir, "ran")), runs);
    assert.equal(existsSync(join(root, runs ? "run/0/out" : "run/0/out.err")), true);
  }
});

// ---- keep-pod-on-cancel ------------------------------------------------------------------------------------------

test("keep-pod-on-cancel: /tekton/downward/cancel, when mounted, cancels the running step (Reason Cancelled)", async () => {
  const { root, base, env, termination } = pod();
  mkdirSync(join(root, "downward"));
  writeFileSync(join(root, "downward/cancel"), ""); // the downward-API file, empty until the TaskRun is cancelled
  const step = startBaton([...base, "-entrypoint", "sh", "--", "-c", `touch ${root}/started; sleep 60`], { env, pid1: IS_ROOT });
  await fileAppears(join(root, "started"));
  writeFileSync(join(root, "downward/cancel"), "CANCEL");
  const exit = await step.exited;
  assert.equal(exit.code, 143, exit.stderr);
  assert.equal(readJson(join(root, "run/0/out.err")).reason, "Cancelled");
  assert.deepEqual(termination()[1], { key: "Reason", value: "Cancelled", type: 3 });
});
