// Every argument vector of Tekton's pod builder that its own tests spell out (pkg/pod/pod_test.go and entrypoint_test.go
// at tektoncd/pipeline 3ee1745), run verbatim by the bundle as PID 1: only /tekton is moved under a temporary folder
// (BATON_TEKTON_ROOT), and the image's commands (cmd, cmd1, regular...) are small scripts on PATH.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { IS_ROOT, cleanEnv, existsSync, join, runBaton, tempDir } from "./helpers.js";

const READY = ["-wait_file", "/tekton/downward/ready", "-wait_file_content"];
const STEP0 = ["-post_file", "/tekton/run/0/out", "-termination_path", "/tekton/termination", "-step_metadata_dir", "/tekton/run/0/status"];
const step = (i: number) => [
  "-wait_file", `/tekton/run/${i - 1}/out`, "-post_file", `/tekton/run/${i}/out`,
  "-termination_path", "/tekton/termination", "-step_metadata_dir", `/tekton/run/${i}/status`,
];

const VECTORS: [string, string[], number?][] = [
  ["1 simple", [...READY, ...STEP0, "-entrypoint", "cmd", "--"]],
  ["2 with service account", [...READY, ...STEP0,
    "-basic-docker=multi-creds=https://docker.io", "-basic-docker=multi-creds=https://us.gcr.io",
    "-basic-git=multi-creds=github.com", "-basic-git=multi-creds=gitlab.com", "-entrypoint", "cmd", "--"]],
  ["3 script and stepTemplate, step 0", [...READY, ...STEP0, "-entrypoint", "/tekton/scripts/script-0-9l9zj", "--", "template", "args"]],
  ["3 script and stepTemplate, step 2", [...step(2), "-entrypoint", "regular", "--", "command", "template", "args"]],
  ["5 step-with-timeout", [...READY, ...STEP0, "-timeout", "1s", "-entrypoint", "cmd", "--"]],
  ["5 step-with-timeout 0s", [...READY, ...STEP0, "-timeout", "0s", "-entrypoint", "cmd", "--"]],
  ["6 sidecar logs", [...READY, ...STEP0, "-result_from", "sidecar-logs", "-results", "foo", "-entrypoint", "cmd", "--"]],
  ["7 sidecar logs with step results", [...READY, ...STEP0, "-result_from", "sidecar-logs", "-step_results", "step-foo", "-results", "foo", "-entrypoint", "cmd", "--"]],
  ["9 debug breakpoint onFailure", [...READY, ...STEP0, "-breakpoint_on_failure", "-entrypoint", "cmd", "--"]],
  // Refused as Tekton's build without SPIRE refuses it: exit 1, one line, nothing run.
  ["10 spire enabled", [...READY, ...STEP0, "-enable_spire", "-entrypoint", "cmd", "--"], 1],
  ["11 multi-element command", [...step(1), "-entrypoint", "cmd1", "--", "cmd2", "cmd3", "arg1", "arg2"]],
  ["12 no wait", ["-post_file", "/tekton/run/0/out", "-termination_path", "/tekton/termination", "-step_metadata_dir", "/tekton/run/0/status", "-entrypoint", "cmd", "--", "arg1", "arg2"]],
  ["15 step action results", [...READY, ...STEP0, "-step_results", "sub", "-results", "sum", "-entrypoint", "cmd", "--", "arg1", "arg2"]],
  ["16 step when", [...READY, ...STEP0, "--when_expressions", '[{"input":"foo","operator":"in","values":["foo","bar"]}]', "-entrypoint", "cmd", "--", "arg1", "arg2"]],
  ["17 results", [...READY, ...STEP0, "-results", "sum,sub", "-entrypoint", "cmd", "--", "arg1", "arg2"]],
  ["18 on error continue", [...READY, ...STEP0, "-on_error", "continue", "-entrypoint", "cmd", "--"]],
  ["18 on error stopAndFail, step 1", [...step(1), "-on_error", "stopAndFail", "-entrypoint", "cmd", "--"]],
  ["19 stdout/stderr paths, step 2", [...step(2), "-stdout_path", "step-3-out", "-stderr_path", "step-3-err", "-entrypoint", "cmd", "--", "arg1", "arg2"]],
  ["20 compressed termination message", [...READY, ...STEP0, "-compress_termination_message=true", "-entrypoint", "cmd", "--"]],
];

/** A pod's /tekton under `dir`, with everything the vectors need in place, and a PATH holding the image's commands. */
function pod() {
  const dir = tempDir();
  const root = join(dir, "tekton");
  const bin = join(dir, "bin");
  for (const folder of ["downward", "run/0", "run/1", "scripts", "creds", "creds-secrets/multi-creds", "results", "home", "work"]) {
    mkdirSync(join(root, folder), { recursive: true });
  }
  mkdirSync(bin);
  writeFileSync(join(root, "downward/ready"), "READY");
  writeFileSync(join(root, "run/0/out"), ""); // the previous steps of the middle-step vectors are done
  writeFileSync(join(root, "run/1/out"), "");
  writeFileSync(join(root, "creds-secrets/multi-creds/username"), "foo");
  writeFileSync(join(root, "creds-secrets/multi-creds/password"), "BestEver");
  const program = `#!/bin/sh\necho "$(basename "$0") $*" >> ${dir}/ran\n`;
  for (const name of ["cmd", "cmd1", "regular"]) writeFileSync(join(bin, name), program, { mode: 0o755 });
  writeFileSync(join(root, "scripts", "script-0-9l9zj"), program, { mode: 0o755 });
  chmodSync(join(root, "scripts", "script-0-9l9zj"), 0o755);
  const env = cleanEnv({ BATON_TEKTON_ROOT: root, HOME: join(root, "home"), PATH: `${bin}:${process.env.PATH}` });
  return { dir, root, env };
}

for (const [name, vector, expected = 0] of VECTORS) {
  test(`pod builder vector ${name}: runs as PID 1 (exit ${expected})`, async () => {
    const { dir, root, env } = pod();
    const argv = vector.map((word) => word.replace(/^\/tekton\//, `${root}/`).replace(/=\/tekton\//, `=${root}/`));
    const exit = await runBaton(argv, { env, pid1: IS_ROOT, cwd: join(root, "work") });
    assert.equal(exit.code, expected, exit.stderr);
    if (expected === 0) {
      assert.equal(exit.stderr, "");
      assert.match(readFileSync(join(dir, "ran"), "utf8"), /^(cmd|cmd1|regular|script-0-9l9zj) /);
      const post = argv[argv.indexOf("-post_file") + 1]!;
      assert.equal(existsSync(post), true, `${post} was written`);
    } else {
      assert.equal(exit.stderr, "baton: -enable_spire: baton does not sign results with SPIRE (as Tekton's build without SPIRE, it refuses the flag)\n");
      assert.equal(existsSync(join(dir, "ran")), false);
      assert.equal(existsSync(join(root, "run/0/out.err")), true);
    }
  });
}

test("TestOrderContainersWithResultsSidecarLogs' made-up -dont_send_results_to_termination_path is refused, as Tekton does", async () => {
  const { root, env } = pod();
  const exit = await runBaton(["-post_file", join(root, "run/2/out"), "-dont_send_results_to_termination_path", "-entrypoint", "cmd", "--"], { env });
  assert.equal(exit.code, 2);
  assert.equal(exit.stderr, "baton: unknown Tekton entrypoint flag -dont_send_results_to_termination_path (see baton --help)\n");
});
