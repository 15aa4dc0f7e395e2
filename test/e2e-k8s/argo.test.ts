// Argo Workflows' real workflow-controller (scripts/k8s/argo.sh) runs each case twice: with Argo's own argoexec as
// the executor image, and with the executor image of examples/Containerfile.argoexec's layout (baton's argoexec in
// Argo's place), given by the one setting docs/argo.md names (executor.image in the controller's ConfigMap). What the
// controller records for the Workflow (phase, message, each node's phase, exit code and outputs) is compared.
import { before, test } from "node:test";
import assert from "node:assert/strict";
import { gunzipSync } from "node:zlib";
import { freshNamespace, killContainer, kubectl, script, waitUntil, type Json } from "./kube.js";
import { judge, type Outcome } from "./verdict.js";

const BUSYBOX = "baton.local/busybox:1";
const STOCK_EXECUTOR = "baton.local/argo/argoexec:v4.0.5";
const BATON_EXECUTOR = "baton.local/argo/argoexec-baton:v4.0.5";
/** The artifact repository's address (scripts/k8s/argo.sh). */
const S3_ADDRESS = "10.96.0.50";

interface Case {
  name: string;
  /** The Workflow's spec (YAML, indented by two). */
  spec: string;
  seconds?: number;
  /** Done to the running pod (named `run`), in the case's namespace. */
  during?: (namespace: string) => Promise<void>;
}

const ALL_CASES: Case[] = [
  {
    name: "a container set",
    spec: `
  entrypoint: main
  templates:
  - name: main
    containerSet:
      containers:
      - {name: a, image: ${BUSYBOX}, command: [sh, -c, "echo a"]}
      - {name: b, image: ${BUSYBOX}, command: [sh, -c, "echo b"], dependencies: [a]}
      - {name: main, image: ${BUSYBOX}, command: [sh, -c, "printf 42 > /tmp/answer && echo report > /tmp/report.txt"], dependencies: [b]}
    outputs:
      parameters:
      - {name: answer, valueFrom: {path: /tmp/answer}}
      artifacts:
      - {name: report, path: /tmp/report.txt}`,
  },
  {
    name: "a script template",
    spec: `
  entrypoint: main
  templates:
  - name: main
    script:
      image: ${BUSYBOX}
      command: [sh]
      source: |
        echo from a script
        printf ok > /tmp/said
    outputs:
      parameters:
      - {name: said, valueFrom: {path: /tmp/said}}`,
  },
  {
    name: "a failing container, retried",
    seconds: 400,
    spec: `
  entrypoint: main
  templates:
  - name: main
    retryStrategy: {limit: "1", retryPolicy: Always, backoff: {duration: "1s", factor: 1}}
    container: {image: ${BUSYBOX}, command: [sh, -c, "exit 3"]}`,
  },
  {
    name: "a sidecar",
    spec: `
  entrypoint: main
  templates:
  - name: main
    sidecars:
    - {name: server, image: ${BUSYBOX}, command: [sh, -c, "mkdir -p /www && echo up > /www/index.html && exec httpd -f -p 8080 -h /www"]}
    container: {image: ${BUSYBOX}, command: [sh, -c, "for i in 1 2 3 4 5 6 7 8 9 10; do wget -q -O - http://127.0.0.1:8080/ && exit 0; sleep 1; done; exit 1"]}`,
  },
  {
    // The main container killed mid-run (its PID 1, the emissary: as the OOM killer does; Argo #14074).
    name: "a container killed mid-run",
    spec: `
  entrypoint: main
  templates:
  - name: main
    container: {image: ${BUSYBOX}, command: [sh, -c, "echo started; sleep 30"]}`,
    during: (namespace) => killContainer(namespace, "run", "main", "started"),
  },
];

// E2E_K8S_ONLY=REGEX runs only the cases whose name it matches.
const CASES = ALL_CASES.filter((c) => new RegExp(process.env.E2E_K8S_ONLY ?? "").test(c.name));

/**
 * What the executor's service account may do (Argo's docs: the executor reports through WorkflowTaskResults), and the
 * keys of the artifact repository (scripts/k8s/argo.sh's S3 server takes any).
 */
