// Tracing (docs/tracing.md), run as real processes against a collector in this test's process (trace-sink.ts) and the
// file form: a chain of steps is one trace, each command gets its command span's TRACEPARENT, a given TRACEPARENT
// wins, a hostile collector changes nothing of the steps and holds baton a bounded time, secrets stay out of the logs,
// and with tracing off the trace chunk is not even loaded.
import { test } from "node:test";
import { execFileSync } from "node:child_process";
import { createServer as createHttpsServer } from "node:https";
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { BATON, cleanEnv, existsSync, fileAppears, IS_ROOT, join, NO_STANDALONE, readOr, runBaton, shellWaitFor, STANDALONE, startBaton, tempDir, waitFor } from "./helpers.js";
import { argoPod } from "./argo-helpers.js";
import { readJsonSpans, readProtoResource, readProtoSpans, startSink, type Behaviour, type ReadSpan } from "./trace-sink.js";

const GIVEN = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
let pods = 0;

/** The environment of one pod's containers: its own HOSTNAME, so that its derived trace is its own. */
function podEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return cleanEnv({ HOSTNAME: `pod-${process.pid}-${++pods}-${Date.now()}`, ...extra });
}

/** A command that writes its TRACEPARENT and TRACESTATE into FILE. */
function recordContext(file: string, exit = 0): string[] {
  return ["sh", "-c", `printf '%s\\n%s' "$TRACEPARENT" "$TRACESTATE" > '${file}'; exit ${exit}`];
}

function byName(spans: ReadSpan[], name: string): ReadSpan[] {
  return spans.filter((span) => span.name === name);
}

for (const [runtime, baton, skip] of [["bundle", undefined, false], ["standalone", [STANDALONE], NO_STANDALONE]] as const) {
  test(`${runtime}: a chain of three steps is one trace; each command's TRACEPARENT is its command span`, { skip }, async () => {
    const sink = await startSink("ok");
    try {
      const dir = tempDir();
      const env = podEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_SERVICE_NAME: "pipeline", OTEL_RESOURCE_ATTRIBUTES: "team=build,k8s.namespace.name=ci" });
      const options = { env, ...(baton ? { baton: [...baton] } : {}) };
      const steps = [
        startBaton(["--wait-file", join(dir, "2"), "--post-file", join(dir, "3"), "--", ...recordContext(join(dir, "c3"))], options),
        startBaton(["--wait-file", join(dir, "1"), "--post-file", join(dir, "2"), "--", ...recordContext(join(dir, "c2"), 0)], options),
        startBaton(["--post-file", join(dir, "1"), "--", ...recordContext(join(dir, "c1"))], options),
      ];
      const exits = await Promise.all(steps.map((step) => step.exited));
      for (const exit of exits) assert.equal(exit.code, 0, exit.stderr);
      assert.equal(sink.received.length, 3, "one export per baton");
      for (const request of sink.received) {
        assert.equal(request.path, "/v1/traces");
        assert.equal(request.headers["content-type"], "application/x-protobuf");
        const resource = readProtoResource(request.body);
        assert.equal(resource["service.name"], "pipeline");
        assert.equal(resource["team"], "build");
        assert.equal(resource["telemetry.sdk.name"], "baton");
      }
      const spans = sink.received.flatMap((request) => readProtoSpans(request.body));
      const traceIds = new Set(spans.map((span) => span.traceId));
      assert.equal(traceIds.size, 1, "every span in one trace");
      const roots = byName(spans, "step");
      assert.equal(roots.length, 3);
      for (const root of roots) {
        assert.equal(root.parentSpanId, "", "a step is a root of the pod's trace");
        assert.equal(root.attributes["baton.engine"], "plain");
        assert.equal(root.attributes["baton.exit_code"], 0);
        assert.equal(root.attributes["baton.reason"], "Completed");
        const children = spans.filter((span) => span.parentSpanId === root.spanId).map((span) => span.name);
        const waits = root.attributes["baton.step.name"] === "1" ? [] : ["wait"];
        assert.deepEqual(children, ["prepare", ...waits, "command", "hand-on"], `the phases of step ${root.attributes["baton.step.name"]}`);
        for (const child of spans.filter((span) => span.parentSpanId === root.spanId)) {
          assert.ok(child.start >= root.start && child.end <= root.end, `${child.name} inside its step`);
        }
      }
      for (const n of ["1", "2", "3"]) {
        const [traceparent, tracestate] = readFileSync(join(dir, `c${n}`), "utf8").split("\n");
        const root = roots.find((span) => span.attributes["baton.step.name"] === n)!;
        const command = spans.find((span) => span.name === "command" && span.parentSpanId === root.spanId)!;
        assert.equal(traceparent, `00-${command.traceId}-${command.spanId}-01`, `step ${n}'s command nests under its command span`);
        assert.equal(tracestate, "");
        assert.equal(command.attributes["process.executable.name"], "sh");
        assert.equal(command.attributes["process.exit.code"], 0);
      }
      // Each wait ends when its predecessor's post file is there: after the predecessor's command ended.
      const wait3 = spans.find((span) => span.name === "wait" && span.attributes["baton.wait.file"] === join(dir, "2"))!;
      assert.equal(wait3.attributes["baton.wait.result"], "ready");
      const command2 = spans.find((span) => span.name === "command" && span.parentSpanId === roots.find((r) => r.attributes["baton.step.name"] === "2")!.spanId)!;
      assert.ok(wait3.end >= command2.end, "step 3 waited until step 2's command was over");
      const handOn2 = spans.find((span) => span.name === "hand-on" && span.parentSpanId === command2.parentSpanId)!;
      // Two processes' clocks (performance.timeOrigin each) may differ by up to a millisecond (src/report/events.ts).
      assert.ok(wait3.end + 2_000_000n >= handOn2.end, "step 3's wait ended after step 2's post file was in place (the hand-on span's end)");
    } finally {
      await sink.close();
    }
  });
}

