// A Tekton-style pod traced to the real OpenTelemetry Collector, span by span (docs/tracing.md): three steps chained
// by post files and a sidecar wrapped by `baton sidecar`, each container a baton as PID 1 of its own namespaces in one
// pod's network, IPC and UTS namespaces, no TRACEPARENT given. Then a failing step, a killed command, a given and an
// unsampled TRACEPARENT, two pods, and the file form. What is checked is what the collector wrote, parsed from its file.
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { eventSeen, fileAppears, handlersInstalled, NO_STANDALONE, type Baton, type Exit } from "../integration/helpers.js";
import { startCollector, type Span } from "./collector.js";
import { containers, link, notAfter, show, tracePod, type Build, type Protocol, type TracePod } from "./pod.js";

const NAMES = ["fetch", "build", "test"];

/** A step's Tekton flags, as the controller writes them (pkg/pod/entrypoint.go), its command `sh -c SCRIPT`. */
function stepArgs(index: number, script: string): string[] {
  const wait = index === 0 ? ["-wait_file", "/tekton/run/web/ready", "-wait_file_content"] : ["-wait_file", `/tekton/run/${index - 1}/out`];
  return [
    ...wait,
    "-post_file",
    `/tekton/run/${index}/out`,
    "-termination_path",
    `/tekton/termination-${index}`,
    "-step_metadata_dir",
    `/tekton/run/${index}/status`,
    "-entrypoint",
    "sh",
    "--",
    "-c",
    script,
  ];
}

/** The sidecar: ready once its command made /tekton/web-up, stopped by the last step's post file (or its .err). */
const SIDECAR = [
  "sidecar",
  "--stop-file=/tekton/run/2/out",
  "--ready-probe=file:/tekton/web-up",
  "--ready-file=/tekton/run/web/ready",
  "--",
  "sh",
  "-c",
  "touch /tekton/web-up; exec sleep 60",
];

/**
 * Runs the pod: the sidecar and three steps started at once (the last first, so that only the post files order them),
 * step N's command being `scripts[N]`, after it has written its TRACEPARENT to /tekton/traceparent-N. Tekton's
 * init container's links name the steps (/tekton/steps/step-NAME -> the step's metadata folder).
 */
async function runChain(pod: TracePod, scripts: string[]): Promise<{ steps: Exit[]; sidecar: Exit; spans: Span[] }> {
  NAMES.forEach((name, i) => link(pod, `/tekton/steps/step-${name}`, `/tekton/run/${i}/status`));
  const sidecar = pod.start(SIDECAR);
  const steps: Baton[] = [];
  for (const i of [...scripts.keys()].reverse()) steps[i] = pod.start(stepArgs(i, `echo "$TRACEPARENT" > /tekton/traceparent-${i}; ${scripts[i]}`));
  const exits = await Promise.all(steps.map((s) => s.exited));
  const sidecarExit = await sidecar.exited;
  return { steps: exits, sidecar: sidecarExit, spans: await pod.finish() };
}

function traceparentSeen(pod: TracePod, index: number): string {
  return readFileSync(join(pod.tekton, `traceparent-${index}`), "utf8").trim();
}

/** The step whose root says baton.step.name `name`. */
function stepNamed(spans: Span[], name: string) {
  const found = containers(spans).filter((c) => c.root.attributes["baton.step.name"] === name);
  assert.equal(found.length, 1, `one container named ${name}:\n${show(spans)}`);
  return found[0]!;
}

/** A span lies within its parent's time (1 ms of rounding: the two come from different clock reads). */
function within(child: Span, parent: Span): void {
  assert.ok(child.start >= parent.start - 1_000_000n && child.end <= parent.end + 1_000_000n, `${child.name} within ${parent.name}`);
  assert.ok(child.end >= child.start, `${child.name} ends after it starts`);
}