const EXECUTOR_RBAC = (namespace: string) => `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: executor, namespace: ${namespace}}
rules:
- apiGroups: [argoproj.io]
  resources: [workflowtaskresults]
  verbs: [create, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: executor, namespace: ${namespace}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: executor}
subjects: [{kind: ServiceAccount, name: default, namespace: ${namespace}}]
---
apiVersion: v1
kind: Secret
metadata: {name: s3-credentials, namespace: ${namespace}}
stringData: {accesskey: baton, secretkey: baton-e2e}
`;

/** The first file of an output artifact as the repository holds it (Argo stores a file as a gzipped tar). */
async function artifactText(key: string): Promise<string> {
  const response = await fetch(`http://${S3_ADDRESS}:9000/artifacts/${key}`);
  if (!response.ok) return `HTTP ${response.status}`;
  const tar = gunzipSync(Buffer.from(await response.arrayBuffer()));
  const size = parseInt(tar.subarray(124, 136).toString("latin1").replace(/\0.*$/, "").trim(), 8);
  return tar.subarray(512, 512 + size).toString("utf8");
}

/** What the controller recorded: the Workflow's phase and message, each node by display name; artifacts' contents. */
async function outcome(workflow: Json): Promise<Outcome> {
  const nodes = Object.values(workflow.status?.nodes ?? {}) as Json[];
  const contents: Record<string, string> = {};
  for (const n of nodes) {
    for (const a of n.outputs?.artifacts ?? []) if (a.s3?.key) contents[`${n.displayName}/${a.name}`] = await artifactText(a.s3.key);
  }
  return {
    fields: {
      artifactContents: contents,
      phase: workflow.status?.phase,
      message: workflow.status?.message ?? null,
      nodes: nodes
        .map((n) => ({
          name: n.displayName,
          type: n.type,
          phase: n.phase,
          message: n.message ?? null,
          exitCode: n.outputs?.exitCode ?? null,
          parameters: Object.fromEntries((n.outputs?.parameters ?? []).map((p: Json) => [p.name, p.value])),
          // Where each output artifact went in the repository (scripts/k8s/argo.sh's S3 server).
          artifacts: Object.fromEntries((n.outputs?.artifacts ?? []).map((a: Json) => [a.name, a.s3?.key ?? null])),
        }))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    },
  };
}

async function runCase(c: Case, config: string): Promise<Outcome> {
  const namespace = freshNamespace(`ar-${config}-${c.name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/-$/, "")}`.slice(0, 63));
  kubectl(["apply", "-f", "-"], EXECUTOR_RBAC(namespace));
  kubectl(["apply", "-f", "-"], `apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: run, namespace: ${namespace}}\nspec:${c.spec}\n`);
  if (c.during) await c.during(namespace);
  const done = (o: Json) => ["Succeeded", "Failed", "Error"].includes(o.status?.phase) && Boolean(o.status?.finishedAt);
  const workflow = await waitUntil("workflow", "run", namespace, done, c.seconds ?? 180);
  // Read now: the next run of the case writes the same key.
  const result = await outcome(workflow);
  // Which executor the pods really had: the image of each one's init container.
  const pods = JSON.parse(kubectl(["get", "pods", "-n", namespace, "-o", "json"])).items as Json[];
  const images = new Set(pods.map((p) => p.spec.initContainers?.find((i: Json) => i.name === "init")?.image));
  assert.deepEqual([...images], [config === "baton" ? BATON_EXECUTOR : STOCK_EXECUTOR], `${c.name} (${config}): the pods' executor image`);
  kubectl(["delete", "namespace", namespace, "--wait=false"]);
  return result;
}

const results = new Map<string, Partial<Record<"stock" | "baton", Outcome | Error>>>(CASES.map((c) => [c.name, {}]));

/** The cases of one configuration at once, each in its namespace. */
async function runAll(config: "stock" | "baton"): Promise<void> {
  await Promise.all(CASES.map(async (c) => {
    results.get(c.name)![config] = await runCase(c, config).catch((e: Error) => e);
  }));
}

before(async () => {
  script("argo.sh", ["install"]);
  await runAll("stock");
  script("argo.sh", ["baton-image"]);
  script("argo.sh", ["executor", BATON_EXECUTOR]);
  await runAll("baton");
}, { timeout: 1_800_000 });

for (const c of CASES) {
  test(`argo: ${c.name}`, () => {
    const r = results.get(c.name)!;
    for (const side of [r.stock, r.baton]) if (side instanceof Error) throw side;
    judge("argo", c.name, r.stock as Outcome, r.baton as Outcome);
  });
}
