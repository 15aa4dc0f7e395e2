// Reads a Kubernetes manifest (YAML, one or more documents) and finds the pods to run: a Pod, or a Job's pod template.
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import type { IPodSpec } from "kubernetes-models/v1";

export interface PodToRun {
  /** "Pod" or "Job": what the manifest declared. */
  kind: "Pod" | "Job";
  name: string;
  namespace: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  spec: IPodSpec;
  /** The whole document as parsed, for validation against the Kubernetes schemas. */
  document: Record<string, unknown>;
}

export class ManifestError extends Error {}

export function loadManifest(path: string): PodToRun[] {
  return parseManifest(readFileSync(path, "utf8"), path);
}

export function parseManifest(text: string, source = "manifest"): PodToRun[] {
  const pods: PodToRun[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new ManifestError(`${source}: ${doc.errors[0]!.message}`);
    const object = doc.toJS() as Record<string, any> | null;
    if (object === null || typeof object !== "object") continue;
    const metadata = object.metadata ?? {};
    if (object.kind === "Pod") {
      pods.push(podToRun("Pod", object, metadata, object.spec, source));
    } else if (object.kind === "Job") {
      const template = object.spec?.template ?? {};
      const templateMeta = template.metadata ?? {};
      // A Job's pods are named <job>-<random suffix>; the labels of the template apply.
      pods.push(podToRun("Job", object, { ...templateMeta, name: `${metadata.name ?? "job"}-local`, namespace: metadata.namespace }, template.spec, source));
    }
  }
  if (pods.length === 0) throw new ManifestError(`${source}: no Pod or Job in this manifest`);
  return pods;
}

function podToRun(kind: "Pod" | "Job", object: Record<string, any>, metadata: Record<string, any>, spec: IPodSpec | undefined, source: string): PodToRun {
  if (!spec || !Array.isArray(spec.containers) || spec.containers.length === 0) {
    throw new ManifestError(`${source}: ${kind} ${metadata.name ?? ""} has no containers`);
  }
  return {
    kind,
    name: String(metadata.name ?? "pod"),
    namespace: String(metadata.namespace ?? "default"),
    labels: metadata.labels ?? {},
    annotations: metadata.annotations ?? {},
    spec,
    document: object,
  };
}
