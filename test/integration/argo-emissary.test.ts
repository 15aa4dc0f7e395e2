// `baton emissary` as Argo's controller starts it, on the bundle as a real process. The first block replays Argo's own
// emissary tests (cmd/argoexec/commands/emissary_test.go: the same templates, scripts and expected files and codes),
// with a temporary folder for /var/run/argo and for their /tmp paths.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { brotliDecompressSync } from "node:zlib";
import { BATON, IS_ROOT, NO_STANDALONE, STANDALONE, fileAppears, handlersInstalled, join, readOr, runBaton, tempDir, waitFor } from "./helpers.js";
import { argoPod, writeSignal } from "./argo-helpers.js";
import { bundleLayout } from "../../scripts/bundle-layout.mjs";

const capture = { ARGO_INCLUDE_SCRIPT_OUTPUT: "true" };

test("Argo's vectors: Exit0, Exit1: the exit code in ctr/main/exitcode (no newline) and as baton's own", async () => {
  const pod = argoPod();
  pod.template({});
  const ok = await pod.start("main", ["sh", "-c", "exit"], capture).exited;
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(pod.read("main", "exitcode"), "0");
  const failed = await pod.start("main", ["sh", "-c", "exit 1"], capture).exited;
  assert.equal(failed.code, 1);
  assert.equal(pod.read("main", "exitcode"), "1");
});

test("a container the controller gave no name (a sidecar a podSpecPatch adds, as injectors do) runs its command with ctr/ as its folder, as Argo's emissary (Argo's e2e TestInjectedSidecar)", async () => {
  for (const name of [undefined, ""]) {
    const pod = argoPod();
    pod.template({});
    const run = await pod.start("main", ["sh", "-c", "exit 3"], { ARGO_CONTAINER_NAME: name }).exited;
    assert.equal(run.code, 3, run.stderr);
    assert.equal(run.stderr, "");
    assert.equal(readFileSync(join(pod.root, "ctr", "exitcode"), "utf8"), "3");
  }
});

test("once the emissary has exited, reading every file of ctr/main (cat ctr/main/*) ends: its wake FIFO went with it (bundle and standalone)", async () => {
  for (const baton of [[process.execPath, BATON], ...(NO_STANDALONE ? [] : [[STANDALONE]])]) {
    for (const command of [["true"], ["false"], ["no-such-command-anywhere"]]) {
      const pod = argoPod();
      pod.template({});
      const exit = await pod.start("main", command, {}, { baton }).exited;
      assert.equal(pod.read("main", "exitcode"), String(exit.code), exit.stderr);
      assert.deepEqual(readdirSync(pod.dir("main")).filter((name) => name.endsWith(".baton-wake")), [], `${baton.at(-1)} ${command[0]}`);
      const cat = await runBaton([], { baton: ["timeout", "10", "sh", "-c", `cat ${pod.dir("main")}/* > /dev/null`] });
      assert.equal(cat.code, 0, cat.stderr);
    }
  }
});

test("an output parameter whose place in outputs/ is a folder: exit 64, one line, and no temporary file left there (bundle and standalone)", async () => {
  for (const baton of [[process.execPath, BATON], ...(NO_STANDALONE ? [] : [[STANDALONE]])]) {
    const pod = argoPod();
    const value = join(pod.root, "value");
    writeFileSync(value, "v");
    pod.template({ outputs: { parameters: [{ name: "p", valueFrom: { path: value } }] } });
    const place = join(pod.root, "outputs", "parameters", value);
    mkdirSync(place, { recursive: true });
    const exit = await pod.start("main", ["true"], {}, { baton }).exited;
    assert.equal(exit.code, 64, exit.stderr);
    assert.match(exit.stderr, /^baton: failed to save parameter .*EISDIR\)\n$/);
    assert.deepEqual(readdirSync(dirname(place)).filter((name) => name.endsWith(".tmp")), [], `${baton.at(-1)}: a temporary left`);
  }
});

test("Argo's vectors: Stdout, Combined: captured in ctr/main/stdout and ctr/main/combined", async () => {
  const pod = argoPod();
  pod.template({});
  await pod.start("main", ["sh", "-c", "echo hello"], capture).exited;
  assert.match(pod.read("main", "stdout")!, /hello/);
  await pod.start("main", ["sh", "-c", "echo hello > /dev/stderr"], capture).exited;
  assert.match(pod.read("main", "combined")!, /hello/);
  assert.equal(pod.read("main", "stdout"), "hello\n", "stderr is not in stdout");
});

