import { test } from "node:test";
import assert from "node:assert/strict";
import { findTektonPostFile, isTektonArgv, platformCommand, translateTektonArgv } from "../../src/cli/tekton-argv.js";
import { parseStepOptions } from "../../src/cli/step-options.js";
import { BatonError } from "../../src/base/errors.js";

const usage = (fn: () => unknown, pattern: RegExp) =>
  assert.throws(fn, (e: unknown) => e instanceof BatonError && e.exitCode === 2 && pattern.test(e.message));

test("tells Tekton's argument vector from baton's by its first word", () => {
  assert.equal(isTektonArgv(["-wait_file", "/a", "--", "x"]), true);
  assert.equal(isTektonArgv(["-post_file=/p", "--", "x"]), true);
  assert.equal(isTektonArgv(["-entrypoint", "ls", "--"]), true);
  assert.equal(isTektonArgv(["--when_expressions", "[]"]), true);
  assert.equal(isTektonArgv(["--post-file", "/p", "--", "x"]), false);
  assert.equal(isTektonArgv(["-x"]), false);
  assert.equal(isTektonArgv(["--", "ls"]), false);
  assert.equal(isTektonArgv([]), false);
});

test("translates the vector Tekton's pod builder makes for a middle step", () => {
  // pkg/pod/entrypoint.go, orderContainers, step i=1 of a task with results, a step timeout, onError and stdoutConfig.
  const argv = [
    "-wait_file", "/tekton/run/0/out",
    "-post_file", "/tekton/run/1/out",
    "-termination_path", "/tekton/termination",
    "-step_metadata_dir", "/tekton/run/1/status",
    "-on_error", "continue",
    "-timeout", "1m30s",
    "-stdout_path", "/data/out.log",
    "-stderr_path", "/data/err.log",
    "-results", "digest,url",
    "-entrypoint", "/bin/sh",
    "--", "-c", "echo -wait_file is the command's -- own",
  ];
  const translated = translateTektonArgv(argv, {});
  assert.deepEqual(translated, {
    kind: "step",
    argv: [
      "--wait-file", "/tekton/run/0/out",
      "--post-file", "/tekton/run/1/out",
      "--termination-path", "/tekton/termination",
      "--step-metadata-dir", "/tekton/run/1/status",
      "--on-error", "continue",
      "--timeout", "1m30s",
      "--stdout-path", "/data/out.log",
      "--stderr-path", "/data/err.log",
      "--results", "digest,url",
      "--entrypoint", "/bin/sh",
      "--", "-c", "echo -wait_file is the command's -- own",
    ],
  });
  const options = parseStepOptions(translated.kind === "step" ? translated.argv : [], {});
  assert.deepEqual(options.command, ["/bin/sh", "-c", "echo -wait_file is the command's -- own"]);
  assert.equal(options.timeoutMs, 90_000);
  assert.equal(options.onError, "continue");
  assert.deepEqual(options.results, ["digest", "url"]);
});

test("Go's flag forms: -flag=value, --flag value, bools bare or =true/=false, comma lists, last value wins", () => {
  const translated = translateTektonArgv(
    ["-wait_file=/a,/b", "--wait_file_content=true", "-post_file", "/p1", "-post_file=/p2", "-wait_file_content=false", "-entrypoint=ls", "--"],
    {},
  );
  assert.deepEqual(translated, { kind: "step", argv: ["--wait-file", "/a", "--wait-file", "/b", "--post-file", "/p2", "--entrypoint", "ls", "--"] });
  assert.deepEqual(translateTektonArgv(["-wait_file_content", "-wait_file", "", "-entrypoint", "ls", "--"], {}), {
    kind: "step",
    argv: ["--wait-file-content", "--entrypoint", "ls", "--"],
  });
  // Go takes the next word as a value even when it starts with a dash.
  assert.deepEqual(translateTektonArgv(["-post_file", "-odd", "-entrypoint", "ls"], {}), {
    kind: "step",
    argv: ["--post-file", "-odd", "--entrypoint", "ls", "--"],
  });
});

test("-timeout \"\" is a usage error, as Go's time.ParseDuration refuses it (other empty values mean not given)", () => {
  usage(() => translateTektonArgv(["-timeout", "", "-entrypoint", "ls", "--"], {}), /-timeout: not a duration/);
  usage(() => translateTektonArgv(["-timeout=", "-entrypoint", "ls", "--"], {}), /-timeout: not a duration/);
});

test("-h and -help, either dash, anywhere among the flags ask for the help, as Go's flag package answers them", () => {
  for (const argv of [["-help"], ["--help"], ["-post_file", "/p", "-h", "-entrypoint", "ls", "--"], ["-wait_file=a", "--h"]]) {
    assert.deepEqual(translateTektonArgv(argv, {}), { kind: "help" });
  }
  // After the command's "--", they are the command's.
  assert.deepEqual(translateTektonArgv(["-entrypoint", "ls", "--", "-h"], {}), { kind: "step", argv: ["--entrypoint", "ls", "--", "-h"] });
});