test("a given TRACEPARENT wins: the step is its child, TRACESTATE goes on, the command's TRACEPARENT is replaced", async () => {
  const sink = await startSink("ok");
  try {
    const dir = tempDir();
    const exit = await runBaton(["--post-file", join(dir, "out"), "--", ...recordContext(join(dir, "ctx"))], {
      env: podEnv({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${sink.url}/custom/path`, TRACEPARENT: GIVEN, TRACESTATE: "vendor=abc,other=1" }),
    });
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(sink.received[0]?.path, "/custom/path");
    const spans = readProtoSpans(sink.received[0]!.body);
    const root = byName(spans, "step")[0]!;
    assert.equal(root.traceId, "4bf92f3577b34da6a3ce929d0e0e4736");
    assert.equal(root.parentSpanId, "00f067aa0ba902b7");
    assert.equal(root.traceState, "vendor=abc,other=1");
    const command = byName(spans, "command")[0]!;
    const [traceparent, tracestate] = readFileSync(join(dir, "ctx"), "utf8").split("\n");
    assert.equal(traceparent, `00-4bf92f3577b34da6a3ce929d0e0e4736-${command.spanId}-01`);
    assert.equal(tracestate, "vendor=abc,other=1");
  } finally {
    await sink.close();
  }
});

test("an invalid TRACEPARENT is ignored (the pod's trace instead), and its TRACESTATE not passed on", async () => {
  for (const bad of [GIVEN.toUpperCase(), `ff${GIVEN.slice(2)}`, `00-${"0".repeat(32)}-00f067aa0ba902b7-01`, GIVEN.slice(0, 50), `${GIVEN}-x`]) {
    const dir = tempDir();
    const exit = await runBaton(["--post-file", join(dir, "out"), "--", ...recordContext(join(dir, "ctx"))], {
      env: podEnv({ BATON_TRACES_DIR: join(dir, "traces"), TRACEPARENT: bad, TRACESTATE: "vendor=abc" }),
    });
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(exit.stderr, "", "no line: an invalid TRACEPARENT is not an error");
    const [file] = readdirSync(join(dir, "traces"));
    const spans = readJsonSpans(readFileSync(join(dir, "traces", file!), "utf8"));
    const root = byName(spans, "step")[0]!;
    assert.equal(root.parentSpanId, "", JSON.stringify(bad));
    assert.notEqual(root.traceId, "4bf92f3577b34da6a3ce929d0e0e4736");
    const [traceparent, tracestate] = readFileSync(join(dir, "ctx"), "utf8").split("\n");
    assert.match(traceparent!, new RegExp(`^00-${root.traceId}-[0-9a-f]{16}-01$`));
    assert.equal(tracestate, "", "TRACESTATE is dropped with an invalid TRACEPARENT");
  }
});

test("Tekton's argument vectors: engine tekton, the step's index and name (from /tekton/steps), its container, a decide phase", async () => {
  const dir = tempDir();
  const root = join(dir, "tekton");
  const run = join(root, "run");
  for (const i of [0, 1]) mkdirSync(join(run, String(i), "status"), { recursive: true });
  mkdirSync(join(root, "steps"));
  symlinkSync(join(run, "0", "status"), join(root, "steps", "step-fetch"));
  symlinkSync(join(run, "1", "status"), join(root, "steps", "step-check"));
  symlinkSync(join(run, "1", "status"), join(root, "steps", "1"));
  const env = podEnv({ BATON_TEKTON_ROOT: root, BATON_TRACES_DIR: join(dir, "traces"), KUBERNETES_SERVICE_HOST: "10.0.0.1" });
  const step = (i: number, args: string[]) => [
    ...(i > 0 ? ["-wait_file", join(run, String(i - 1), "out")] : []),
    "-post_file", join(run, String(i), "out"),
    "-termination_path", join(run, `termination-${i}`),
    "-step_metadata_dir", join(run, String(i), "status"),
    "-entrypoint", "sh", "--", ...args,
  ];
  const check = startBaton(step(1, ["-c", "echo '$(steps.step-fetch.exitCode.path)' > /dev/null"]), { env });
  const fetch = startBaton(step(0, ["-c", "true"]), { env });
  const [e0, e1] = await Promise.all([fetch.exited, check.exited]);
  assert.deepEqual([e0.code, e1.code], [0, 0], e0.stderr + e1.stderr);
  const requests = readdirSync(join(dir, "traces")).map((file) => JSON.parse(readFileSync(join(dir, "traces", file), "utf8")));
  const spans = requests.flatMap((request) => readJsonSpans(JSON.stringify(request)));
  const roots = byName(spans, "step").sort((a, b) => Number(a.attributes["baton.step.index"]) - Number(b.attributes["baton.step.index"]));
  assert.deepEqual(roots.map((r) => [r.attributes["baton.engine"], r.attributes["baton.step.index"], r.attributes["baton.step.name"]]), [["tekton", 0, "fetch"], ["tekton", 1, "check"]]);
  const containers = requests.map((request) => request.resourceSpans[0].resource.attributes.find((a: { key: string }) => a.key === "k8s.container.name")?.value.stringValue).sort();
  assert.deepEqual(containers, ["step-check", "step-fetch"]);
  assert.equal(new Set(spans.map((span) => span.traceId)).size, 1);
  const phases = spans.filter((span) => span.parentSpanId === roots[1]!.spanId).map((span) => span.name);
  assert.deepEqual(phases, ["prepare", "wait", "decide", "command", "hand-on"], "the $(steps...) substitution is the decide phase");
});

test("Tekton's credentials: their check and their writing are phases of the step", async () => {
  const dir = tempDir();
  const root = join(dir, "tekton");
  mkdirSync(join(root, "creds-secrets", "sa"), { recursive: true });
  mkdirSync(join(root, "creds"));
  mkdirSync(join(dir, "home"));
  writeFileSync(join(root, "creds-secrets", "sa", "username"), "foo");
  writeFileSync(join(root, "creds-secrets", "sa", "password"), "BestEver");
  writeFileSync(join(dir, "ready"), "READY");
  const env = podEnv({ BATON_TEKTON_ROOT: root, HOME: join(dir, "home"), BATON_TRACES_DIR: join(dir, "traces") });
  const exit = await runBaton(["-wait_file", join(dir, "ready"), "-post_file", join(root, "run/0/out"), "-termination_path", join(dir, "termination"),
    "-step_metadata_dir", join(root, "run/0/status"), "-basic-git=sa=github.com", "-entrypoint", "true", "--"], { env });
  assert.equal(exit.code, 0, exit.stderr);
  const spans = readJsonSpans(readFileSync(join(dir, "traces", readdirSync(join(dir, "traces"))[0]!), "utf8"));
  const root0 = byName(spans, "step")[0]!;
  const phases = spans.filter((span) => span.parentSpanId === root0.spanId);
  assert.deepEqual(phases.map((span) => span.name), ["prepare", "credentials", "credentials", "wait", "command", "hand-on"]);
  assert.deepEqual(byName(spans, "credentials").map((span) => span.attributes["baton.credentials"]), ["checked", "written"]);
  assert.ok(!readFileSync(join(dir, "traces", readdirSync(join(dir, "traces"))[0]!), "utf8").includes("BestEver"), "no secret in the spans");
});

test("one trace per pod without TRACEPARENT: two pods of the same name in namespaces of their own, two traces; one pod's steps, one", { skip: !IS_ROOT && "needs root for unshare" }, async () => {
  // Both pods live at once: a pod's namespace numbers are reused once it is gone (docs/tracing.md's limits), so two
  // pods one after the other could be given the same ones.
  const go = join(tempDir(), "go");
  const pods = ["a", "b"].map((pod) => {
    const dir = tempDir();
    const env = cleanEnv({ HOSTNAME: "same-name", BATON_TRACES_DIR: join(dir, "traces") });
    const first = `touch '${dir}/started'; ${shellWaitFor(go)}`;
    // A pod's containers share its network, IPC and UTS namespaces: here one shell's, for both of its steps.
    const both = `${process.execPath} ${BATON} --wait-file ${dir}/1 --post-file ${dir}/2 -- true & ${process.execPath} ${BATON} --post-file ${dir}/1 -- sh -c "${first.replace(/"/g, '\\"')}"; wait`;
    return { dir, pod, exit: runBaton(["--", "sh", "-c", both], { env, baton: ["unshare", "--net", "--ipc", "--uts"] }) };
  });
  await Promise.all(pods.map(({ dir }) => fileAppears(join(dir, "started"))));
  writeFileSync(go, "");
  const ids: string[][] = [];
  for (const { dir, pod, exit } of pods) {
    const done = await exit;
    assert.equal(done.code, 0, `${pod}: ${done.stderr}`);
    ids.push(readdirSync(join(dir, "traces")).map((file) => file.split("-")[1]!));
  }
  for (const pod of ids) assert.deepEqual(new Set(pod).size, 1, "one trace for the pod's two steps");
  assert.equal(ids[0]!.length, 2);
  assert.notEqual(ids[0]![0], ids[1]![0], "two pods, two traces, though their names are the same");
});

test("a TRACEPARENT that says not sampled: nothing sent, and the command still gets the trace (flags 00)", async () => {
  const sink = await startSink("ok");
  try {
    const dir = tempDir();
    const exit = await runBaton(["--post-file", join(dir, "out"), "--", ...recordContext(join(dir, "ctx"))], {
      env: podEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, TRACEPARENT: GIVEN.replace(/01$/, "00") }),
    });
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(sink.received.length, 0);
    assert.match(readFileSync(join(dir, "ctx"), "utf8"), /^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-00\n/);
  } finally {
    await sink.close();
  }
});