const variants: { build: Build; protocol: Protocol }[] = [
  { build: "bundle", protocol: "http/protobuf" },
  { build: "bundle", protocol: "http/json" },
  { build: "standalone", protocol: "http/protobuf" },
  { build: "standalone", protocol: "http/json" },
];

for (const { build, protocol } of variants) {
  test(`three steps and a sidecar, one trace, span by span (${build}, ${protocol})`, { skip: build === "standalone" && NO_STANDALONE }, async () => {
    const pod = await tracePod(`chain-${build === "bundle" ? "b" : "s"}-${protocol.slice(5)}`, { build, protocol });
    const { steps, sidecar, spans } = await runChain(pod, ["echo fetched", "echo built", "echo tested"]);
    assert.deepEqual(
      steps.map((e) => e.code),
      [0, 0, 0],
      steps.map((e) => e.stderr).join(""),
    );
    assert.equal(sidecar.code, 0, sidecar.stderr);
    assert.equal(
      steps.every((e) => e.stderr === ""),
      true,
      `no line on stderr: ${steps.map((e) => e.stderr).join("")}`,
    );

    // One trace, the pod's, with no TRACEPARENT given: the id docs/tracing.md derives, every container a root.
    assert.deepEqual([...new Set(spans.map((s) => s.traceId))], [pod.traceId], show(spans));
    const all = containers(spans);
    assert.deepEqual(all.map((c) => c.root.name).sort(), ["sidecar", "step", "step", "step"], show(spans));
    for (const c of all) assert.equal(c.root.parentSpanId, "");
    for (const s of spans) {
      assert.equal(s.kind, 1, `${s.name}: SPAN_KIND_INTERNAL`);
      assert.deepEqual(s.scope.name, "baton");
      assert.equal(s.status.code, 0, `${s.name}: no error in a pod that succeeded: ${s.status.message}`);
    }

    let previous: { command: Span; handOn: Span } | undefined;
    for (const [index, name] of NAMES.entries()) {
      const step = stepNamed(spans, name);
      assert.equal(step.root.name, "step");
      assert.deepEqual(
        {
          engine: step.root.attributes["baton.engine"],
          index: step.root.attributes["baton.step.index"],
          exit: step.root.attributes["baton.exit_code"],
          reason: step.root.attributes["baton.reason"],
          post: step.root.attributes["baton.post_file"],
        },
        { engine: "tekton", index, exit: 0, reason: "Completed", post: `/tekton/run/${index}/out` },
      );
      assert.equal(step.root.resource["service.name"], "baton");
      assert.equal(step.root.resource["telemetry.sdk.name"], "baton");
      assert.equal(step.root.resource["k8s.container.name"], `step-${name}`);
      assert.deepEqual(
        step.children.map((s) => s.name),
        ["prepare", "wait", "command", "hand-on"],
        show(step.children),
      );
      for (const child of step.children) within(child, step.root);
      const wait = step.child("wait");
      assert.equal(wait.attributes["baton.wait.file"], index === 0 ? "/tekton/run/web/ready" : `/tekton/run/${index - 1}/out`);
      assert.equal(wait.attributes["baton.wait.result"], "ready");
      const command = step.child("command");
      assert.equal(command.attributes["process.executable.name"], "sh");
      assert.equal(command.attributes["process.exit.code"], 0);
      assert.equal(typeof command.attributes["process.pid"], "number");
      assert.equal(step.child("hand-on").attributes["baton.reason"], "Completed");
      // The phases in order; and the chain: this command started after the step before ended its command and began
      // to hand on. Not after its hand-on ended: that span ends once its baton has marked the post file written, and
      // the next step may have woken on the file and started before that (the writer steps aside for it first).
      const handOn = step.child("hand-on");
      notAfter(step.child("prepare").end, wait.start, `${name}: prepare, then wait`, 1);
      notAfter(wait.end, command.start, `${name}: wait, then command`, 1);
      notAfter(command.end, handOn.start, `${name}: command, then hand-on`, 1);
      if (previous) {
        notAfter(previous.command.end, command.start, `${name}'s command after the previous one`);
        notAfter(previous.handOn.start, command.start, `${name}'s command after the previous hand-on began`);
      }
      previous = { command, handOn };
      // The command's TRACEPARENT is its command span's context, sampled.
      assert.equal(traceparentSeen(pod, index), `00-${pod.traceId}-${command.spanId}-01`);
    }

    const web = all.find((c) => c.root.name === "sidecar")!;
    assert.equal(web.root.attributes["baton.engine"], "plain");
    assert.equal(web.root.attributes["baton.step.name"], "sidecar");
    assert.equal(web.root.attributes["baton.exit_code"], 0);
    assert.deepEqual(
      web.children.map((s) => s.name),
      ["starting", "running", "stopping"],
      show(web.children),
    );
    for (const child of web.children) within(child, web.root);
    const running = web.child("running");
    assert.equal(running.attributes["process.executable.name"], "sh");
    assert.equal(running.attributes["baton.signal"], "SIGTERM", "stopped by its stop file");
    // Starting before the first step's wait for it ended; stopping once the last step began to hand on (the ends of
    // `starting` and `hand-on` are marked after their files are written: see above).
    notAfter(web.child("starting").start, stepNamed(spans, "fetch").child("wait").end, "the sidecar starting before fetch's wait ended");
    notAfter(previous!.handOn.start, web.child("stopping").start, "the sidecar stopping after the last hand-on began");
  });
}

