// Runs a Pod (or a Job's pod template) under `podman kube play`, and reads back what a kubelet would report: each
// container's exit code, log and termination message, plus baton's lifecycle events and the pod's volumes.
//
// The manifest is run as written, with these changes for what podman 4.3 does differently from a kubelet:
//  - each emptyDir gets a pod-unique name: podman makes an emptyDir a named volume, shared by every pod that uses the
//    name, and a leftover one keeps its old files (a stale post file would let a step run early);
//  - a hostPath file (type File) is mounted at each container's terminationMessagePath, which podman ignores;
//  - BATON_EVENTS (a hostPath file at /dev/baton-events.jsonl) and BATON_NAME are set in each container, so that a test
//    can see what baton did and when (a step waiting, a command running), and check the order of the chain.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import type { Podman } from "./podman.js";

export const EVENTS_PATH = "/dev/baton-events.jsonl";
const DEFAULT_TERMINATION_PATH = "/dev/termination-log";

interface Container {
  name: string;
  env?: { name: string; value?: string }[];
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
  terminationMessagePath?: string;
  [key: string]: unknown;
}

interface PodSpec {
  initContainers?: Container[];
  containers: Container[];
  volumes?: { name: string; emptyDir?: unknown; hostPath?: { path: string; type?: string }; [key: string]: unknown }[];
  [key: string]: unknown;
}

export interface Manifest {
  kind: string;
  metadata: { name: string; [key: string]: unknown };
  spec: PodSpec | JobSpec;
}

interface JobSpec {
  template: { metadata?: Record<string, unknown>; spec: PodSpec };
  [key: string]: unknown;
}

/** A Pod's spec, or a Job's pod template's. */
export function podSpec(manifest: Manifest): PodSpec {
  return manifest.kind === "Job" ? (manifest.spec as JobSpec).template.spec : (manifest.spec as PodSpec);
}

export interface BatonEvent {
  t: number;
  event: string;
  [key: string]: unknown;
}

export interface ContainerResult {
  name: string;
  init: boolean;
  exitCode: number | undefined;
  /** Empty for an init container that succeeded: podman removes it, and its log with it. */
  log: string;
  message: string;
  events: BatonEvent[];
}

export interface EnvOverride {
  container: string;
  name: string;
  value: string;
}

let pods = 0;

export class PlayedPod {
  readonly name: string;
  private readonly manifestFile: string;
  private readonly hostDir: string;
  private readonly spec: PodSpec;
  private readonly volumes: string[];
  private readonly since = new Date().toISOString();

  constructor(private readonly podman: Podman, manifest: Manifest, env: EnvOverride[] = []) {
    this.name = `${manifest.metadata.name}-${++pods}`;
    this.hostDir = podman.folder(this.name);
    const spec = structuredClone(podSpec(manifest));
    const renamed = new Map<string, string>();
    for (const volume of spec.volumes ?? []) {
      if (volume.emptyDir === undefined) continue;
      renamed.set(volume.name, `${this.name}-${volume.name}`);
      volume.name = renamed.get(volume.name)!;
    }
    this.volumes = [...renamed.values()];
    const all = [...(spec.initContainers ?? []), ...spec.containers];
    for (const c of all) {
      for (const mount of c.volumeMounts ?? []) mount.name = renamed.get(mount.name) ?? mount.name;
      const files = {
        termination: [c.terminationMessagePath ?? DEFAULT_TERMINATION_PATH, this.hostFile(`${c.name}.termination`)],
        events: [EVENTS_PATH, this.hostFile(`${c.name}.events`)],
      };
      for (const [kind, [mountPath, path]] of Object.entries(files)) {
        const volume = `${c.name}-${kind}`;
        (spec.volumes ??= []).push({ name: volume, hostPath: { path: path!, type: "File" } });
        (c.volumeMounts ??= []).push({ name: volume, mountPath: mountPath! });
      }
      c.env = [
        ...(c.env ?? []).filter((e) => !env.some((o) => o.container === c.name && o.name === e.name)),
        ...env.filter((o) => o.container === c.name).map(({ name, value }) => ({ name, value })),
        { name: "BATON_EVENTS", value: EVENTS_PATH },
        { name: "BATON_NAME", value: c.name },
      ];
    }
    this.spec = spec;
    this.manifestFile = join(this.hostDir, "pod.yaml");
    const metadata = manifest.kind === "Job" ? { ...(manifest.spec as JobSpec).template.metadata } : { ...manifest.metadata };
    writeFileSync(this.manifestFile, stringify({ apiVersion: "v1", kind: "Pod", metadata: { ...metadata, name: this.name }, spec }));
  }

  private hostFile(name: string): string {
    const path = join(this.hostDir, name);
    writeFileSync(path, "");
    return path;
  }

  /** Starts the pod (init containers first, as `kube play` does). */
  async play(): Promise<void> {
    await this.podman.podman(["kube", "play", "--network", "none", this.manifestFile]);
  }

  /** baton's lifecycle events of one container so far. */
  events(container: string): BatonEvent[] {
    const file = join(this.hostDir, `${container}.events`);
    if (!existsSync(file)) return [];
    return readFileSync(file, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line) as BatonEvent);
  }

  /** Waits until every container has ended (podman wait: an event, not a poll), at most `seconds`. */
  async finish(seconds = 120): Promise<Map<string, ContainerResult>> {
    const names = this.spec.containers.map((c) => `${this.name}-${c.name}`);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<"deadline">((done) => (timer = setTimeout(() => done("deadline"), seconds * 1000)));
    const ended = await Promise.race([this.podman.podman(["wait", ...names]), deadline]);
    clearTimeout(timer);
    if (ended === "deadline") {
      await this.podman.podman(["pod", "stop", "--time", "0", this.name], true);
      throw new Error(`pod ${this.name} did not end within ${seconds} s`);
    }
    return this.results();
  }

  async results(): Promise<Map<string, ContainerResult>> {
    const codes = await this.podman.exitCodes(this.since);
    const results = new Map<string, ContainerResult>();
    const containers = [
      ...(this.spec.initContainers ?? []).map((c) => ({ c, init: true })),
      ...this.spec.containers.map((c) => ({ c, init: false })),
    ];
    for (const { c, init } of containers) {
      const full = `${this.name}-${c.name}`;
      const logs = await this.podman.podman(["logs", full], true);
      results.set(c.name, {
        name: c.name,
        init,
        exitCode: codes.get(full),
        log: logs.code === 0 ? logs.stdout + logs.stderr : "",
        message: readFileSync(join(this.hostDir, `${c.name}.termination`), "utf8"),
        events: this.events(c.name),
      });
    }
    return results;
  }

  /** The host folder behind one of the manifest's emptyDir volumes (by its name in the manifest). */
  async volume(name: string): Promise<string> {
    const { stdout } = await this.podman.podman(["volume", "inspect", "--format", "{{.Mountpoint}}", `${this.name}-${name}`]);
    return stdout.trim();
  }

  /** `podman pod stop`: SIGTERM to every container's PID 1, SIGKILL `seconds` later. */
  async stop(seconds: number): Promise<void> {
    await this.podman.podman(["pod", "stop", "--time", String(seconds), this.name]);
  }

  async remove(): Promise<void> {
    await this.podman.podman(["kube", "down", this.manifestFile], true);
    if (this.volumes.length > 0) await this.podman.podman(["volume", "rm", "--force", ...this.volumes], true);
  }
}