test("the file form and http/json: a failed step's spans carry the error, the reason and the exit code", async () => {
  const sink = await startSink("ok");
  try {
    const dir = tempDir();
    const exit = await runBaton(["--post-file", join(dir, "out"), "--", "sh", "-c", "exit 3"], {
      env: podEnv({ BATON_TRACES_DIR: join(dir, "traces"), OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", BATON_NAME: "build" }),
    });
    assert.equal(exit.code, 3);
    assert.equal(sink.received[0]?.headers["content-type"], "application/json");
    const files = readdirSync(join(dir, "traces"));
    assert.equal(files.length, 1);
    assert.match(files[0]!, /^baton-[0-9a-f]{32}-[0-9a-f]{16}\.jsonl$/);
    const line = readFileSync(join(dir, "traces", files[0]!), "utf8");
    assert.equal(line.split("\n").length, 2, "one line");
    assert.deepEqual(JSON.parse(line), JSON.parse(sink.received[0]!.body.toString()), "the same request both ways");
    const spans = readJsonSpans(line);
    const root = byName(spans, "step")[0]!;
    assert.equal(root.attributes["baton.step.name"], "build");
    assert.equal(root.attributes["baton.exit_code"], 3);
    assert.equal(root.attributes["baton.reason"], "Error");
    assert.equal(exit.stderr, "", "a command's failure is not baton's line");
    assert.deepEqual(root.status, { code: 2, message: "exit code 3" });
    const command = byName(spans, "command")[0]!;
    assert.equal(command.attributes["process.exit.code"], 3);
    assert.deepEqual(command.status, { code: 2, message: "exit code 3" });
  } finally {
    await sink.close();
  }
});

test("a step killed by a signal: the command span says which", async () => {
  const dir = tempDir();
  const exit = await runBaton(["--post-file", join(dir, "out"), "--", "sh", "-c", "kill -TERM $$"], { env: podEnv({ BATON_TRACES_DIR: dir }) });
  assert.equal(exit.code, 143);
  const spans = readJsonSpans(readFileSync(join(dir, readdirSync(dir).find((f) => f.endsWith(".jsonl"))!), "utf8"));
  const command = byName(spans, "command")[0]!;
  assert.equal(command.attributes["baton.signal"], "SIGTERM");
  assert.equal(command.attributes["process.exit.code"], 143);
  assert.equal(byName(spans, "step")[0]!.attributes["baton.signal"], undefined, "the command was signalled, not baton");
  assert.deepEqual(command.status, { code: 2, message: "killed by SIGTERM" });
});

test("a step stopped by a signal while it waits: the step span says the signal, its wait was stopped", async () => {
  const dir = tempDir();
  const step = startBaton(["--wait-file", join(dir, "never"), "--post-file", join(dir, "out"), "--", "true"], { env: podEnv({ BATON_TRACES_DIR: join(dir, "traces"), BATON_EVENTS: join(dir, "events") }) });
  await waitFor(() => (readOr(join(dir, "events"), "").includes('"waiting"') ? true : undefined), "the step to wait");
  step.child.kill("SIGTERM");
  const exit = await step.exited;
  assert.equal(exit.code, 143);
  const spans = readJsonSpans(readFileSync(join(dir, "traces", readdirSync(join(dir, "traces"))[0]!), "utf8"));
  const root = byName(spans, "step")[0]!;
  assert.equal(root.attributes["baton.signal"], "SIGTERM");
  assert.equal(root.attributes["baton.reason"], "Signaled");
  assert.equal(byName(spans, "wait")[0]!.attributes["baton.wait.result"], "stopped");
  assert.equal(byName(spans, "command").length, 0);
});

test("a sidecar: starting, running and stopping, and its command's TRACEPARENT is the sidecar span", async () => {
  const dir = tempDir();
  const env = podEnv({ BATON_TRACES_DIR: join(dir, "traces") });
  const sidecar = startBaton(["sidecar", "--stop-file", join(dir, "last"), "--ready-probe", `file:${join(dir, "up")}`, "--ready-file", join(dir, "ready"),
    "--", "sh", "-c", `printf %s "$TRACEPARENT" > '${join(dir, "ctx")}'; touch '${join(dir, "up")}'; exec sleep 60`], { env });
  await fileAppears(join(dir, "ready"));
  writeFileSync(join(dir, "last"), "{}");
  const exit = await sidecar.exited;
  assert.equal(exit.code, 0, exit.stderr);
  const spans = readJsonSpans(readFileSync(join(dir, "traces", readdirSync(join(dir, "traces"))[0]!), "utf8"));
  const root = byName(spans, "sidecar")[0]!;
  assert.deepEqual(spans.filter((s) => s.parentSpanId === root.spanId).map((s) => s.name), ["starting", "running", "stopping"]);
  assert.equal(readFileSync(join(dir, "ctx"), "utf8"), `00-${root.traceId}-${root.spanId}-01`);
  assert.equal(byName(spans, "running")[0]!.attributes["process.executable.name"], "sh");
});

test("baton emissary: Argo's runMainContainer span under the controller's TRACEPARENT, a wait for a dependency, the command under it", async () => {
  const sink = await startSink("ok");
  try {
    const pod = argoPod();
    pod.template({ containerSet: { containers: [{ name: "a" }, { name: "b", dependencies: ["a"] }] } });
    const ctx = tempDir();
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, TRACEPARENT: GIVEN, ARGO_WORKFLOW_NAME: "wf-1", HOSTNAME: "wf-1-pod", KUBERNETES_SERVICE_HOST: "10.0.0.1" };
    const b = pod.start("b", recordContext(join(ctx, "b")), env);
    const a = pod.start("a", recordContext(join(ctx, "a"), 4), env);
    const [ra, rb] = await Promise.all([a.exited, b.exited]);
    assert.deepEqual([ra.code, rb.code], [4, 64], rb.stderr);
    assert.equal(sink.received.length, 2);
    for (const request of sink.received) {
      const resource = readProtoResource(request.body);
      assert.equal(resource["service.name"], "argoexec");
      assert.equal(resource["k8s.pod.name"], "wf-1-pod");
      assert.match(resource["k8s.container.name"] ?? "", /^[ab]$/);
    }
    const spans = sink.received.flatMap((request) => readProtoSpans(request.body));
    const roots = byName(spans, "runMainContainer");
    assert.equal(roots.length, 2);
    for (const root of roots) {
      assert.equal(root.traceId, "4bf92f3577b34da6a3ce929d0e0e4736");
      assert.equal(root.parentSpanId, "00f067aa0ba902b7");
      assert.equal(root.attributes["name"], "wf-1");
      assert.equal(root.attributes["namespace"], "");
      assert.equal(root.attributes["baton.engine"], "argo");
      assert.equal(root.status?.code, 2);
    }
    const rootA = roots.find((root) => root.attributes["baton.step.name"] === "a")!;
    const rootB = roots.find((root) => root.attributes["baton.step.name"] === "b")!;
    assert.equal(readFileSync(join(ctx, "a"), "utf8").split("\n")[0], `00-${rootA.traceId}-${rootA.spanId}-01`, "the command nests under runMainContainer, as in Argo");
    assert.ok(!existsSync(join(ctx, "b")), "b did not run");
    assert.deepEqual(spans.filter((span) => span.parentSpanId === rootA.spanId).map((span) => span.name), ["command"]);
    const waitB = spans.filter((span) => span.parentSpanId === rootB.spanId);
    assert.deepEqual(waitB.map((span) => span.name), ["wait"]);
    assert.equal(waitB[0]!.attributes["baton.wait.result"], "failed");
    assert.equal(rootB.attributes["baton.exit_code"], 64);
    assert.match(rootB.status!.message, /^baton: dependency "a" exited with non-zero code: 4$/);
    const commandA = byName(spans, "command")[0]!;
    assert.equal(commandA.attributes["baton.attempt"], 1);
    assert.equal(commandA.attributes["process.exit.code"], 4);
  } finally {
    await sink.close();
  }
});

/** How long a traced step may take past its export timeout: start-up, the command, a loaded machine. */
const SLACK_MS = 4000;

for (const behaviour of ["refused", "silent", "slow", "garbage", "5xx", "endless", "redirect"] as Behaviour[]) {
  test(`a collector that is ${behaviour}: the next step starts at once, exit code and post file unchanged, exit bounded`, async () => {
    const witness = await startSink("ok");
    const sink = await startSink(behaviour, `${witness.url}/v1/traces`);
    try {
      const dir = tempDir();
      const timeoutMs = 1500;
      const traced = podEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_EXPORTER_OTLP_TIMEOUT: String(timeoutMs) });
      // The next step does not trace: its command's start is the hand-off, seen from outside.
      const next = startBaton(["--wait-file", join(dir, "1"), "--post-file", join(dir, "2"), "--", "touch", join(dir, "next-ran")], { env: cleanEnv() });
      const started = performance.now();
      const first = startBaton(["--post-file", join(dir, "1"), "--", "sh", "-c", "exit 0"], { env: traced });
      await fileAppears(join(dir, "next-ran"));
      const handedOn = performance.now();
      const firstStillThere = first.child.exitCode === null;
      const exit = await first.exited;
      const took = performance.now() - started;
      assert.equal(exit.code, 0, exit.stderr);
      assert.deepEqual(Object.keys(JSON.parse(readFileSync(join(dir, "1"), "utf8"))), ["exitCode", "reason", "startedAt", "finishedAt"]);
      assert.equal(JSON.parse(readFileSync(join(dir, "1"), "utf8")).reason, "Completed");
      assert.ok(!existsSync(join(dir, "1.err")));
      assert.equal((await next.exited).code, 0);
      assert.ok(took < timeoutMs + SLACK_MS, `baton exited ${Math.round(took)} ms after its start: more than the export timeout allows`);
      if (behaviour === "silent" || behaviour === "slow") {
        assert.ok(firstStillThere, "the next step started while the first one was still exporting");
        assert.ok(took >= timeoutMs, "the export waited for its timeout");
        assert.ok(handedOn - started < took, "the hand-off did not wait for the export");
      }
      assert.equal(witness.received.length, 0, "a redirect is not followed");
      const lines = exit.stderr.trim().split("\n").filter(Boolean);
      assert.equal(lines.length, behaviour === "endless" ? 0 : 1, exit.stderr);
      if (behaviour !== "endless") assert.match(lines[0]!, new RegExp(`^baton: traces not sent to ${sink.url}/v1/traces: `));
    } finally {
      await sink.close();
      await witness.close();
    }
  });
}