test("a failing middle step: its command and step in error, the last step skipped with its wait in error", async () => {
  const pod = await tracePod("chain-fails");
  const { steps, sidecar, spans } = await runChain(pod, ["true", "echo broken >&2; exit 3", "echo never"]);
  assert.deepEqual(
    steps.map((e) => e.code),
    [0, 3, 1],
  );
  assert.equal(sidecar.code, 0, sidecar.stderr);
  assert.deepEqual([...new Set(spans.map((s) => s.traceId))], [pod.traceId]);

  const build = stepNamed(spans, "build");
  assert.deepEqual([build.root.attributes["baton.exit_code"], build.root.attributes["baton.reason"]], [3, "Error"]);
  assert.equal(build.root.status.code, 2, "the step is in error");
  const command = build.child("command");
  assert.deepEqual([command.attributes["process.exit.code"], command.status], [3, { code: 2, message: "exit code 3" }]);

  const last = stepNamed(spans, "test");
  assert.deepEqual([last.root.attributes["baton.exit_code"], last.root.attributes["baton.reason"]], [1, "Skipped"]);
  assert.equal(last.root.status.code, 2);
  assert.match(last.root.status.message, /^baton: /, "the root's message is the line baton printed");
  assert.ok(steps[2]!.stderr.includes(last.root.status.message), `${last.root.status.message} is on its stderr: ${steps[2]!.stderr}`);
  assert.deepEqual(
    last.children.map((s) => s.name),
    ["prepare", "wait", "hand-on"],
    "no command span: none was started",
  );
  const wait = last.child("wait");
  assert.deepEqual([wait.attributes["baton.wait.result"], wait.status.code], ["failed", 2]);
  assert.equal(last.child("hand-on").attributes["baton.reason"], "Skipped");

  // The sidecar still stopped, on the last step's .err, and says nothing went wrong for it.
  const web = containers(spans).find((c) => c.root.name === "sidecar")!;
  assert.deepEqual([web.root.attributes["baton.exit_code"], web.root.status.code], [0, 0]);
  assert.equal(
    web.children.some((s) => s.name === "stopping"),
    true,
  );
});

