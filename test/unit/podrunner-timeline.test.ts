import { test } from "node:test";
import assert from "node:assert/strict";
import type { BatonEvent } from "../../scripts/podrunner/events.js";
import type { ContainerStatus, PodResult } from "../../scripts/podrunner/pod.js";
import { drawTerminal, timelineRows } from "../../scripts/podrunner/timeline.js";

const T0 = 1_000_000;

function container(name: string, created: number, started: number, finished: number, exitCode: number, events: [number, string, Record<string, unknown>?][]): ContainerStatus {
  return {
    name,
    init: false,
    createdAt: T0 + created,
    startedAt: T0 + started,
    finishedAt: T0 + finished,
    exitCode,
    reason: exitCode === 0 ? "Completed" : "Error",
    message: "",
    logFile: "/dev/null",
    events: events.map(([t, event, fields]) => ({ t: T0 + t, pid: 1, step: name, event, ...fields }) as BatonEvent),
  };
}

function pod(...containers: ContainerStatus[]): PodResult {
  return { name: "p", kind: "Pod", phase: "Failed", startedAt: T0, finishedAt: T0 + 1000, initContainers: [], containers, runDir: "/tmp" };
}

const kinds = (result: PodResult, i: number) => timelineRows(result)[i]!.segments.map((s) => `${s.kind} ${s.from}-${s.to}`);

test("a step's bar: creating, starting, waiting, running, handing on, cut where baton's events say", () => {
  const result = pod(
    container("step", 0, 100, 900, 0, [
      [150, "start"],
      [160, "waiting", { file: "/a" }],
      [400, "ready", { file: "/a" }],
      [410, "command", { argv: ["x"], child: 10 }],
      [800, "exited", { exitCode: 0 }],
      [805, "post", { file: "/b" }],
      [806, "done", { exitCode: 0 }],
    ]),
  );
  assert.deepEqual(kinds(result, 0), ["creating 0-100", "starting 100-160", "waiting 160-410", "running 410-800", "ending 800-900"]);
});

test("a skipped step waits and hands on, and never runs", () => {
  const result = pod(
    container("skipped", 0, 50, 500, 1, [
      [60, "start"],
      [70, "waiting", { file: "/a" }],
      [300, "skipped", { file: "/a" }],
      [310, "post", { file: "/b.err" }],
    ]),
  );
  const row = timelineRows(result)[0]!;
  assert.equal(row.skipped, true);
  assert.deepEqual(kinds(result, 0), ["creating 0-50", "starting 50-70", "waiting 70-300", "ending 300-500"]);
  assert.match(drawTerminal(result, { color: false })[0]!, /skipped, exit 1/);
});

test("a sidecar with no command waits for its stop file, then stops the proxy", () => {
  const result = pod(container("killer", 0, 20, 700, 0, [[40, "start"], [600, "stopping", { file: "/done" }], [650, "stop-url", { url: "u", status: 200 }]]));
  assert.deepEqual(kinds(result, 0), ["creating 0-20", "starting 20-40", "waiting 40-600", "ending 600-700"]);
  assert.deepEqual(timelineRows(result)[0]!.marks, [{ kind: "stopping", at: 600 }]);
});

test("a container without baton is one running bar; one that never started has none", () => {
  const never: ContainerStatus = { name: "later", init: false, reason: "PodInitializing", message: "", events: [], logFile: "/dev/null" };
  const result = pod(container("proxy", 0, 30, 990, 0, []), never);
  assert.deepEqual(kinds(result, 0), ["creating 0-30", "running 30-990"]);
  assert.deepEqual(kinds(result, 1), []);
  assert.match(drawTerminal(result, { color: false })[1]!, /not started/);
});