test("as PID 1, a silent collector: the post file at once, the exit by the export's bound", { skip: !IS_ROOT && "needs root for a PID namespace" }, async () => {
  const sink = await startSink("silent");
  try {
    const dir = tempDir();
    const started = performance.now();
    const step = startBaton(["--post-file", join(dir, "out"), "--", "true"], { pid1: true, env: podEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_EXPORTER_OTLP_TIMEOUT: "1000" }) });
    await fileAppears(join(dir, "out"));
    const posted = performance.now();
    const exit = await step.exited;
    const took = performance.now() - started;
    assert.equal(exit.code, 0, exit.stderr);
    assert.match(exit.stderr, /^baton: traces not sent to .*: no answer within the export timeout\n$/);
    assert.ok(took - (posted - started) >= 900, "it did wait for the collector, after the post file");
    assert.ok(took < 1000 + SLACK_MS, `PID 1 exited ${Math.round(took)} ms after its start`);
  } finally {
    await sink.close();
  }
});

test("a collector whose name never resolves (DNS silent, a 30 s lookup): the exit by the bound all the same", { skip: !IS_ROOT && "needs root for namespaces" }, async () => {
  const dir = tempDir();
  const log = join(dir, "dns.log");
  // Kubernetes' resolv.conf with a long timeout, and a DNS server that drops every query (it never gets dns-ready).
  writeFileSync(join(dir, "resolv.conf"), "nameserver 127.0.0.1\nsearch ns.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5 timeout:30 attempts:1\n");
  const setUp = [
    "ip link set lo up",
    `mount --bind ${dir}/resolv.conf /etc/resolv.conf`,
    `${process.execPath} ${import.meta.dirname}/fake-dns.mjs ${dir}/dns-ready ${dir}/dns-listening ${log} </dev/null >/dev/null 2>&1 &`,
    `while [ ! -e ${dir}/dns-listening ]; do sleep 0.02; done`,
    'exec "$@"',
  ].join("\n");
  const started = performance.now();
  const step = startBaton(["--post-file", join(dir, "out"), "--", "true"], {
    env: podEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector.test:4318", OTEL_EXPORTER_OTLP_TIMEOUT: "1000" }),
    prefix: ["unshare", "--net", "--mount", "--pid", "--fork", "--mount-proc", "--kill-child", "sh", "-c", setUp, "sh"],
  });
  const exit = await step.exited;
  const took = performance.now() - started;
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(JSON.parse(readFileSync(join(dir, "out"), "utf8")).reason, "Completed");
  assert.match(readOr(log, ""), /^drop collector\.test/m, "the lookup was under way");
  assert.match(exit.stderr, /^baton: traces not sent to http:\/\/collector\.test:4318\/v1\/traces: no answer within the export timeout\n$/);
  assert.ok(took < 1000 + SLACK_MS, `baton exited ${Math.round(took)} ms after its start, its lookup holding a thread for 30 s`);
});

