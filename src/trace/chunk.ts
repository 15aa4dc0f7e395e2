import { readdirSync, readlinkSync } from "node:fs";
import { basename, resolve } from "node:path";
import { VERSION } from "../cli/help.js";
import { readOptionalText } from "../base/safe-files.js";
import { marks } from "../base/trace-marks.js";
import type { TraceInfo } from "./trace-info.js";
import { parseTraceparent, randomId, traceContext, type TraceContext } from "./context.js";
import { exportConfig } from "./config.js";
import { buildSpans, type AttributeValue, type SpanIds } from "./spans.js";
import { encodeRequestProto } from "./otlp-proto.js";
import { encodeRequestJson } from "./otlp-json.js";
import { sendHttp } from "./export-http.js";
import { writeTraceFile } from "./export-file.js";

// The trace chunk's entry (src/trace/load.ts loads it): a traced baton's context at its start, its commands'
// TRACEPARENT, and its spans built and sent at its exit (docs/tracing.md).

const SCOPE = { name: "baton", version: VERSION };
const NAMESPACE_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

let context: TraceContext;
let info: TraceInfo;
const ids: SpanIds = { root: "", commands: [] };

/** The chunk's side of src/trace/load.ts's TraceChunk. */
function begin(facts: TraceInfo, env: NodeJS.ProcessEnv): void {
  info = facts;
  context = traceContext(env);
  ids.root = randomId(8);
  // W3C: a TRACESTATE whose TRACEPARENT is not valid is not passed on (the command gets baton's TRACEPARENT instead).
  if (env.TRACEPARENT !== undefined && parseTraceparent(env.TRACEPARENT) === undefined) delete env.TRACESTATE;
}

function commandTraceparent(): string | undefined {
  const flags = context.sampled ? context.flags : "00";
  // A step's command nests under its own command span; a sidecar's and an Argo container's under the root, as Argo's
  // emissary does.
  let spanId = ids.root;
  if (info.mode === "step") {
    spanId = randomId(8);
    ids.commands.push(spanId);
  }
  return `00-${context.traceId}-${spanId}-${flags}`;
}

async function finish(exitCode: number, warn: (message: string) => void, deadline: number): Promise<void> {
  if (!context.sampled || marks === undefined) return;
  const end = performance.timeOrigin + performance.now();
  const env = process.env;
  const config = exportConfig(env, warn);
  if (info.engine === "tekton") info.name ??= tektonStepName(info)?.slice("step-".length);
  if (info.postFile !== undefined) info.name ??= basename(info.postFile);
  const spans = buildSpans(marks, info, context, ids, exitCode, performance.timeOrigin, end);
  // Argo's executor's attributes of runMainContainer: the workflow's name and namespace.
  if (info.mode === "emissary") spans[0]!.attributes.unshift(["name", env.ARGO_WORKFLOW_NAME ?? ""], ["namespace", namespaceOf() ?? ""]);
  const resource = resourceOf(env, config.resource, config.serviceName);
  if (config.folder !== undefined) {
    const line = writeTraceFile(config.folder, context.traceId, ids.root, encodeRequestJson(resource, SCOPE, spans));
    if (line !== undefined) warn(line);
  }
  if (config.url !== undefined) {
    const body = config.json ? Buffer.from(encodeRequestJson(resource, SCOPE, spans)) : encodeRequestProto(resource, SCOPE, spans);
    const line = await sendHttp(config.url, body, config.json, config.headers, deadline, config.ca);
    if (line !== undefined) warn(line);
  }
}

/** The resource: baton's own, the pod's where known, then OTEL_RESOURCE_ATTRIBUTES, then OTEL_SERVICE_NAME. */
function resourceOf(env: NodeJS.ProcessEnv, given: Record<string, string>, serviceName: string | undefined): [string, AttributeValue][] {
  const attributes = new Map<string, AttributeValue>([
    ["service.name", info.mode === "emissary" ? "argoexec" : "baton"],
    ["service.version", VERSION],
    ["telemetry.sdk.name", "baton"],
    ["telemetry.sdk.language", "nodejs"],
    ["telemetry.sdk.version", VERSION],
  ]);
  if (env.KUBERNETES_SERVICE_HOST && env.HOSTNAME) attributes.set("k8s.pod.name", env.HOSTNAME);
  const namespace = namespaceOf();
  if (namespace !== undefined) attributes.set("k8s.namespace.name", namespace);
  const container = info.containerName ?? (info.engine === "tekton" ? tektonStepName(info) : undefined);
  if (container !== undefined) attributes.set("k8s.container.name", container);
  for (const [key, value] of Object.entries(given)) attributes.set(key, value);
  if (serviceName !== undefined) attributes.set("service.name", serviceName);
  return [...attributes];
}

let namespace: string | null | undefined;

/** The pod's namespace, from its service account's file (as Argo's executor reads it), when mounted. */
export function namespaceOf(): string | undefined {
  if (namespace === undefined) {
    try {
      namespace = readOptionalText(NAMESPACE_FILE, 256, { followSymlink: true })?.trim() || null;
    } catch {
      namespace = null;
    }
  }
  return namespace ?? undefined;
}

/** Tekton's `step-NAME`: the link in TEKTON_ROOT/steps that points at this step's metadata folder. */
function tektonStepName(facts: TraceInfo): string | undefined {
  if (facts.stepMetadataDir === undefined || facts.tektonRoot === undefined) return undefined;
  const steps = `${facts.tektonRoot}/steps`;
  const wanted = resolve(facts.stepMetadataDir);
  try {
    for (const entry of readdirSync(steps).slice(0, 1000)) {
      if (!entry.startsWith("step-")) continue;
      try {
        if (resolve(steps, readlinkSync(`${steps}/${entry}`)) === wanted) return entry;
      } catch {
        // not a link
      }
    }
  } catch {
    // no steps folder
  }
  return undefined;
}

export { begin, commandTraceparent, finish };
