// Exit codes and bad input: each case gives the documented code and exactly one "baton: ..." line, never a stack.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { BATON, NO_STANDALONE, STANDALONE, cleanEnv, existsSync, join, readJson, runBaton, tempDir } from "./helpers.js";

function assertOneLine(stderr: string, pattern: RegExp): void {
  const lines = stderr.split("\n").filter(Boolean);
  assert.equal(lines.length, 1, `expected one line on stderr, got:\n${stderr}`);
  assert.match(lines[0]!, /^baton: /);
  assert.match(lines[0]!, pattern);
  assert.doesNotMatch(stderr, /\n\s+at /, "no stack trace");
}

test("exits with the command's own code and hands on POST.err", async () => {
  const dir = tempDir();
  const exit = await runBaton(["--post-file", join(dir, "post"), "--", "sh", "-c", "exit 7"]);
  assert.equal(exit.code, 7);
  assert.equal(exit.stderr, "");
  const record = readJson(join(dir, "post.err"));
  assert.equal(record.exitCode, 7);
  assert.equal(record.reason, "Error");
});

test("gives 128+N when the command dies of signal N", async () => {
  const exit = await runBaton(["--", "sh", "-c", "kill -KILL $$"]);
  assert.equal(exit.code, 137);
});

test("gives 127 and one line when the command is not found, and still writes POST.err", async () => {
  const dir = tempDir();
  const exit = await runBaton(["--post-file", join(dir, "post"), "--step-metadata-dir", join(dir, "meta"), "--", "no-such-command-anywhere"]);
  assert.equal(exit.code, 127);
  assertOneLine(exit.stderr, /command not found: no-such-command-anywhere/);
  assert.equal(readJson(join(dir, "post.err")).exitCode, 127);
});

test("gives 126 and one line when the command is not executable", async () => {
  const dir = tempDir();
  writeFileSync(join(dir, "script"), "#!/bin/sh\necho hi\n");
  chmodSync(join(dir, "script"), 0o644);
  const exit = await runBaton(["--post-file", join(dir, "post"), "--", join(dir, "script")]);
  assert.equal(exit.code, 126);
  assertOneLine(exit.stderr, /cannot be executed/);
  assert.equal(readJson(join(dir, "post.err")).exitCode, 126);
});

test("a script with no #! line runs under /bin/sh, named by its path or found in PATH, as execvp runs it", async () => {
  const dir = tempDir();
  const bin = join(dir, "bin");
  mkdirSync(bin);
  writeFileSync(join(bin, "plain-script"), 'echo "ran $0 $*"\nexit 5\n', { mode: 0o755 });
  const byPath = await runBaton(["--", join(bin, "plain-script"), "a", "b"]);
  assert.equal(byPath.code, 5, byPath.stderr);
  assert.equal(byPath.stdout, `ran ${join(bin, "plain-script")} a b\n`);
  const found = await runBaton(["--", "plain-script", "c"], { env: cleanEnv({ PATH: `${bin}:${process.env.PATH}` }) });
  assert.equal(found.code, 5, found.stderr);
  assert.equal(found.stdout, `ran ${join(bin, "plain-script")} c\n`);
});

test("the command inherits none of baton's own descriptors: its folders, liveness lock, event loop", async () => {
  const dir = tempDir();
  writeFileSync(join(dir, "prev"), "");
  const exit = await runBaton(["--wait-file", join(dir, "prev"), "--post-file", join(dir, "post"), "--", "sh", "-c", 'for f in /proc/$$/fd/*; do readlink "$f"; done; exit 0']);
  assert.equal(exit.code, 0, exit.stderr);
  const targets = exit.stdout.split("\n").filter(Boolean);
  assert.ok(targets.length >= 3, exit.stdout);
  assert.deepEqual(targets.filter((t) => t.includes(dir) || t.startsWith("anon_inode:")), []);
});

test("--entrypoint names the program; the words after -- are its arguments", async () => {
  const dir = tempDir();
  const exit = await runBaton(["--entrypoint", "sh", "--", "-c", `echo "$0" > ${dir}/out`, "from-args"]);
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(readFileSync(join(dir, "out"), "utf8"), "from-args\n");
});

