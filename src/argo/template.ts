import { parseDuration } from "../cli/duration.js";
import { BatonError } from "../base/errors.js";
import { checkJsonDepth } from "./json-depth.js";

// The part of Argo's Template (pkg/apis/workflow/v1alpha1) that the emissary reads, decoded as Go's encoding/json
// decodes it: keys match field names case-insensitively (the last matching key wins), null leaves a field empty,
// unknown keys are ignored, and a value of the wrong type fails the whole template.

export interface Template {
  /** containerSet.containers: each member's name and the members it waits for. */
  containers: { name: string; dependencies: string[] }[];
  /** Whether the template is a container set (its members, not `main`, are the main containers). */
  isContainerSet: boolean;
  retry: { attempts: number; delayMs: number } | { error: string };
  /** The volume mounts of the template's container, script or container set (Template.GetVolumeMounts). */
  volumeMountPaths: string[];
  sidecarNames: string[];
  parameterPaths: string[];
  artifactPaths: string[];
  archiveLogs: boolean;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

export function parseTemplate(text: string): Template {
  checkJsonDepth(text, "failed to unmarshal template");
  let root: Json;
  try {
    root = JSON.parse(text) as Json;
  } catch (error) {
    throw new BatonError(`failed to unmarshal template: ${(error as Error).message}`);
  }
  const t = object(root, "Template") ?? {};
  const containerSet = object(field(t, "containerSet"), "ContainerSetTemplate");
  const container = object(field(t, "container"), "Container");
  const script = object(field(t, "script"), "ScriptTemplate");
  const outputs = object(field(t, "outputs"), "Outputs") ?? {};
  const archive = object(field(t, "archiveLocation"), "ArtifactLocation");

  const containers = array(field(containerSet ?? {}, "containers"), "containers").map((node, i) => {
    const o = object(node, `containers[${i}]`) ?? {};
    return {
      name: string(field(o, "name"), "name"),
      dependencies: array(field(o, "dependencies"), "dependencies").map((d) => string(d, "dependencies")),
    };
  });
  // Template.GetVolumeMounts: the first of container, script, containerSet that is set.
  const mountsOwner = container ?? script ?? containerSet;
  const volumeMountPaths = array(field(mountsOwner ?? {}, "volumeMounts"), "volumeMounts").map(
    (m, i) => string(field(object(m, `volumeMounts[${i}]`) ?? {}, "mountPath"), "mountPath"),
  );
  const sidecarNames = array(field(t, "sidecars"), "sidecars").map((s, i) => string(field(object(s, `sidecars[${i}]`) ?? {}, "name"), "name"));
  const parameterPaths = array(field(outputs, "parameters"), "parameters").map((p, i) => {
    const valueFrom = object(field(object(p, `parameters[${i}]`) ?? {}, "valueFrom"), "ValueFrom");
    return valueFrom ? string(field(valueFrom, "path"), "path") : "";
  });
  const artifactPaths = array(field(outputs, "artifacts"), "artifacts").map((a, i) => string(field(object(a, `artifacts[${i}]`) ?? {}, "path"), "path"));
  const archiveLogs = archive ? boolean(field(archive, "archiveLogs"), "archiveLogs") : false;
  return {
    containers,
    isContainerSet: containerSet !== undefined,
    retry: retryOf(object(field(containerSet ?? {}, "retryStrategy"), "ContainerSetRetryStrategy")),
    volumeMountPaths,
    sidecarNames,
    parameterPaths: parameterPaths.filter((p) => p !== ""),
    artifactPaths: artifactPaths.filter((p) => p !== ""),
    archiveLogs,
  };
}

/** Template.GetMainContainerNames: the container set's members, else `main`. */
export function mainContainerNames(template: Template): string[] {
  return template.isContainerSet ? template.containers.map((c) => c.name) : ["main"];
}

/**
 * ContainerSetTemplate.GetRetryStrategy: `retries` (an integer, or a string holding one) is the number of attempts in
 * all, `duration` (Go syntax) the pause between them. A retryStrategy that cannot be read fails the container, but only
 * once it is about to run (Argo reads it after the dependencies), hence an error value here.
 */
function retryOf(strategy: JsonObject | undefined): Template["retry"] {
  const retries = strategy ? field(strategy, "retries") : null;
  if (retries === null || retries === undefined) return { attempts: 1, delayMs: 0 };
  let attempts: number;
  if (typeof retries === "string") {
    attempts = /^[+-]?\d+$/.test(retries) ? Number(retries) : 0; // intstr.IntValue: strconv.Atoi, 0 when it fails
  } else if (typeof retries === "number" && Number.isInteger(retries) && Math.abs(retries) < 2 ** 31) {
    attempts = retries;
  } else {
    throw new BatonError(`failed to unmarshal template: retries: ${JSON.stringify(retries)} is not an integer or a string`);
  }
  const duration = string(field(strategy!, "duration"), "duration");
  if (duration === "") return { attempts, delayMs: 0 };
  try {
    if (duration.startsWith("-") && duration !== "-0") {
      return { error: `failed to get retry strategy: duration has to be positive, current duration: ${duration}` };
    }
    return { attempts, delayMs: parseDuration(duration.replace(/^-0$/, "0"), "retryStrategy.duration") };
  } catch (error) {
    return { error: `failed to get retry strategy: time: invalid duration "${duration}"` };
  }
}

/** The value of the key that matches `name` as Go does: case-insensitively, the last such key in the object. */
function field(o: JsonObject, name: string): Json | undefined {
  const lower = name.toLowerCase();
  let found: Json | undefined;
  for (const key of Object.keys(o)) if (key.toLowerCase() === lower) found = o[key];
  return found;
}

function typeError(value: Json, what: string, goType: string): BatonError {
  const kind = Array.isArray(value) ? "array" : typeof value === "object" ? "object" : typeof value;
  return new BatonError(`failed to unmarshal template: cannot unmarshal ${kind} into ${what} of type ${goType}`);
}

function object(value: Json | undefined, what: string): JsonObject | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "object" || Array.isArray(value)) throw typeError(value, what, "object");
  return value;
}

function array(value: Json | undefined, what: string): Json[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw typeError(value, what, "array");
  return value;
}

function string(value: Json | undefined, what: string): string {
  if (value === undefined || value === null) return "";
  if (typeof value !== "string") throw typeError(value, what, "string");
  return value;
}

function boolean(value: Json | undefined, what: string): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value !== "boolean") throw typeError(value, what, "bool");
  return value;
}