test("an https collector: its certificate checked (self-signed: one line, the step as without), trusted through OTEL_EXPORTER_OTLP_CERTIFICATE (bundle, standalone) or NODE_EXTRA_CA_CERTS (bundle)", async () => {
  const dir = tempDir();
  execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem")], { stdio: "ignore" });
  const received: string[] = [];
  const server = createHttpsServer({ key: readFileSync(join(dir, "key.pem")), cert: readFileSync(join(dir, "cert.pem")) }, (request, response) => {
    request.resume();
    request.on("end", () => {
      received.push(request.url ?? "");
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const endpoint = `https://127.0.0.1:${(server.address() as { port: number }).port}`;
    const untrusted = await runBaton(["--post-file", join(dir, "out1"), "--", "true"], { env: podEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }) });
    assert.equal(untrusted.code, 0, untrusted.stderr);
    assert.match(untrusted.stderr, /^baton: traces not sent to https:\/\/127\.0\.0\.1:\d+\/v1\/traces: DEPTH_ZERO_SELF_SIGNED_CERT\n$/);
    assert.equal(received.length, 0);
    const trusted = await runBaton(["--post-file", join(dir, "out2"), "--", "true"], { env: podEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, NODE_EXTRA_CA_CERTS: join(dir, "cert.pem") }) });
    assert.equal(trusted.code, 0, trusted.stderr);
    assert.equal(trusted.stderr, "");
    assert.deepEqual(received, ["/v1/traces"]);
    for (const baton of [undefined, NO_STANDALONE ? undefined : [STANDALONE]]) {
      const exit = await runBaton(["--post-file", join(dir, "out3"), "--", "true"], { env: podEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_CERTIFICATE: join(dir, "cert.pem") }), ...(baton ? { baton } : {}) });
      assert.equal(exit.code, 0, exit.stderr);
      assert.equal(exit.stderr, "");
    }
    assert.equal(received.length, NO_STANDALONE ? 2 : 3);
    const missing = await runBaton(["--post-file", join(dir, "out4"), "--", "true"], { env: podEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE: join(dir, "nope.pem") }) });
    assert.equal(missing.code, 0);
    assert.match(missing.stderr, /^baton: OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE: cannot read .*nope\.pem: .*ENOENT.*: no traces sent over HTTP\n$/);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

