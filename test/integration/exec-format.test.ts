// A command file the kernel will not execute (ENOEXEC, "exec format error"): a script with no #! line, or another
// architecture's binary. Tekton's entrypoint and Argo's emissary start commands with Go's exec, which fails then
// (Tekton: POST.err, exit 1; Argo: exit 64); baton does the same in their modes. Plain baton runs a text file with no #!
// line under /bin/sh, as execvp, and so tini and every shell, does; an ELF binary is never handed to the shell.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { NO_STANDALONE, STANDALONE, cleanEnv, existsSync, join, readJson, runBaton, tempDir } from "./helpers.js";

/** DIR/script (no #! line: touches DIR/ran) and DIR/arm64 (an arm64 ELF header, which an x86_64 kernel refuses). */
function commandFiles(dir: string): { script: string; elf: string; ran: string } {
  const script = join(dir, "script");
  const ran = join(dir, "ran");
  writeFileSync(script, `touch '${ran}'; echo "under sh: $0 $1"\n`);
  chmodSync(script, 0o755);
  const header = Buffer.alloc(128);
  header.write("\x7fELF", 0, "latin1");
  header.set([2, 1, 1], 4); // 64-bit, little-endian, version 1
  header.writeUInt16LE(2, 16); // ET_EXEC
  header.writeUInt16LE(183, 18); // EM_AARCH64
  header.writeUInt32LE(1, 20);
  const elf = join(dir, "arm64");
  writeFileSync(elf, header);
  chmodSync(elf, 0o755);
  return { script, elf, ran };
}

function oneLine(stderr: string, pattern: RegExp): void {
  const lines = stderr.split("\n").filter(Boolean);
  assert.equal(lines.length, 1, stderr);
  assert.match(lines[0]!, pattern);
}

const EXEC_FORMAT = /^baton: .*command cannot be executed \(exec format error: no #! line, or another architecture's binary\): .* \(ENOEXEC\)$/;

for (const [build, words, skip] of [["the bundle", undefined, false], ["the standalone build", [STANDALONE], NO_STANDALONE]] as const) {
  const baton = words ? { baton: [...words] } : {};

  test(`${build}, plain: a script with no #! line runs under /bin/sh (as execvp and tini); an ELF of another architecture fails, 126`, { skip }, async () => {
    for (const capture of [[], ["--stdout-path", "out"]]) {
      const dir = tempDir();
      const { script, elf, ran } = commandFiles(dir);
      const flags = capture.length ? [capture[0]!, join(dir, capture[1]!)] : [];
      const exit = await runBaton(["--post-file", join(dir, "post"), ...flags, "--", script, "arg"], baton);
      assert.equal(exit.code, 0, exit.stderr);
      assert.equal(exit.stdout, `under sh: ${script} arg\n`);
      assert.equal(existsSync(ran), true);
      const binary = await runBaton(["--post-file", join(dir, "elf"), ...flags, "--", elf], baton);
      assert.equal(binary.code, 126, binary.stderr);
      oneLine(binary.stderr, EXEC_FORMAT);
      assert.equal(readJson(join(dir, "elf.err")).exitCode, 126);
    }
  });

  test(`${build}, Tekton's argument vector: such a file does not start (POST.err, 126, one line), as Go's exec under Tekton`, { skip }, async () => {
    for (const capture of [[], ["-stdout_path", "out"]]) {
      const dir = tempDir();
      const { script, elf, ran } = commandFiles(dir);
      const flags = capture.length ? [capture[0]!, join(dir, capture[1]!)] : [];
      for (const file of [script, elf]) {
        const post = join(dir, `post-${file === script ? "script" : "elf"}`);
        const exit = await runBaton(["-post_file", post, "-termination_path", join(dir, "termination"), ...flags, "-entrypoint", file, "--", "arg"], baton);
        assert.equal(exit.code, 126, exit.stderr);
        oneLine(exit.stderr, EXEC_FORMAT);
        assert.equal(readJson(`${post}.err`).reason, "CommandNotExecutable");
        assert.equal(existsSync(post), false);
      }
      assert.equal(existsSync(ran), false, "the script did not run");
    }
  });

  test(`${build}, the emissary: such a file does not start (exitcode 64, exit 64), as Go's exec under Argo`, { skip }, async () => {
    for (const capture of ["false", "true"]) {
      const dir = tempDir();
      const { script, elf, ran } = commandFiles(dir);
      for (const file of [script, elf]) {
        const root = join(dir, `argo-${file === script ? "script" : "elf"}`);
        const env = cleanEnv({ BATON_ARGO_ROOT: root, ARGO_CONTAINER_NAME: "main", ARGO_INCLUDE_SCRIPT_OUTPUT: capture, ARGO_TEMPLATE: "{}" });
        const exit = await runBaton(["emissary", "--", file, "arg"], { ...baton, env });
        assert.equal(exit.code, 64, exit.stderr);
        assert.match(exit.stderr, /exec format error/);
        assert.equal(readFileSync(join(root, "ctr/main/exitcode"), "utf8"), "64");
      }
      assert.equal(existsSync(ran), false, "the script did not run");
    }
  });
}