test("Argo's vectors: Sub-process: a background child does not hold the exit, stdout is exactly `hello`", { skip: !IS_ROOT && "needs root" }, async () => {
  const pod = argoPod();
  pod.template({});
  // As PID 1, so the sleep 60 left behind dies with the namespace.
  const run = await pod.start("main", ["sh", "-c", `(sleep 60; echo 'should not wait for sub-process')& echo "hello\\c"`], capture, { pid1: true }).exited;
  assert.equal(run.code, 0, run.stderr);
  assert.equal(pod.read("main", "stdout"), "hello");
});

test("Argo's vectors: Signal: 15 and 9 in ctr/main/signal end `sleep` with 143 and 137", async () => {
  for (const signal of [15, 9]) {
    const pod = argoPod();
    pod.template({});
    writeSignal(pod, "main", signal); // written before the emissary starts, as Argo's test does
    const run = await pod.start("main", ["sh", "-c", "sleep 30"], capture).exited;
    assert.equal(run.code, 128 + signal, run.stderr);
    assert.equal(pod.read("main", "exitcode"), String(128 + signal));
    assert.equal(pod.read("main", "signal"), undefined, "the signal file is deleted once read");
  }
});

test("Argo's vectors: Artifact, ArtifactWithTrailingAndLeadingSlash, Parameter: outputs/ of `main`", async () => {
  const pod = argoPod();
  const tmp = tempDir();
  for (const path of [`${tmp}/artifact`, `${tmp}/artifact/`]) {
    pod.template({ outputs: { artifacts: [{ path }] } });
    const run = await pod.start("main", ["sh", "-c", `echo hello > ${tmp}/artifact`], capture).exited;
    assert.equal(run.code, 0, run.stderr);
    const tgz = join(pod.root, "outputs/artifacts", `${tmp}/artifact.tgz`);
    assert.ok(statSync(tgz).size > 0);
    assert.equal(execFileSync("tar", ["-xzOf", tgz, "artifact"], { encoding: "utf8" }), "hello\n");
  }
  pod.template({ outputs: { parameters: [{ valueFrom: { path: `${tmp}/parameter` } }] } });
  await pod.start("main", ["sh", "-c", `echo hello > ${tmp}/parameter`], capture).exited;
  assert.match(readFileSync(join(pod.root, "outputs/parameters", tmp, "parameter"), "utf8"), /hello/);
});

/** Argo's cmd/argoexec/commands/test/containerSetRetryTest.sh: fails the first time, succeeds once test.txt exists. */
const RETRY_SCRIPT = `FILE=test.txt
if test -f "$FILE"; then
    echo "$FILE exists."
    exit 0
else
    touch $FILE
    echo "$FILE don't exists."
    exit 1
fi`;

test("Argo's vectors: RetryContainerSetFail (retries 1) and RetryContainerSetSuccess (retries 2)", async () => {
  for (const [retries, code] of [[1, 1], [2, 0]] as const) {
    const pod = argoPod();
    const work = tempDir();
    writeFileSync(join(work, "containerSetRetryTest.sh"), RETRY_SCRIPT);
    const artifact = join(work, "artifact");
    writeFileSync(artifact, "x");
    pod.template({ outputs: { artifacts: [{ path: `${artifact}/` }] }, containerSet: { containers: [{ name: "main" }], retryStrategy: { retries } } });
    const run = await pod.start("main", ["sh", "./containerSetRetryTest.sh", artifact], capture, { cwd: work }).exited;
    assert.equal(run.code, code, `retries ${retries}: ${run.stderr}`);
    assert.equal(pod.read("main", "exitcode"), String(code));
    assert.ok(statSync(join(pod.root, "outputs/artifacts", `${artifact}.tgz`)).size > 0);
    // Appended across attempts (O_APPEND).
    assert.equal(pod.read("main", "stdout"), retries === 1 ? "test.txt don't exists.\n" : "test.txt don't exists.\ntest.txt exists.\n");
  }
});