test("no password, query or header value of the collector's reaches stderr", async () => {
  const sink = await startSink("5xx");
  try {
    const dir = tempDir();
    const url = new URL(sink.url);
    const exit = await runBaton(["--post-file", join(dir, "out"), "--", "true"], {
      env: podEnv({
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `http://tokenuser:pa55word@${url.host}/v1/traces?api_key=QUERYSECRET`,
        OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20HEADERSECRET,x-bad=VALUE%0ASECRET2,bad name=NAMESECRET",
      }),
    });
    assert.equal(exit.code, 0);
    assert.ok(readFileSync(join(dir, "out"), "utf8").includes("Completed"));
    assert.equal(sink.received[0]?.headers.authorization, "Bearer HEADERSECRET", "the header was sent");
    assert.match(sink.received[0]!.headers["authorization"] ?? "", /HEADERSECRET/);
    assert.match(exit.stderr, new RegExp(`traces not sent to http://xxxxx@${url.host}/v1/traces: answered 503`));
    for (const secret of ["pa55word", "tokenuser", "QUERYSECRET", "HEADERSECRET", "SECRET2", "NAMESECRET"]) assert.ok(!exit.stderr.includes(secret), `${secret} in: ${exit.stderr}`);
  } finally {
    await sink.close();
  }
});