const usageCases: [string, (dir: string) => string[], RegExp][] = [
  ["an unknown flag", (d) => ["--post-file", join(d, "post"), "--bogus", "--", "true"], /unknown option --bogus/],
  ["a single-dash unknown flag", (d) => ["--post-file", join(d, "post"), "-x", "--", "true"], /unknown option -x/],
  ["a missing command", (d) => ["--post-file", join(d, "post")], /no command to run/],
  ["a bad duration", (d) => ["--post-file", join(d, "post"), "--wait-timeout", "5 minutes", "--", "true"], /invalid --wait-timeout "5 minutes"/],
  ["a flag without its value", (d) => ["--post-file", join(d, "post"), "--wait-file"], /--wait-file needs a value/],
  ["a bad --on-error", (d) => ["--post-file", join(d, "post"), "--on-error", "ignore", "--", "true"], /invalid --on-error "ignore"/],
  ["a DURATION without a unit", (d) => ["--post-file", join(d, "post"), "--timeout", "5", "--", "true"], /invalid --timeout "5"/],
  ["a wait file that is a directory", (d) => ["--post-file", join(d, "post"), "--wait-file", d, "--", "true"], /wait file .* is a directory/],
  ["a wait file below a file", (d) => (writeFileSync(join(d, "post.d"), ""), ["--post-file", join(d, "post"), "--wait-file", join(d, "post.d", "x", "prev"), "--", "true"]), /can never appear: .*post\.d is a file/],
  ["a wait file with a trailing slash", (d) => ["--post-file", join(d, "post"), "--wait-file", `${d}/prev/`, "--", "true"], /ends with "\/"/],
  // Audit finds: stat(2) says ENAMETOOLONG for ever, which a wait took for "not there yet".
  ["a wait file with a name over 255 bytes", (d) => ["--post-file", join(d, "post"), "--wait-file", join(d, "w".repeat(256)), "--", "true"], /can never appear: a name in it is over 255 bytes/],
  ["a wait file with a path over PATH_MAX", (d) => ["--post-file", join(d, "post"), "--wait-file", join(d, ...Array(21).fill("w".repeat(200)), "x"), "--", "true"], /can never appear: its path is over 4095 bytes/],
  // Found only once the command had run, before (an audit's find).
  ["a termination path with a trailing slash", (d) => ["--post-file", join(d, "post"), "--termination-path", `${d}/term/`, "--", "true"], /--termination-path .* ends with "\/"/],
];

for (const [name, args, pattern] of usageCases) {
  test(`a usage error for ${name}: exit 2, one line, POST.err so the chain ends`, async () => {
    const dir = tempDir();
    const exit = await runBaton(args(dir));
    assert.equal(exit.code, 2);
    assertOneLine(exit.stderr, pattern);
    assert.equal(readJson(join(dir, "post.err")).exitCode, 2);
    assert.equal(existsSync(join(dir, "post")), false);
  });
}

test("a post-file location that cannot exist is a usage error before anything waits or runs", async () => {
  const dir = tempDir();
  writeFileSync(join(dir, "file"), "");
  const exit = await runBaton(["--post-file", join(dir, "file/sub/post"), "--wait-file", join(dir, "never"), "--", "touch", join(dir, "ran")]);
  assert.equal(exit.code, 2);
  assertOneLine(exit.stderr, /cannot create folder .* for --post-file/);
  assert.equal(existsSync(join(dir, "ran")), false);
});

test("a wait or post file whose name is not UTF-8 is a usage error, not a wait for a name nobody writes (an audit's find)", async () => {
  const dir = tempDir();
  // Node would decode the byte 0xff to U+FFFD: baton would wait for, or write, a name other than the one given.
  for (const [option, rest] of [["--wait-file", `--post-file ${dir}/post`], ["--post-file", ""]] as const) {
    const script = `exec "$@" ${option} "$(printf '${dir}/n\\377')" ${rest} -- touch ${dir}/ran`;
    const exit = await runBaton([], { baton: ["sh", "-c", script, "sh", process.execPath, BATON] });
    assert.equal(exit.code, 2, exit.stderr);
    assertOneLine(exit.stderr, new RegExp(`${option.slice(2).replace("-", " ")} ".*" is not UTF-8: baton takes UTF-8 paths only`));
    assert.equal(existsSync(join(dir, "ran")), false);
  }
});

