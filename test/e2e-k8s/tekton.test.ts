// Tekton Pipelines' real controller and webhook (scripts/k8s/tekton.sh) run each case twice: stock (Tekton's own
// entrypoint image) and with baton's image as -entrypoint-image, the one setting docs/tekton.md gives. What the
// controller records for the TaskRun is compared field by field (verdict.ts).
import { before, test } from "node:test";
import assert from "node:assert/strict";
import { freshNamespace, getJson, killContainer, kubectl, script, waitUntil, type Json } from "./kube.js";
import { Watch, create, spread } from "./watch.js";
import { judge, type Outcome } from "./verdict.js";
import { BATON_IMAGE, importBatonImage } from "./images.js";

const BUSYBOX = "baton.local/busybox:1";
const STOCK_ENTRYPOINT = "baton.local/tekton/entrypoint:v1.15.1";

interface Case {
  name: string;
  /** The Task's spec (YAML, indented by four), run by a TaskRun named `run`. */
  task: string;
  /** The TaskRun's timeout. */
  timeout?: string;
  /** Seconds to wait for the TaskRun to end. */
  seconds?: number;
  /**
   * Shown, not compared: the TaskRun's wall clock, from its creation (the request sent) to the watch's event of its
   * completion (watch.ts), in ms; run alone.
   */
  timed?: boolean;
  /** Runs of a timed case (each in a namespace of its own): the fields must be the same in each; the wall clock's median and range are shown. */
  repeat?: number;
  /** Done to the running pod (named), in the case's namespace. */
  during?: (namespace: string, pod: string) => Promise<void>;
  /** Run with the feature flag enable-kubernetes-sidecar: "true" (sidecars as native sidecars, Kubernetes >= 1.29). */
  native?: boolean;
}

const steps = (n: number) => Array.from({ length: n }, (_, i) => `      - {name: s${i}, image: ${BUSYBOX}, command: ["true"]}`).join("\n");

const ALL_CASES: Case[] = [
  {
    name: "three steps with results",
    task: `
    results: [{name: greeting}, {name: count}]
    steps:
      - name: one
        image: ${BUSYBOX}
        script: |
          printf hello > $(results.greeting.path)
      - name: two
        image: ${BUSYBOX}
        script: |
          test "$(cat $(results.greeting.path))" = hello && printf 3 > $(results.count.path)
      - name: three
        image: ${BUSYBOX}
        command: ["sh", "-c", "echo done"]`,
  },
  {
    // Step results, `when` on a step and `$(steps...)` references (beta fields, on by Tekton's default
    // enable-api-fields: "beta"): step three is skipped by its `when`, step four reads step one's result and exit code.
    name: "step results, when and $(steps...)",
    task: `
    results: [{name: out}]
    steps:
      - name: one
        image: ${BUSYBOX}
        results: [{name: word}]
        script: |
          printf go > $(step.results.word.path)
      - name: two
        image: ${BUSYBOX}
        when: [{input: "$(steps.one.results.word)", operator: in, values: ["go"]}]
        command: ["sh", "-c", "echo two ran"]
      - name: three
        image: ${BUSYBOX}
        when: [{input: "$(steps.one.results.word)", operator: in, values: ["stop"]}]
        command: ["sh", "-c", "echo three ran"]
      - name: four
        image: ${BUSYBOX}
        env: [{name: WORD, value: "$(steps.one.results.word)"}]
        script: |
          test "$(cat $(steps.step-one.exitCode.path))" = 0 && printf "$WORD" > $(results.out.path)`,
  },
  {
    name: "a failing step",
    task: `
    steps:
      - {name: one, image: ${BUSYBOX}, command: ["true"]}
      - {name: two, image: ${BUSYBOX}, command: ["sh", "-c", "exit 3"]}
      - {name: three, image: ${BUSYBOX}, command: ["true"]}`,
  },
  {
    name: "onError continue",
    task: `
    steps:
      - {name: one, image: ${BUSYBOX}, onError: continue, command: ["sh", "-c", "exit 2"]}
      - {name: two, image: ${BUSYBOX}, command: ["true"]}`,
  },
  {
    name: "a timeout",
    timeout: "10s",
    task: `
    steps:
      - {name: one, image: ${BUSYBOX}, command: ["sleep", "120"]}
      - {name: two, image: ${BUSYBOX}, command: ["true"]}`,
  },
  {
    name: "a sidecar",
    task: `
    sidecars:
      - {name: server, image: ${BUSYBOX}, command: ["sh", "-c", "mkdir -p /www && echo up > /www/index.html && exec httpd -f -p 8080 -h /www"]}
    steps:
      - {name: one, image: ${BUSYBOX}, command: ["sh", "-c", "for i in 1 2 3 4 5 6 7 8 9 10; do wget -q -O - http://127.0.0.1:8080/ && exit 0; sleep 1; done; exit 1"]}`,
  },
  {
    // The same sidecar as a native one: an init container with restartPolicy Always, which the kubelet ends after the
    // last step (no swap to the nop image).
    name: "a native sidecar",
    native: true,
    task: `
    sidecars:
      - {name: server, image: ${BUSYBOX}, command: ["sh", "-c", "mkdir -p /www && echo up > /www/index.html && exec httpd -f -p 8080 -h /www"]}
    steps:
      - {name: one, image: ${BUSYBOX}, command: ["sh", "-c", "for i in 1 2 3 4 5 6 7 8 9 10; do wget -q -O - http://127.0.0.1:8080/ && exit 0; sleep 1; done; exit 1"]}`,
  },
  {
    // The command killed by a signal: the step's exit code is the entrypoint's word on it (Kubernetes turns `$$$$` into
    // `$$`).
    name: "a command killed by SIGKILL",
    task: `
    steps:
      - {name: one, image: ${BUSYBOX}, command: ["sh", "-c", "kill -KILL $$$$"]}
      - {name: two, image: ${BUSYBOX}, command: ["true"]}`,
  },
  {
    // The step's container itself SIGKILLed mid-run (its PID 1, the entrypoint: as the OOM killer does). Tekton's
    // next step waits for a post file that never comes, until the TaskRun's timeout (tektoncd/pipeline #10371).
    name: "a step SIGKILLed mid-run",
    timeout: "60s",
    timed: true,
    task: `
    steps:
      - {name: one, image: ${BUSYBOX}, command: ["sh", "-c", "echo started; sleep 30"]}
      - {name: two, image: ${BUSYBOX}, command: ["true"]}`,
    during: (namespace, pod) => killContainer(namespace, pod, "step-one", "started"),
  },
  { name: "20 no-op steps", timed: true, repeat: 5, seconds: 300, task: `\n    steps:\n${steps(20)}` },
];

