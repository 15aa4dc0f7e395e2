// An Argo container set traced to the real OpenTelemetry Collector, span by span: three `baton emissary` containers
// of one pod (b after a, c after b, ordered only by the exitcode files of the shared folder), each sending the span
// Argo's executor sends, runMainContainer, with its phases (docs/tracing.md, "Argo's emissary").
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { EMISSARY } from "../integration/argo-helpers.js";
import { NO_STANDALONE, type Exit } from "../integration/helpers.js";
import type { Span } from "./collector.js";
import { containers, notAfter, show, tracePod, type Build, type Protocol, type TracePod } from "./pod.js";

const SET = { containerSet: { containers: [{ name: "a" }, { name: "b", dependencies: ["a"] }, { name: "c", dependencies: ["b"] }] } };
const WORKFLOW = "hello-set-x7k2p";

/**
 * Runs the set: c, b and a started at once (in that order), the shared folder at /tekton (BATON_ARGO_ROOT), each
 * container's command `sh -c SCRIPT` after writing its TRACEPARENT to /tekton/traceparent-NAME.
 */
async function runSet(pod: TracePod, scripts: Record<"a" | "b" | "c", string>, env: Record<string, string> = {}): Promise<{ exits: Record<string, Exit>; spans: Span[] }> {
  writeFileSync(join(pod.tekton, "template"), JSON.stringify(SET), { mode: 0o444 });
  const started = (["c", "b", "a"] as const).map((name) => {
    const command = ["sh", "-c", `echo "$TRACEPARENT" > /tekton/traceparent-${name}; ${scripts[name]}`];
    return [
      name,
      pod.start([...EMISSARY, ...command], {
        BATON_ARGO_ROOT: "/tekton",
        ARGO_CONTAINER_NAME: name,
        ARGO_WORKFLOW_NAME: WORKFLOW,
        ARGO_INCLUDE_SCRIPT_OUTPUT: "false",
        ...env,
      }),
    ] as const;
  });
  const exits = Object.fromEntries(await Promise.all(started.map(async ([name, baton]) => [name, await baton.exited] as const)));
  return { exits, spans: await pod.finish() };
}

function named(spans: Span[], name: string) {
  const found = containers(spans).filter((c) => c.root.resource["k8s.container.name"] === name);
  assert.equal(found.length, 1, `one container ${name}:\n${show(spans)}`);
  return found[0]!;
}

const variants: { build: Build; protocol: Protocol }[] = [
  { build: "bundle", protocol: "http/protobuf" },
  { build: "bundle", protocol: "http/json" },
  { build: "standalone", protocol: "http/protobuf" },
  { build: "standalone", protocol: "http/json" },
];

for (const { build, protocol } of variants) {
  const title = `a container set of three: one trace, a runMainContainer span each with Argo's attributes (${build}, ${protocol})`;
  test(title, { skip: build === "standalone" && NO_STANDALONE }, async () => {
    const pod = await tracePod(`argo-set-${build === "bundle" ? "b" : "s"}-${protocol.slice(5)}`, { build, protocol });
    const { exits, spans } = await runSet(pod, { a: "echo a", b: "echo b", c: "echo c" });
    assert.deepEqual(
      ["a", "b", "c"].map((n) => exits[n]!.code),
      [0, 0, 0],
      Object.values(exits)
        .map((e) => e.stderr)
        .join(""),
    );
    assert.deepEqual([...new Set(spans.map((s) => s.traceId))], [pod.traceId], show(spans));
    let previous: Span | undefined;
    for (const name of ["a", "b", "c"]) {
      const c = named(spans, name);
      assert.equal(c.root.name, "runMainContainer");
      assert.equal(c.root.parentSpanId, "");
      assert.deepEqual(
        {
          name: c.root.attributes.name,
          namespace: c.root.attributes.namespace,
          engine: c.root.attributes["baton.engine"],
          exit: c.root.attributes["baton.exit_code"],
          status: c.root.status.code,
        },
        { name: WORKFLOW, namespace: "", engine: "argo", exit: 0, status: 0 },
      );
      assert.equal(c.root.resource["service.name"], "argoexec", "Argo's executor's service name");
      assert.deepEqual(
        c.children.map((s) => s.name),
        name === "a" ? ["command"] : ["wait", "command"],
        show(c.children),
      );
      const command = c.child("command");
      assert.deepEqual(
        [command.attributes["baton.attempt"], command.attributes["process.executable.name"], command.attributes["process.exit.code"]],
        [1, "sh", 0],
      );
      if (name !== "a") {
        const wait = c.child("wait");
        assert.equal(wait.attributes["baton.wait.file"], `/tekton/ctr/${name === "b" ? "a" : "b"}/exitcode`);
        notAfter(wait.end, command.start, `${name}: wait, then command`, 1);
        notAfter(previous!.end, command.start, `${name}'s command after its dependency's`);
      }
      previous = command;
      // As Argo's emissary: the command's TRACEPARENT is the runMainContainer span's context.
      assert.equal(readFileSync(join(pod.tekton, `traceparent-${name}`), "utf8").trim(), `00-${pod.traceId}-${c.root.spanId}-01`);
    }
  });
}

test("a container set whose middle container fails: c's wait in error, no command, 64 and the line baton printed", async () => {
  const pod = await tracePod("argo-set-fails");
  const { exits, spans } = await runSet(pod, { a: "true", b: "exit 5", c: "echo never" });
  assert.deepEqual(
    ["a", "b", "c"].map((n) => exits[n]!.code),
    [0, 5, 64],
  );
  const b = named(spans, "b");
  assert.deepEqual([b.root.attributes["baton.exit_code"], b.root.status.code], [5, 2]);
  assert.deepEqual(b.child("command").status, { code: 2, message: "exit code 5" });
  const c = named(spans, "c");
  assert.deepEqual([c.root.attributes["baton.exit_code"], c.root.status.code], [64, 2]);
  assert.equal(c.root.status.message, 'baton: dependency "b" exited with non-zero code: 5');
  assert.equal(exits.c!.stderr, `${c.root.status.message}\n`);
  assert.deepEqual(
    c.children.map((s) => s.name),
    ["wait"],
  );
  assert.equal(c.child("wait").status.code, 2);
});

test("Argo's controller gives TRACEPARENT: every container's span is its child, in its trace", async () => {
  const pod = await tracePod("argo-set-given");
  const trace = "0af7651916cd43dd8448eb211c80319c";
  const parent = "b7ad6b7169203331";
  const { exits, spans } = await runSet(pod, { a: "true", b: "true", c: "true" }, { TRACEPARENT: `00-${trace}-${parent}-01` });
  assert.deepEqual(
    ["a", "b", "c"].map((n) => exits[n]!.code),
    [0, 0, 0],
  );
  for (const s of spans) assert.equal(s.traceId, trace);
  const roots = containers(spans).map((c) => c.root);
  assert.deepEqual(
    roots.map((r) => [r.name, r.parentSpanId]),
    [
      ["runMainContainer", parent],
      ["runMainContainer", parent],
      ["runMainContainer", parent],
    ],
  );
  for (const name of ["a", "b", "c"]) {
    assert.equal(readFileSync(join(pod.tekton, `traceparent-${name}`), "utf8").trim(), `00-${trace}-${named(spans, name).root.spanId}-01`);
  }
});