test("a command killed by SIGKILL: its span says the signal, 137 and the error; the step's too", async () => {
  const pod = await tracePod("killed");
  const step = pod.start(["-post_file", "/tekton/run/0/out", "-termination_path", "/tekton/termination", "-entrypoint", "sh", "--", "-c", "kill -KILL $$"]);
  const exit = await step.exited;
  assert.equal(exit.code, 137, exit.stderr);
  const spans = await pod.finish();
  const [only, ...more] = containers(spans);
  assert.equal(more.length, 0, show(spans));
  assert.deepEqual(
    {
      exit: only!.root.attributes["baton.exit_code"],
      reason: only!.root.attributes["baton.reason"],
      status: only!.root.status.code,
      name: only!.root.attributes["baton.step.name"],
    },
    { exit: 137, reason: "Error", status: 2, name: "out" },
  );
  const command = only!.child("command");
  assert.deepEqual(
    [command.attributes["process.exit.code"], command.attributes["baton.signal"], command.status],
    [137, "SIGKILL", { code: 2, message: "killed by SIGKILL" }],
  );
  assert.deepEqual(
    only!.children.map((s) => s.name),
    ["prepare", "command", "hand-on"],
  );
});

test("a TRACEPARENT given: the step is its child, in its trace; the command gets its own context and TRACESTATE as given", async () => {
  const pod = await tracePod("given");
  const trace = "4bf92f3577b34da6a3ce929d0e0e4736";
  const parent = "00f067aa0ba902b7";
  const step = pod.start(
    ["-post_file", "/tekton/run/0/out", "-termination_path", "/tekton/termination", "-entrypoint", "sh", "--", "-c", 'printf "%s %s" "$TRACEPARENT" "$TRACESTATE" > /tekton/seen'],
    { TRACEPARENT: `00-${trace}-${parent}-01`, TRACESTATE: "vendor=abc,other=1" },
  );
  assert.equal((await step.exited).code, 0);
  const spans = await pod.finish();
  assert.ok(spans.length > 0);
  for (const s of spans) assert.equal(s.traceId, trace, `${s.name} in the given trace, not the pod's (${pod.traceId})`);
  const [only, ...more] = containers(spans);
  assert.equal(more.length, 0, show(spans));
  assert.equal(only!.root.parentSpanId, parent);
  assert.equal(only!.root.traceState, "vendor=abc,other=1");
  const command = only!.child("command");
  assert.equal(readFileSync(join(pod.tekton, "seen"), "utf8"), `00-${trace}-${command.spanId}-01 vendor=abc,other=1`);
});

test("a TRACEPARENT that says not sampled: nothing reaches the collector, the command still gets the trace (flags 00)", async () => {
  const pod = await tracePod("unsampled");
  const trace = "4bf92f3577b34da6a3ce929d0e0e4736";
  const step = pod.start(["-post_file", "/tekton/run/0/out", "-entrypoint", "sh", "--", "-c", 'printf %s "$TRACEPARENT" > /tekton/seen'], {
    TRACEPARENT: `00-${trace}-00f067aa0ba902b7-00`,
  });
  assert.equal((await step.exited).code, 0);
  assert.deepEqual(await pod.finish(), []);
  assert.match(readFileSync(join(pod.tekton, "seen"), "utf8"), new RegExp(`^00-${trace}-[0-9a-f]{16}-00$`));
});

test("two pods, no TRACEPARENT: two traces, each its own pod's", async () => {
  const pods = await Promise.all([tracePod("pod-one"), tracePod("pod-two")]);
  const exits = await Promise.all(pods.map((pod) => pod.start(["-post_file", "/tekton/run/0/out", "-entrypoint", "true", "--"]).exited));
  assert.deepEqual(
    exits.map((e) => e.code),
    [0, 0],
  );
  const traces = await Promise.all(pods.map(async (pod) => [...new Set((await pod.finish()).map((s) => s.traceId))]));
  assert.deepEqual(traces, [[pods[0]!.traceId], [pods[1]!.traceId]]);
  assert.notEqual(pods[0]!.traceId, pods[1]!.traceId);
});