// E2E_K8S_ONLY=REGEX runs only the cases whose name it matches.
const CASES = ALL_CASES.filter((c) => new RegExp(process.env.E2E_K8S_ONLY ?? "").test(c.name));

function taskYaml(c: Case, namespace: string): string {
  return `apiVersion: tekton.dev/v1
kind: Task
metadata: {name: task, namespace: ${namespace}}
spec:${c.task}
`;
}

const taskRun = (c: Case) => ({
  apiVersion: "tekton.dev/v1",
  kind: "TaskRun",
  metadata: { name: "run" },
  spec: { taskRef: { name: "task" }, ...(c.timeout ? { timeout: c.timeout } : {}) },
});

/** What the controller recorded for the TaskRun: its condition, each step's and sidecar's end, the results. */
function outcome(run: Json): Outcome {
  const condition = (run.status?.conditions ?? [])[0] ?? {};
  const ended = (s: Json) => ({
    name: s.name,
    exitCode: s.terminated?.exitCode ?? null,
    reason: s.terminated?.reason ?? (s.running ? "running" : "waiting"),
    // Tekton's own word on the step (Completed, Skipped, TaskRunTimeout, ...), and the step's results.
    terminationReason: s.terminationReason ?? null,
    results: Object.fromEntries((s.results ?? []).map((r: Json) => [r.name, r.value])),
  });
  const fields: Record<string, unknown> = {
    status: condition.status,
    reason: condition.reason,
    steps: (run.status?.steps ?? []).map(ended),
    sidecars: (run.status?.sidecars ?? []).map((s: Json) => s.name),
    results: Object.fromEntries((run.status?.results ?? []).map((r: Json) => [r.name, r.value])),
  };
  return { fields };
}

