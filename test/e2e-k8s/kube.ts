// The cluster of scripts/k8s/cluster.sh, as the e2e-k8s tests see it: kubectl (the one built with the cluster), its
// kubeconfig, and polling until an object reaches a state. `make e2e-k8s` brings the cluster up before the tests and
// down after them.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";

export const REPO = resolve(import.meta.dirname, "../..");
const K8S = join(REPO, "scripts/k8s");

/** scripts/k8s/env.sh's value of a variable. */
function env(name: string): string {
  return execFileSync("sh", ["-c", `. ./env.sh && printf %s "$${name}"`], { cwd: K8S, encoding: "utf8" });
}

const cache = env("K8S_CACHE");
export const KUBECONFIG = env("KUBECONFIG");
export const STATE = env("K8S_STATE");
export const CONTAINERD_SOCK = env("K8S_CONTAINERD_SOCK");
/** The node's runtime as `cluster.sh up` chose it: containerd2 (image volumes) or debian (containerd 1.6). */
export const RUNTIME = env("K8S_RUNTIME");
// containerd 2.2's ctr would print the daemon's deprecation of cgroup v1 (this machine's) at every command.
process.env.CONTAINERD_SUPPRESS_DEPRECATION_WARNINGS = "1";
/** The ctr of that runtime. */
export const CTR = execFileSync("sh", ["-c", ". ./env.sh && k8s_ctr"], { cwd: K8S, encoding: "utf8" }).trim();

/** The path of a program scripts/k8s/build.sh built (its table: NAME VERSION PATH SHA256). */
export function builtProgram(group: string, name: string): string {
  const row = readFileSync(join(cache, "bin", `${group}.tsv`), "utf8").split("\n").map((l) => l.split("\t")).find((r) => r[0] === name);
  if (!row) throw new Error(`${name} is not built: scripts/k8s/build.sh ${group}`);
  return row[2];
}

const KUBECTL = builtProgram("kubernetes", "kubectl");

export function kubectl(args: string[], input?: string): string {
  return execFileSync(KUBECTL, args, { encoding: "utf8", input, env: { ...process.env, KUBECONFIG }, maxBuffer: 64 << 20, stdio: "pipe" });
}

/** Runs one of scripts/k8s/'s scripts, its messages on the test's stderr. */
export function script(name: string, args: string[]): void {
  execFileSync(join(K8S, name), args, { stdio: ["ignore", "inherit", "inherit"] });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export function getJson(kind: string, name: string, namespace: string): Json {
  return JSON.parse(kubectl(["get", kind, name, "-n", namespace, "-o", "json"]));
}

/** Polls `kubectl get` every 0.5 s until `done` says yes; the object then, or an error naming its last state. */
export async function waitUntil(kind: string, name: string, namespace: string, done: (o: Json) => boolean, seconds: number): Promise<Json> {
  const deadline = Date.now() + seconds * 1000;
  let last: Json;
  for (;;) {
    try {
      last = getJson(kind, name, namespace);
      if (done(last)) return last;
    } catch {
      // not there yet
    }
    if (Date.now() > deadline) throw new Error(`${kind}/${name} in ${namespace}: not done after ${seconds} s: ${JSON.stringify(last?.status ?? null)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** A namespace for one run of one case, labelled so that `cluster.sh down` removes what a failed run left. */
export function freshNamespace(name: string): string {
  try {
    kubectl(["delete", "namespace", name, "--wait=true", "--timeout=120s"]);
  } catch {
    // was not there
  }
  kubectl(["create", "namespace", name]);
  kubectl(["label", "namespace", name, "baton-e2e=1"]);
  return name;
}

/** Seconds between two of the API's timestamps. */
export const secondsBetween = (from: string, to: string) => (Date.parse(to) - Date.parse(from)) / 1000;

/**
 * SIGKILLs a running container's first process (its PID 1: the entrypoint, Tekton's or baton's, or Argo's emissary)
 * from the node, as the kernel's OOM killer or a node's runtime would: found through containerd by the container's ID
 * in the pod's status, once the container's log holds `marker` (its command has started).
 */
export async function killContainer(namespace: string, pod: string, container: string, marker: string, seconds = 120): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    let log = "";
    try {
      log = kubectl(["logs", "-n", namespace, pod, "-c", container]);
    } catch {
      // not started yet
    }
    if (log.includes(marker)) break;
    if (Date.now() > deadline) throw new Error(`${pod}/${container}: no "${marker}" in its log after ${seconds} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
  const status = (getJson("pod", pod, namespace).status.containerStatuses as Json[]).find((s) => s.name === container);
  const id = String(status?.containerID ?? "").replace(/^containerd:\/\//, "");
  const tasks = execFileSync(CTR, ["--address", CONTAINERD_SOCK, "-n", "k8s.io", "tasks", "list"], { encoding: "utf8" });
  const pid = tasks.split("\n").map((l) => l.trim().split(/\s+/)).find((f) => f[0] === id)?.[1];
  if (!pid) throw new Error(`${pod}/${container}: container ${id} is not among containerd's tasks`);
  process.kill(Number(pid), "SIGKILL");
}