test("every Tekton entrypoint flag is accepted and becomes a baton option; credential flags collect every value", () => {
  const argv = [
    "-post_file", "/tekton/run/0/out",
    "-basic-docker=multi-creds=https://docker.io", "-basic-docker=multi-creds=https://us.gcr.io",
    "-basic-git=multi-creds=github.com", "-ssh-git", "k=github.com", "--docker-config=dc", "-docker-cfg", "cfg",
    "-result_from", "sidecar-logs", "-compress_termination_message=true",
    "-step_results", "a,b", "--when_expressions", '[{"input":"foo","operator":"in","values":["foo"]}]',
    "-breakpoint_on_failure", "-debug_before_step", "-enable_spire=false", "-spire_socket_path", "unix:///x",
    "-entrypoint", "ls", "--", "-l",
  ];
  assert.deepEqual(translateTektonArgv(argv, {}), {
    kind: "step",
    argv: [
      "--post-file", "/tekton/run/0/out",
      "--result-from", "sidecar-logs", "--compress-termination-message",
      "--step-results", "a,b", "--when", '[{"input":"foo","operator":"in","values":["foo"]}]',
      "--breakpoint-on-failure", "--debug-before-step",
      "--entrypoint", "ls",
      "--basic-docker", "multi-creds=https://docker.io", "--basic-docker", "multi-creds=https://us.gcr.io",
      "--basic-git", "multi-creds=github.com", "--ssh-git", "k=github.com", "--docker-config", "dc", "--docker-cfg", "cfg",
      "--", "-l",
    ],
  });
  // Tekton compares -result_from with "termination-message" only; -results "" is what it gives a task without results.
  assert.deepEqual(translateTektonArgv(["-result_from", "typo", "-results", "", "-entrypoint", "ls", "--"], {}), {
    kind: "step",
    argv: ["--result-from", "sidecar-logs", "--entrypoint", "ls", "--"],
  });
});

test("-enable_spire is refused (exit 1, as Tekton's build without SPIRE); flags Tekton does not have are usage errors", () => {
  assert.throws(
    () => translateTektonArgv(["-enable_spire", "-entrypoint", "ls", "--"], {}),
    (e: unknown) => e instanceof BatonError && e.exitCode === 1 && /^-enable_spire: baton does not sign results with SPIRE/.test(e.message),
  );
  for (const flag of ["-secret_mask_file=/x", "-step_metadata_dir_link=/x", "-run_always", "-discard_error"]) {
    usage(() => translateTektonArgv([flag, "-entrypoint", "ls", "--"], {}), /is not a flag of Tekton's entrypoint/);
  }
  usage(() => translateTektonArgv(["-dont_send_results_to_termination_path", "-entrypoint", "ls", "--"], {}), /unknown Tekton entrypoint flag/);
  usage(() => translateTektonArgv(["-no_such_flag", "x", "--", "ls"], {}), /unknown Tekton entrypoint flag -no_such_flag/);
  usage(() => translateTektonArgv(["-wait_file_content=maybe", "--", "ls"], {}), /invalid boolean "maybe"/);
  usage(() => translateTektonArgv(["-post_file"], {}), /-post_file needs a value/);
  usage(() => translateTektonArgv(["-post_file", "/p", "stray", "--", "ls"], {}), /unexpected argument "stray"/);
});

test("subcommands after the flags: init SRC DST [STEP...] and cp SRC DST", () => {
  assert.deepEqual(translateTektonArgv(["-post_file", "/p", "init", "/ko-app/entrypoint", "/tekton/bin/entrypoint", "step-a"], {}), {
    kind: "subcommand",
    name: "init",
    args: ["/ko-app/entrypoint", "/tekton/bin/entrypoint", "step-a"],
  });
});

test("without -entrypoint, the image's command comes from TEKTON_PLATFORM_COMMANDS", () => {
  const env = { TEKTON_PLATFORM_COMMANDS: JSON.stringify({ "linux/amd64": ["/app", "serve"], "linux/arm64/v8": ["/app-arm"] }) };
  assert.deepEqual(platformCommand(env, "linux/amd64"), ["/app", "serve"]);
  assert.deepEqual(platformCommand(env, "linux/arm64"), ["/app-arm"]);
  usage(() => platformCommand(env, "linux/s390x"), /no command for platform linux\/s390x/);
  // Tekton drops the key's last part once, also when it is the architecture: "linux/amd64" finds "linux".
  assert.deepEqual(platformCommand({ TEKTON_PLATFORM_COMMANDS: '{"linux":["/any"]}' }, "linux/amd64"), ["/any"]);
  usage(() => platformCommand({ TEKTON_PLATFORM_COMMANDS: '{"linux":["/any"]}' }, "linux/arm64"), /no command for platform linux\/arm64/);
  usage(() => platformCommand({}, "linux/amd64"), /-entrypoint is missing/);
  // JSON that is valid but no object: a usage error like any malformed value, not a TypeError (an audit's find: null).
  for (const json of ["null", "1", '"x"']) {
    usage(() => platformCommand({ TEKTON_PLATFORM_COMMANDS: json }, "linux/amd64"), /TEKTON_PLATFORM_COMMANDS is not a JSON object of platforms/);
  }
  assert.deepEqual(translateTektonArgv(["-post_file", "/p", "--", "--flag"], env), {
    kind: "step",
    argv: ["--post-file", "/p", "--", ...platformCommand(env), "--flag"],
  });
});

test("findTektonPostFile digs -post_file out of a vector that failed to translate", () => {
  assert.equal(findTektonPostFile(["-post_file", "/t", "-bogus", "--", "-post_file", "/no"]), "/t");
  assert.equal(findTektonPostFile(["-post_file=/u", "-bogus"]), "/u");
  assert.equal(findTektonPostFile(["--post_file=/v"]), "/v");
  assert.equal(findTektonPostFile(["-bogus"]), undefined);
});