/** One run of a case: its outcome, and its wall clock in ms (from the TaskRun's creation to its completion's event). */
async function runOnce(c: Case, config: string, suffix = ""): Promise<{ outcome: Outcome; ms: number }> {
  const namespace = freshNamespace(`tk-${config}-${c.name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/-$/, "")}`.slice(0, 60 - suffix.length) + suffix);
  kubectl(["apply", "-f", "-"], taskYaml(c, namespace));
  const watch = await Watch.open(`/apis/tekton.dev/v1/namespaces/${namespace}/taskruns`);
  try {
    const sent = await create(`/apis/tekton.dev/v1/namespaces/${namespace}/taskruns`, taskRun(c));
    return await watchRun(c, config, namespace, watch, sent);
  } finally {
    watch.close();
    kubectl(["delete", "namespace", namespace, "--wait=false"]);
  }
}

async function watchRun(c: Case, config: string, namespace: string, watch: Watch, sent: number): Promise<{ outcome: Outcome; ms: number }> {
  // Which entrypoint the pod really has: the image of its prepare init container (read now: Tekton deletes the pod
  // of a TaskRun that timed out).
  const pod = (await waitUntil("taskrun", "run", namespace, (o) => Boolean(o.status?.podName), 60)).status.podName;
  const spec = getJson("pod", pod, namespace).spec;
  const prepare = spec.initContainers.find((i: Json) => i.name === "prepare");
  assert.equal(prepare?.image, config === "baton" ? BATON_IMAGE : STOCK_ENTRYPOINT, `${c.name} (${config}): the pod's entrypoint image`);
  const native = spec.initContainers.filter((i: Json) => i.restartPolicy === "Always").map((i: Json) => i.name);
  assert.deepEqual(native, c.native ? ["sidecar-server"] : [], `${c.name} (${config}): the pod's native sidecars`);
  if (c.during) await c.during(namespace, pod);
  const ended = await watch.until((e) => Boolean(e.object.status?.completionTime), c.seconds ?? 180, `${c.name} (${config}): the TaskRun's completion`);
  return { outcome: outcome(ended.object), ms: ended.at - sent };
}

async function runCase(c: Case, config: string): Promise<Outcome> {
  const runs = [];
  for (let i = 0; i < (c.repeat ?? 1); i++) runs.push(await runOnce(c, config, c.repeat ? `-${i}` : ""));
  const first = runs[0].outcome;
  for (const [i, r] of runs.entries()) assert.deepEqual(r.outcome.fields, first.fields, `${c.name} (${config}): run ${i} differs from run 0`);
  if (!c.timed) return first;
  const ms = spread(runs.map((r) => r.ms));
  const wall = runs.length === 1 ? ms.median.toFixed(0) : `median ${ms.median.toFixed(0)} (${ms.min.toFixed(0)}-${ms.max.toFixed(0)}, ${runs.length} runs)`;
  return { fields: first.fields, info: { "wall clock (ms)": wall } };
}

const results = new Map<string, Partial<Record<"stock" | "baton", Outcome | Error>>>(CASES.map((c) => [c.name, {}]));

/**
 * The cases of one configuration: the untimed ones at once, each in its namespace, then the timed ones alone. The
 * native-sidecar cases run with the feature flag on, the others with it off (the flag is the controller's, for all).
 */
async function runAll(config: "stock" | "baton", native: boolean): Promise<void> {
  const run = async (c: Case) => {
    results.get(c.name)![config] = await runCase(c, config).catch((e: Error) => e);
  };
  const cases = CASES.filter((c) => Boolean(c.native) === native);
  if (cases.length === 0) return;
  kubectl(["-n", "tekton-pipelines", "patch", "configmap", "feature-flags", "--type", "merge", "-p", JSON.stringify({ data: { "enable-kubernetes-sidecar": String(native) } })]);
  await Promise.all(cases.filter((c) => !c.timed).map(run));
  for (const c of cases.filter((c) => c.timed)) await run(c);
}

before(async () => {
  script("tekton.sh", ["install"]);
  await runAll("stock", false);
  await runAll("stock", true);
  importBatonImage();
  script("tekton.sh", ["entrypoint", BATON_IMAGE]);
  await runAll("baton", true);
  await runAll("baton", false);
}, { timeout: 1_800_000 });

for (const c of CASES) {
  test(`tekton: ${c.name}`, () => {
    const r = results.get(c.name)!;
    for (const side of [r.stock, r.baton]) if (side instanceof Error) throw side;
    judge("tekton", c.name, r.stock as Outcome, r.baton as Outcome);
  });
}
