// A pod for the tracing tests, played on this machine: the namespaces every container of a pod shares (a network with
// its own loopback, the host name, IPC: the pod runner's sandbox, as a node's pause container holds them), the real
// collector listening on 4318 in that network (as a collector sidecar or a node agent on the pod's loopback), and each
// container started in them as PID 1 of a PID and mount namespace of its own, the pod's shared volume bound at /tekton.
// baton derives a pod's trace from exactly these namespaces and the pod's HOSTNAME (docs/tracing.md, "One trace per
// pod"), so every container of one pod lands in one trace and no two pods share one.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after } from "node:test";
import { PodSandbox } from "../../scripts/podrunner/sandbox.js";
import { BATON, cleanEnv, STANDALONE, startBaton, type Baton } from "../integration/helpers.js";
import { startCollector, type Collector, type Span } from "./collector.js";

/** How a container's baton is started: the bundle on the Node running the test, or the standalone build. */
export type Build = "bundle" | "standalone";
/** OTEL_EXPORTER_OTLP_PROTOCOL. */
export type Protocol = "http/protobuf" | "http/json";

export interface TracePod {
  /** The pod's name: its HOSTNAME, and so part of its trace id. */
  name: string;
  /** The host folder every container sees at /tekton. */
  tekton: string;
  collector: Collector;
  /** The trace id docs/tracing.md says this pod's containers derive when no TRACEPARENT is given. */
  traceId: string;
  /** Starts one container: baton with `args` as PID 1, the export's variables set, `env` added. */
  start(args: string[], env?: Record<string, string>): Baton;
  /** Stops the collector (returning every span it got) and the pod's namespaces. */
  finish(): Promise<Span[]>;
}

export interface PodOptions {
  build?: Build;
  protocol?: Protocol;
}

// The pod's volume at /tekton (a mount point made once on this machine, as the conformance suite makes it), bound in
// each container's own mount namespace, so nothing of one pod is seen by another; the command runs in /tekton.
const SANDBOX = 'mount --bind "$0" /tekton && cd /tekton && exec "$@"';

export async function tracePod(name: string, options: PodOptions = {}): Promise<TracePod> {
  if (!existsSync("/tekton")) mkdirSync("/tekton");
  const tekton = mkdtempSync(join(tmpdir(), "baton-trace-pod-"));
  // Kept until the file ends: a test reads what the commands left there after the pod is gone.
  after(() => rmSync(tekton, { recursive: true, force: true }));
  const sandbox = await PodSandbox.start(name, (message) => process.stderr.write(`${message}\n`));
  const enter = sandbox.enter();
  let collector: Collector;
  try {
    collector = await startCollector({ enter });
  } catch (error) {
    await sandbox.stop();
    throw error;
  }
  const words = options.build === "standalone" ? [STANDALONE] : [process.execPath, BATON];
  return {
    name,
    tekton,
    collector,
    traceId: podTraceId(enter, name),
    start(args, env = {}) {
      return startBaton(args, {
        pid1: true,
        outer: enter,
        prefix: ["sh", "-c", SANDBOX, tekton],
        baton: words,
        env: cleanEnv({
          HOSTNAME: name,
          OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
          OTEL_EXPORTER_OTLP_PROTOCOL: options.protocol ?? "http/protobuf",
          ...env,
        }),
      });
    },
    async finish() {
      try {
        return await collector.stop();
      } finally {
        await sandbox.stop();
      }
    },
  };
}

/**
 * The rule of docs/tracing.md, computed from outside: the node's boot id and the pod's network, IPC and UTS namespaces
 * (as /proc/PID/ns shows them) and its name, one per line, hashed as the page says (fnv1aMixed, twice).
 */
function podTraceId(enter: string[], name: string): string {
  const holder = /^--net=(\/proc\/\d+\/ns)\/net$/.exec(enter.find((word) => word.startsWith("--net=")) ?? "");
  if (!holder) throw new Error(`the pod sandbox has no network namespace of its own (${enter.join(" ")}): \`ip\` is missing`);
  const ns = holder[1]!;
  const parts = [
    readFileSync("/proc/sys/kernel/random/boot_id", "latin1").trim(),
    readlinkSync(`${ns}/net`),
    readlinkSync(`${ns}/ipc`),
    readlinkSync(`${ns}/uts`),
    name,
  ];
  const text = Buffer.from(parts.join("\n"), "utf8");
  return fnv1aMixed(text, 0xcbf29ce484222325n) + fnv1aMixed(text, 0x84222325cbf29ce4n);
}

/** docs/tracing.md: FNV-1a 64 from `basis`, then SplitMix64's finalizer, as 16 hex digits. */
function fnv1aMixed(bytes: Buffer, basis: bigint): string {
  const mod = (v: bigint) => BigInt.asUintN(64, v);
  let h = basis;
  for (let i = 0; i < bytes.length; i++) h = mod((h ^ BigInt(bytes[i]!)) * 0x100000001b3n);
  h = mod((h ^ (h >> 30n)) * 0xbf58476d1ce4e5b9n);
  h = mod((h ^ (h >> 27n)) * 0x94d049bb133111ebn);
  return (h ^ (h >> 31n)).toString(16).padStart(16, "0");
}

/** A symbolic link at PATH (under the pod's /tekton, given as a /tekton path) to TARGET, as Tekton's init makes them. */
export function link(pod: TracePod, path: string, target: string): void {
  const at = join(pod.tekton, path.replace(/^\/tekton\//, ""));
  mkdirSync(dirname(at), { recursive: true });
  symlinkSync(target, at);
}

/** A pod's spans as a tree: each root span (a container's baton) with its children, by name. */
export interface Container {
  root: Span;
  children: Span[];
  /** The one child named `name`; fails if there is none or more than one. */
  child(name: string): Span;
}

/** Groups spans by their root, the one whose parent is not among them (the given TRACEPARENT's, or none). */
export function containers(spans: Span[]): Container[] {
  const ids = new Set(spans.map((s) => s.spanId));
  return spans
    .filter((s) => !ids.has(s.parentSpanId))
    .map((root) => {
      const children = spans.filter((s) => s.parentSpanId === root.spanId);
      return {
        root,
        children,
        child(name: string) {
          const found = children.filter((s) => s.name === name);
          if (found.length !== 1) throw new Error(`${root.name} ${String(root.attributes["baton.step.name"])} has ${found.length} "${name}" spans: ${children.map((s) => s.name).join(", ")}`);
          return found[0]!;
        },
      };
    });
}

/**
 * `earlier` is not after `later` (times in ns), but for `slackMs` of clock reading: each baton's times are its own
 * wall clock read through performance.timeOrigin, which processes read alike to about a millisecond.
 */
export function notAfter(earlier: bigint, later: bigint, what: string, slackMs = 2): void {
  assert.ok(earlier <= later + BigInt(slackMs) * 1_000_000n, `${what}: ${Number(earlier - later) / 1e6} ms after`);
}

/** Spans as text for an assertion's message (bigint times as strings). */
export function show(spans: Span[]): string {
  return JSON.stringify(spans, (_, value: unknown) => (typeof value === "bigint" ? String(value) : value), 1);
}