test("ctr/NAME/ is made 0777 and exitcode is 0644, whatever the umask; the command runs with umask 0", async () => {
  const pod = argoPod();
  pod.template({});
  const run = await pod.start("main", ["sh", "-c", "umask"], capture).exited;
  assert.equal(run.stdout.trim(), "0000");
  assert.equal(statSync(pod.dir("main")).mode & 0o777, 0o777);
  assert.equal(statSync(join(pod.dir("main"), "exitcode")).mode & 0o777, 0o644);
  assert.equal(statSync(join(pod.dir("main"), "stdout")).mode & 0o777, 0o666);
});

test("the template comes from ARGO_TEMPLATE when there is no template file", async () => {
  const pod = argoPod();
  const tmp = tempDir();
  const run = await pod.start("main", ["sh", "-c", `echo v > ${tmp}/p`], { ARGO_TEMPLATE: JSON.stringify({ outputs: { parameters: [{ valueFrom: { path: `${tmp}/p` } }] } }) }).exited;
  assert.equal(run.code, 0, run.stderr);
  assert.equal(readFileSync(join(pod.root, "outputs/parameters", tmp, "p"), "utf8"), "v\n");
});

test("no template at all: exit 64, exitcode 64, one line on stderr", async () => {
  const pod = argoPod();
  const run = await pod.start("main", ["true"]).exited;
  assert.equal(run.code, 64);
  assert.equal(pod.read("main", "exitcode"), "64");
  assert.match(run.stderr, /^baton: failed to read template: neither .*template nor ARGO_TEMPLATE is available\n$/);
});

test("the command is looked up on PATH and runs with argv[0] the full path; not found: exit 64", async () => {
  const pod = argoPod();
  pod.template({});
  const run = await pod.start("main", ["sh", "-c", 'echo "$0"'], { PATH: "/usr/bin:/bin" }).exited;
  assert.equal(run.stdout, "/usr/bin/sh\n");
  const missing = await pod.start("main", ["no-such-program-here"]).exited;
  assert.equal(missing.code, 64);
  assert.equal(pod.read("main", "exitcode"), "64");
  assert.match(missing.stderr, /failed to find name in PATH: exec: "no-such-program-here": executable file not found in \$PATH/);
});

test("a signal to baton is forwarded to the command's process group: 128+N", async () => {
  const pod = argoPod();
  pod.template({});
  const ready = join(tempDir(), "ready");
  const baton = pod.start("main", ["sh", "-c", `trap 'exit 42' TERM; touch ${ready}; while :; do sleep 0.05; done`]);
  await handlersInstalled(await baton.hostPid());
  await fileAppears(ready);
  baton.child.kill("SIGTERM");
  const run = await baton.exited;
  assert.equal(run.code, 42);
  assert.equal(pod.read("main", "exitcode"), "42");
});

test("kill: prints Go's signal name and signals the pid; a bad number exits 64", async () => {
  const sleeper = execFileSync("sh", ["-c", "sleep 30 >/dev/null 2>&1 & echo $!"], { encoding: "utf8" }).trim();
  const run = await runBaton(["kill", "15", sleeper]);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, `killing ${sleeper} with terminated\n`);
  assert.ok(!existsSync(`/proc/${sleeper}`) || readFileSync(`/proc/${sleeper}/stat`, "utf8").includes(") Z"), "the sleep got SIGTERM");
  const bad = await runBaton(["kill", "TERM", "1"]);
  assert.equal(bad.code, 64);
  assert.match(bad.stderr, /^baton: kill: strconv\.Atoi: parsing "TERM": invalid syntax\n$/);
  const gone = await runBaton(["kill", "9", "999999999"]);
  assert.equal(gone.code, 64);
});

test("as PID 1: a signal is forwarded to the command's group, and orphans the command leaves are reaped", { skip: !IS_ROOT && "needs root for a PID namespace" }, async () => {
  const pod = argoPod();
  pod.template({});
  const work = tempDir();
  // The orphan: a child of a subshell that exits at once, so it is re-parented to PID 1 (baton) and exits there.
  const script = `(true &); (sh -c 'exit 0' &); sleep 0.2; touch ${work}/ready; trap 'exit 42' TERM; while :; do sleep 0.05; done`;
  const baton = pod.start("main", ["sh", "-c", script], {}, { pid1: true });
  const pid = await baton.hostPid();
  await handlersInstalled(pid);
  await fileAppears(join(work, "ready"));
  const zombies = () =>
    readdirSync("/proc").filter((p) => {
      const stat = readOr(`/proc/${p}/stat`, "");
      const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      return /^\d+$/.test(p) && state === "Z" && ppid === String(pid);
    });
  await waitFor(() => (zombies().length === 0 ? true : undefined), "the orphans to be reaped");
  process.kill(pid, "SIGTERM");
  const run = await baton.exited;
  assert.equal(run.code, 42, run.stderr);
  assert.equal(pod.read("main", "exitcode"), "42");
});

