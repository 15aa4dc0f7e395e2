// A container's environment and argv as the kubelet computes them: env entries in order, each value expanded against
// the entries before it; command and args expanded against the whole list. valueFrom.fieldRef is resolved from the
// manifest; the image's own environment (the host's here) is not visible to $(VAR), as in Kubernetes.
import type { IContainer, IEnvVar } from "kubernetes-models/v1";
import { expand } from "./expand.js";
import type { PodToRun } from "./manifest.js";

/** An env var set from the runner's command line, for one container or (container undefined) for all. */
export interface EnvOverride {
  container?: string;
  name: string;
  value: string;
}

export function containerEnv(pod: PodToRun, container: IContainer, overrides: EnvOverride[] = []): { env: [string, string][]; argv: string[] } {
  const defined = new Map<string, string>();
  const entries: IEnvVar[] = [...(container.env ?? [])];
  for (const o of overrides) {
    if (o.container !== undefined && o.container !== container.name) continue;
    const at = entries.findIndex((e) => e.name === o.name);
    const entry = { name: o.name, value: o.value };
    if (at >= 0) entries[at] = entry;
    else entries.push(entry);
  }
  for (const entry of entries) {
    const value = entry.valueFrom ? valueFrom(pod, container, entry) : expand(entry.value ?? "", (n) => defined.get(n));
    if (value === undefined) continue;
    defined.delete(entry.name); // a later entry of the same name wins, in the later position
    defined.set(entry.name, value);
  }
  const lookup = (n: string) => defined.get(n);
  const argv = [...(container.command ?? []), ...(container.args ?? [])].map((a) => expand(a, lookup));
  return { env: [...defined.entries()], argv };
}

function valueFrom(pod: PodToRun, container: IContainer, entry: IEnvVar): string | undefined {
  const from = entry.valueFrom!;
  if (from.fieldRef) {
    const path = from.fieldRef.fieldPath;
    const simple: Record<string, string> = {
      "metadata.name": pod.name,
      "metadata.namespace": pod.namespace,
      "metadata.uid": `local-${pod.name}`,
      "spec.nodeName": "localhost",
      "spec.serviceAccountName": pod.spec.serviceAccountName ?? "default",
      "status.podIP": "127.0.0.1",
      "status.hostIP": "127.0.0.1",
    };
    if (path in simple) return simple[path];
    const keyed = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(path);
    if (keyed) return (keyed[1] === "labels" ? pod.labels : pod.annotations)[keyed[2]!] ?? "";
    throw new Error(`container ${container.name}: env ${entry.name}: fieldRef ${path} is not supported by the local runner`);
  }
  const ref = from.configMapKeyRef ?? from.secretKeyRef;
  if (ref?.optional) return undefined;
  throw new Error(`container ${container.name}: env ${entry.name}: only fieldRef is supported by the local runner (no cluster to read ConfigMaps or Secrets from)`);
}
