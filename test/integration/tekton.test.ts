// baton standing in for Tekton's entrypoint: the init container's `init SRC DST STEP...`, then steps started with
// the argument vectors Tekton's pod builder makes (pkg/pod/entrypoint.go, orderContainers), paths moved under a
// temporary folder.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { BATON, cleanEnv, existsSync, join, readJson, runBaton, startBaton, tempDir, IS_ROOT } from "./helpers.js";

test("init DEST copies the running baton, its reaper addon and its source maps (nothing else), mode 0755, and the copy runs a step", async () => {
  const dir = tempDir();
  const dest = join(dir, "tekton/bin/baton");
  const exit = await runBaton(["init", dest]);
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(statSync(dest).mode & 0o777, 0o755);
  assert.deepEqual(readFileSync(dest), readFileSync(BATON));
  const maps = readdirSync(dirname(BATON)).filter((name) => name.endsWith(".cjs.map"));
  assert.ok(maps.includes("baton.cjs.map") && maps.includes("baton-tekton.cjs.map"), maps.join(" "));
  assert.deepEqual(readdirSync(join(dir, "tekton/bin")).sort(), ["baton", "baton-reaper.node", ...maps].sort());
  assert.deepEqual(readFileSync(join(dir, "tekton/bin/baton-reaper.node")), readFileSync(join(dirname(BATON), "baton-reaper.node")));
  for (const map of maps) {
    assert.deepEqual(readFileSync(join(dir, "tekton/bin", map)), readFileSync(join(dirname(BATON), map)), map);
    assert.equal(statSync(join(dir, "tekton/bin", map)).mode & 0o777, 0o644, map);
  }
  const out = execFileSync(dest, ["--post-file", join(dir, "post"), "--", "echo", "from-the-copy"], { env: cleanEnv() });
  assert.equal(out.toString(), "from-the-copy\n");
  // The copy carries its chunks inside: a CEL `when` loads the Tekton chunk and the CEL evaluator from it.
  const when = JSON.stringify([{ cel: "'a' == 'a'" }]);
  const cel = execFileSync(dest, ["--post-file", join(dir, "post2"), "--when", when, "--", "echo", "cel-from-the-copy"], { env: cleanEnv() });
  assert.equal(cel.toString(), "cel-from-the-copy\n");
  assert.equal(existsSync(join(dir, "post")), true);
});