test("kill 15 1 run inside the container (as the controller does over pods/exec) stops the command through PID 1", { skip: !IS_ROOT && "needs root for a PID namespace" }, async () => {
  const pod = argoPod();
  pod.template({});
  const work = tempDir();
  const baton = pod.start("main", ["sh", "-c", `trap 'exit 7' TERM; touch ${work}/ready; while :; do sleep 0.05; done`], {}, { pid1: true });
  const pid = await baton.hostPid();
  await handlersInstalled(pid);
  await fileAppears(join(work, "ready"));
  const kill = execFileSync("nsenter", ["--target", String(pid), "--pid", "--", process.execPath, BATON, "kill", "15", "1"], { encoding: "utf8" });
  assert.equal(kill, "killing 1 with terminated\n");
  const run = await baton.exited;
  assert.equal(run.code, 7, run.stderr);
  assert.equal(pod.read("main", "exitcode"), "7");
});

test("retries below 1 still run the command once (Argo runs nothing and reports 0); a signal ends a debug pause with 64", async () => {
  const pod = argoPod();
  const work = tempDir();
  pod.template({ containerSet: { containers: [{ name: "main" }], retryStrategy: { retries: 0 } } });
  const once = await pod.start("main", ["sh", "-c", `echo x >> ${work}/ran; exit 4`]).exited;
  assert.equal(once.code, 4);
  assert.equal(readFileSync(join(work, "ran"), "utf8"), "x\n");
  pod.template({});
  const paused = pod.start("main", ["touch", join(work, "paused-ran")], { ARGO_DEBUG_PAUSE_BEFORE: "true" });
  await fileAppears(join(pod.dir("main"), "exitcode.baton-live"));
  await handlersInstalled(await paused.hostPid());
  paused.child.kill("SIGTERM");
  const ended = await paused.exited;
  assert.equal(ended.code, 64);
  assert.match(ended.stderr, /failed waiting for debug-pause-before marker: stopped by signal SIGTERM/);
  assert.equal(pod.read("main", "exitcode"), "64");
  assert.ok(!existsSync(join(work, "paused-ran")));
});

test("a plain step does not carry the emissary's code: it is in the Argo chunk, a payload the step never parses", () => {
  const bundle = readFileSync(BATON, "latin1");
  const code = bundleLayout(bundle).program;
  const lines = bundle.split("\n");
  const mark = lines.findIndex((line) => /^\/\/@baton-chunk baton-argo\.cjs [0-9a-f]{64} [0-9a-f]{8}$/.test(line));
  assert.ok(mark > 0, "the payload holds the Argo chunk");
  const chunk = brotliDecompressSync(Buffer.from(lines[mark + 1]!.slice(2), "base64")).toString("utf8");
  // Words of the emissary's code (its offloaded arguments, its tar headers, its debug pause's message), each checked
  // to be in the chunk: a word the code no longer writes as one string would make the check below one that cannot fail.
  for (const word of ["argo_arg_", "PaxHeaders", "failed waiting for debug-pause-"]) {
    assert.ok(chunk.includes(word), `${word} is not in the Argo chunk: pick a word its code writes`);
    assert.ok(!code.includes(word), `${word} is in the bundle's code`);
  }
});

test("a template that archives its logs captures stdout and combined without ARGO_INCLUDE_SCRIPT_OUTPUT; neither: nothing is captured", async () => {
  const pod = argoPod();
  pod.template({ archiveLocation: { archiveLogs: true } });
  assert.equal((await pod.start("main", ["sh", "-c", "echo out; echo err >&2"]).exited).code, 0);
  assert.equal(pod.read("main", "stdout"), "out\n");
  assert.match(pod.read("main", "combined")!, /^(out\nerr\n|err\nout\n)$/);
  const plain = argoPod();
  plain.template({});
  assert.equal((await plain.start("main", ["echo", "out"]).exited).stdout, "out\n");
  assert.equal(plain.read("main", "stdout"), undefined);
  assert.equal(plain.read("main", "combined"), undefined);
});