test("a command killed by a real-time signal (no name in Node) gives 128+N, not 1 (an audit's find)", async () => {
  const dir = tempDir();
  const exit = await runBaton(["--post-file", join(dir, "post"), "--", "sh", "-c", "kill -34 $$"]);
  assert.equal(exit.code, 128 + 34, exit.stderr);
  assert.equal(readJson(join(dir, "post.err")).exitCode, 128 + 34);
});

for (const [build, baton, skip] of [["the bundle", undefined, false], ["the standalone build", [STANDALONE], NO_STANDALONE]] as const) {
  test(`${build}: a captured command killed by a real-time signal gives 128+N and POST.err, not 0 and POST (Node's child_process calls that death exit 0)`, { skip }, async () => {
    const dir = tempDir();
    const options = baton ? { baton: [...baton] } : {};
    const command = ["sh", "-c", "echo before; kill -37 $$"];
    for (const capture of [["--stdout-path", join(dir, "out")], ["--stderr-path", join(dir, "err")]]) {
      const post = join(dir, `post${capture[0]}`);
      const exit = await runBaton(["--post-file", post, ...capture, "--", ...command], options);
      assert.equal(exit.code, 128 + 37, exit.stderr);
      assert.equal(readJson(`${post}.err`).exitCode, 128 + 37);
      assert.equal(existsSync(post), false);
    }
    assert.equal(readFileSync(join(dir, "out"), "utf8"), "before\n");
    // Tekton's argument vector with -stdout_path, and the emissary with its capture files.
    const tekton = await runBaton(["-post_file", join(dir, "tekton"), "-termination_path", join(dir, "termination"), "-stdout_path", join(dir, "tekton-out"), "-entrypoint", "sh", "--", ...command.slice(1)], options);
    assert.equal(tekton.code, 128 + 37, tekton.stderr);
    assert.equal(existsSync(join(dir, "tekton.err")), true);
    const argo = join(dir, "argo");
    const env = cleanEnv({ BATON_ARGO_ROOT: argo, ARGO_CONTAINER_NAME: "main", ARGO_INCLUDE_SCRIPT_OUTPUT: "true", ARGO_TEMPLATE: "{}" });
    const emissary = await runBaton(["emissary", "--", ...command], { ...options, env });
    assert.equal(emissary.code, 128 + 37, emissary.stderr);
    assert.equal(readFileSync(join(argo, "ctr/main/exitcode"), "utf8"), String(128 + 37));
    assert.equal(readFileSync(join(argo, "ctr/main/stdout"), "utf8"), "before\n");
  });
}

test("a post file with a trailing slash is a usage error before the command runs", async () => {
  const dir = tempDir();
  const exit = await runBaton(["--post-file", `${dir}/post/`, "--", "touch", join(dir, "ran")]);
  assert.equal(exit.code, 2);
  assertOneLine(exit.stderr, /post file .*\/post\/ ends with "\/": name a file/);
  assert.equal(existsSync(join(dir, "ran")), false);
});

test("a post file that is a directory is a usage error", async () => {
  const dir = tempDir();
  mkdirSync(join(dir, "post"));
  const exit = await runBaton(["--post-file", join(dir, "post"), "--", "touch", join(dir, "ran")]);
  assert.equal(exit.code, 2);
  assertOneLine(exit.stderr, /post file .* is a directory/);
  assert.equal(existsSync(join(dir, "ran")), false);
});

test("--help and --version print to stdout and exit 0", async () => {
  const help = await runBaton(["--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /--wait-file PATH/);
  const version = await runBaton(["--version"]);
  assert.equal(version.code, 0);
  assert.match(version.stdout, /^baton \d+\.\d+\.\d+\n$/);
});

test("a bundle copied without its addon starts the command through child_process; bytes that are not UTF-8 arrive decoded, said in one line", async () => {
  const dir = tempDir();
  const bundle = join(dir, "baton.cjs"); // no baton-reaper.node beside it
  copyFileSync(BATON, bundle);
  const raw = 'exec "$@" "$(printf "x\\377y")"';
  const exit = await runBaton(["--", "sh", "-c", 'echo "$1"; exit 3', "sh"], { baton: [process.execPath, bundle], prefix: ["sh", "-c", raw, "sh"] });
  assert.equal(exit.code, 3, exit.stderr);
  assert.equal(exit.stdout, "x\ufffdy\n");
  assertOneLine(exit.stderr, /not UTF-8, and without its addon \(.*baton-reaper\.node.*\) the command gets them as decoded text$/);
});