test("the file form (BATON_TRACES_DIR): the line a step writes is a request the real collector takes as it is", async () => {
  const pod = await tracePod("file-form");
  mkdirSync(join(pod.tekton, "traces"));
  const step = pod.start(["-post_file", "/tekton/run/0/out", "-entrypoint", "sh", "--", "-c", "exit 2"], {
    OTEL_EXPORTER_OTLP_ENDPOINT: "",
    BATON_TRACES_DIR: "/tekton/traces",
  });
  assert.equal((await step.exited).code, 2);
  assert.deepEqual(await pod.finish(), [], "nothing sent over HTTP without an endpoint");
  const files = readdirSync(join(pod.tekton, "traces"));
  assert.equal(files.length, 1, files.join(" "));
  assert.match(files[0]!, new RegExp(`^baton-${pod.traceId}-[0-9a-f]{16}\\.jsonl$`));
  const line = readFileSync(join(pod.tekton, "traces", files[0]!), "utf8");
  assert.equal(line.trimEnd().split("\n").length, 1, "one line");
  // What a sidecar or `make demo` does with it: POST it to a collector as OTLP/HTTP JSON.
  const collector = await startCollector();
  const response = await fetch(`${collector.endpoint}/v1/traces`, { method: "POST", headers: { "content-type": "application/json" }, body: line });
  assert.equal(response.status, 200, await response.text());
  const spans = await collector.stop();
  const [only, ...more] = containers(spans);
  assert.equal(more.length, 0, show(spans));
  assert.equal(files[0], `baton-${pod.traceId}-${only!.root.spanId}.jsonl`);
  assert.deepEqual([only!.root.attributes["baton.exit_code"], only!.root.status.code], [2, 2]);
  assert.deepEqual(only!.child("command").status, { code: 2, message: "exit code 2" });
});

test("the kubelet stops the pod (SIGTERM to baton): the step says the signal, its command killed by it, 143", async () => {
  const pod = await tracePod("stopped");
  const step = pod.start(["-post_file", "/tekton/run/0/out", "-entrypoint", "sh", "--", "-c", "touch /tekton/running; exec sleep 60"]);
  await fileAppears(join(pod.tekton, "running"));
  const pid = await step.hostPid();
  await handlersInstalled(pid);
  process.kill(pid, "SIGTERM");
  assert.equal((await step.exited).code, 143);
  const [only, ...more] = containers(await pod.finish());
  assert.equal(more.length, 0);
  assert.deepEqual(
    [only!.root.attributes["baton.signal"], only!.root.attributes["baton.exit_code"], only!.root.status.code],
    ["SIGTERM", 143, 2],
  );
  const command = only!.child("command");
  assert.deepEqual(
    [command.attributes["baton.signal"], command.attributes["process.exit.code"], command.status],
    ["SIGTERM", 143, { code: 2, message: "killed by SIGTERM" }],
  );
});

test("a step stopped while it waits (SIGTERM): its wait ends there, no command, the signal on the step", async () => {
  const pod = await tracePod("stopped-waiting");
  const step = pod.start(["-wait_file", "/tekton/run/never/out", "-post_file", "/tekton/run/0/out", "-entrypoint", "true", "--"], {
    BATON_EVENTS: "/tekton/events.jsonl",
  });
  const pid = await step.hostPid();
  await handlersInstalled(pid);
  await eventSeen(join(pod.tekton, "events.jsonl"), "waiting");
  process.kill(pid, "SIGTERM");
  const exit = await step.exited;
  assert.equal(exit.code, 143, exit.stderr);
  const [only] = containers(await pod.finish());
  assert.equal(only!.root.attributes["baton.signal"], "SIGTERM");
  assert.equal(only!.root.status.code, 2);
  assert.deepEqual(
    only!.children.map((s) => s.name),
    ["prepare", "wait", "hand-on"],
  );
  assert.equal(only!.child("wait").attributes["baton.wait.file"], "/tekton/run/never/out");
});