test("init DEST with a folder where a source map goes: one line says so, and baton is copied (exit 0)", async () => {
  const dir = tempDir();
  mkdirSync(join(dir, "baton.cjs.map"));
  writeFileSync(join(dir, "baton.cjs.map", "kept"), "");
  const exit = await runBaton(["init", join(dir, "baton")]);
  assert.equal(exit.code, 0, exit.stderr);
  assert.match(exit.stderr, /^baton: cannot copy .*\/baton\.cjs\.map to .*\/baton\.cjs\.map: .*\(BATON_DEBUG's stacks from this copy will not name src\/\)\n$/);
  assert.deepEqual(readdirSync(join(dir, "baton.cjs.map")), ["kept"], "nothing written into the folder");
  assert.deepEqual(readFileSync(join(dir, "baton")), readFileSync(BATON));
  assert.ok(!readdirSync(dir).some((name) => name.includes(".tmp")), `no temporary file left: ${readdirSync(dir).join(" ")}`);
});

test("init DEST onto an existing file replaces it: the copy, mode 0755", async () => {
  const dir = tempDir();
  const dest = join(dir, "baton");
  writeFileSync(dest, "old contents\n", { mode: 0o644 });
  const exit = await runBaton(["init", dest]);
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(statSync(dest).mode & 0o777, 0o755);
  assert.deepEqual(readFileSync(dest), readFileSync(BATON));
});

test("init with no DEST is a usage error: exit 2, one line", async () => {
  const exit = await runBaton(["init"]);
  assert.equal(exit.code, 2);
  assert.match(exit.stderr, /^baton: usage: baton init DEST/);
  assert.equal(exit.stderr.trim().split("\n").length, 1);
});

test("init --help prints the usage and copies nothing; init with another option is a usage error", async () => {
  const dir = tempDir();
  const help = await runBaton(["init", "--help"], { cwd: dir });
  assert.equal(help.code, 0, help.stderr);
  assert.match(help.stdout, /usage: baton init DEST/);
  const bad = await runBaton(["init", "--force", join(dir, "baton")], { cwd: dir });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^baton: unknown option --force for baton init/);
  assert.deepEqual(readdirSync(dir), []);
});

test("Tekton's init SRC DST STEP...: the copy, and /tekton/steps links by name and index", async () => {
  const dir = tempDir();
  const root = join(dir, "tekton");
  const exit = await runBaton(["init", BATON, join(root, "bin/entrypoint"), "step-build", "step-test"], {
    env: cleanEnv({ BATON_TEKTON_ROOT: root }),
  });
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(statSync(join(root, "bin/entrypoint")).mode & 0o777, 0o755);
  for (const [link, index] of [["step-build", 0], ["0", 0], ["step-test", 1], ["1", 1]] as const) {
    assert.ok(lstatSync(join(root, "steps", link)).isSymbolicLink(), link);
    assert.equal(readlinkSync(join(root, "steps", link)), join(root, `run/${index}/status`));
  }
  // A restarted init container replaces its links instead of failing on them.
  assert.equal((await runBaton(["init", BATON, join(root, "bin/entrypoint"), "step-build"], { env: cleanEnv({ BATON_TEKTON_ROOT: root }) })).code, 0);
});

test("Tekton's cp SRC DST copies any file, readable and executable", async () => {
  const dir = tempDir();
  writeFileSync(join(dir, "tool"), "#!/bin/sh\necho tool\n", { mode: 0o700 });
  const exit = await runBaton(["cp", join(dir, "tool"), join(dir, "bin/tool")]);
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(statSync(join(dir, "bin/tool")).mode & 0o777, 0o755);
  assert.equal(execFileSync(join(dir, "bin/tool")).toString(), "tool\n");
  const missing = await runBaton(["cp", join(dir, "nope"), join(dir, "bin/nope")]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /^baton: cannot copy .*nope to .*: no such file or directory \(ENOENT\)\n$/);
});

/** The arguments Tekton gives step i (i > 0) of a task; `extra` is what the step's spec adds. */
function middleStep(run: string, i: number, extra: string[], entrypoint: string, args: string[]): string[] {
  return [
    "-wait_file", join(run, String(i - 1), "out"),
    "-post_file", join(run, String(i), "out"),
    "-termination_path", join(run, `termination-${i}`),
    "-step_metadata_dir", join(run, String(i), "status"),
    ...extra,
    "-entrypoint", entrypoint,
    "--", ...args,
  ];
}

test("a task's steps started with Tekton's argument vectors: chained, results, on_error, timeout, stdout_path", async () => {
  const dir = tempDir();
  const root = join(dir, "tekton"); // stands for /tekton: results are read from its results/ folder
  const run = join(root, "run");
  mkdirSync(join(root, "results"), { recursive: true });
  const env = cleanEnv({ BATON_TEKTON_ROOT: root });
  // Step 0 waits for the downward-API ready file, which exists empty first and must get content.
  const first = startBaton(
    [
      "-wait_file", join(dir, "downward/ready"), "-wait_file_content",
      "-post_file", join(run, "0", "out"),
      "-termination_path", join(run, "termination-0"),
      "-step_metadata_dir", join(run, "0", "status"),
      "-entrypoint", "sh", "--", "-c", `echo first >> ${dir}/log`,
    ],
    { env, pid1: IS_ROOT },
  );
  // Step 1: a middle step with everything a step spec can add.
  const script = `echo second >> ${dir}/log; echo to-the-log; printf sha256:abc > ${root}/results/digest; exit 3`;
  const extra = ["-on_error", "continue", "-timeout", "1m0s", "-stdout_path", join(dir, "step1.log"), "-results", "digest,url"];
  const second = startBaton(middleStep(run, 1, extra, "/bin/sh", ["-c", script]), { env, pid1: IS_ROOT });
  const third = startBaton(middleStep(run, 2, ["-timeout", "200ms"], "sleep", ["100"]), { env, pid1: IS_ROOT });

  mkdirSync(join(dir, "downward"));
  writeFileSync(join(dir, "downward/ready"), "");
  writeFileSync(join(dir, "downward/ready"), "READY");
  const [e0, e1, e2] = await Promise.all([first.exited, second.exited, third.exited]);
  assert.deepEqual([e0.code, e1.code, e2.code], [0, 0, 124], e0.stderr + e1.stderr + e2.stderr);
  assert.equal(readFileSync(join(dir, "log"), "utf8"), "first\nsecond\n");
  assert.equal(e1.stdout, "to-the-log\n");
  assert.equal(readFileSync(join(dir, "step1.log"), "utf8"), "to-the-log\n");
  assert.equal(readFileSync(join(run, "1/status/exitCode"), "utf8"), "3");
  const at1 = readJson(join(run, "1/out")).startedAt;
  assert.equal(
    readFileSync(join(run, "termination-1"), "utf8"),
    `[{"key":"StartedAt","value":"${at1}","type":3},{"key":"ExitCode","value":"3","type":3},{"key":"digest","value":"sha256:abc","type":1}]`,
  );
  const at2 = readJson(join(run, "2/out.err")).startedAt;
  assert.equal(
    readFileSync(join(run, "termination-2"), "utf8"),
    `[{"key":"StartedAt","value":"${at2}","type":3},{"key":"Reason","value":"TimeoutExceeded","type":3}]`,
  );
});

test("a flag Tekton's entrypoint does not have: exit 2, one line naming it, POST.err so the chain ends", async () => {
  const dir = tempDir();
  const exit = await runBaton([...middleStep(dir, 1, ["-secret_mask_file", "/x"], "true", [])]);
  assert.equal(exit.code, 2);
  assert.equal(exit.stderr, "baton: -secret_mask_file is not a flag of Tekton's entrypoint (only in an unmerged Tekton pull request)\n");
  assert.equal(existsSync(join(dir, "1/out.err")), true);
  const unknown = await runBaton(["-post_file", join(dir, "p"), "-made_up_flag", "--", "true"]);
  assert.equal(unknown.code, 2);
  assert.equal(unknown.stderr, "baton: unknown Tekton entrypoint flag -made_up_flag (see baton --help)\n");
  assert.equal(existsSync(join(dir, "p.err")), true);
});

test("after --, cp is just the step's command, not Tekton's subcommand", async () => {
  const dir = tempDir();
  writeFileSync(join(dir, "src"), "x", { mode: 0o600 });
  const exit = await runBaton(["--", "cp", join(dir, "src"), join(dir, "dst")]);
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(statSync(join(dir, "dst")).mode & 0o777, 0o600, "the system's cp kept the mode; baton's would give 0755");
});