test("hostile values: control characters in OTEL_RESOURCE_ATTRIBUTES, a huge header: one line each, the step as without", async () => {
  const sink = await startSink("ok");
  try {
    const dir = tempDir();
    const exit = await runBaton(["--post-file", join(dir, "out"), "--", "true"], {
      env: podEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_RESOURCE_ATTRIBUTES: "a=1,evil=\u001b[31mred\u0007", OTEL_EXPORTER_OTLP_HEADERS: `big=${"x".repeat(100_000)}` }),
    });
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(exit.stderr.trim().split("\n").length, 2, exit.stderr);
    assert.ok(!exit.stderr.includes("\u001b"), "no escape reaches the log");
    const resource = readProtoResource(sink.received[0]!.body);
    assert.equal(resource["a"], undefined, "the whole variable is discarded");
    assert.equal(sink.received[0]!.headers["big"], undefined);
  } finally {
    await sink.close();
  }
});

test("a traces folder that cannot be written, an endpoint of 100 KB: one short line each, the step as without", async () => {
  const dir = tempDir();
  writeFileSync(join(dir, "a-file"), "");
  const sink = await startSink("ok");
  try {
    const exit = await runBaton(["--post-file", join(dir, "out"), "--", "true"], {
      env: podEnv({ BATON_TRACES_DIR: join(dir, "a-file"), OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${sink.url}/${"p".repeat(100_000)}`, TRACEPARENT: `01${GIVEN.slice(2)}-${"x".repeat(1 << 16)}` }),
    });
    assert.equal(exit.code, 0, exit.stderr.slice(0, 500));
    assert.equal(JSON.parse(readFileSync(join(dir, "out"), "utf8")).reason, "Completed");
    const lines = exit.stderr.trim().split("\n");
    assert.equal(lines.length, 2, exit.stderr.slice(0, 500));
    assert.match(lines[0]!, /^baton: traces not written to .*a-file\/baton-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}\.jsonl: /);
    assert.ok(lines[1]!.length < 400, `a line of ${lines[1]!.length} characters`);
  } finally {
    await sink.close();
  }
});

/** The scripts V8 compiled in a run of the bundle (its log's script-details), the chunks by their `#baton-NAME.cjs`. */
async function scriptsCompiled(env: NodeJS.ProcessEnv): Promise<string[]> {
  const dir = tempDir();
  const log = join(dir, "v8.log");
  const exit = await runBaton(["--post-file", join(dir, "out"), "--", "true"], {
    baton: [process.execPath, "--log-function-events", `--logfile=${log}`, "--no-logfile-per-isolate", BATON],
    env,
  });
  assert.equal(exit.code, 0, exit.stderr);
  return readOr(log, "").split("\n").map((line) => line.split(",")).filter((f) => f[0] === "script-details").map((f) => f[2] ?? "");
}

test("tracing off loads nothing of it: the trace chunk is not compiled; on, it is, without node:crypto", async () => {
  const off = await scriptsCompiled(podEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:1", OTEL_SDK_DISABLED: "true" }));
  assert.ok(!off.some((script) => script.endsWith("#baton-trace.cjs")), off.join(", "));
  assert.ok(!off.includes("node:zlib"), "no chunk was even decompressed");
  const plain = await scriptsCompiled(podEnv());
  const kept = await scriptsCompiled(podEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:1", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc", BATON_TRACES: "off" }));
  assert.ok(!kept.some((script) => script.endsWith("#baton-trace.cjs")), "BATON_TRACES=off");
  assert.ok(!plain.some((script) => script.endsWith("#baton-trace.cjs")));
  const on = await scriptsCompiled(podEnv({ BATON_TRACES_DIR: tempDir() }));
  assert.ok(on.some((script) => script.endsWith("#baton-trace.cjs")), on.join(", "));
  assert.ok(!on.includes("node:crypto"), "the pod's trace id is hashed without node:crypto");
  assert.ok(!on.includes("node:http"), "the file form loads no HTTP client");
});
