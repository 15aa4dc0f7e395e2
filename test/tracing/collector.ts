// The real OpenTelemetry Collector as the tracing tests' receiving end: the `otelcol` peer (`make peers` builds it from
// the Collector's Go modules: scripts/peers/collector), with its OTLP receiver on HTTP (protobuf and JSON) and the
// contrib file exporter writing every request it gets as a line of OTLP JSON into a file of the run. The tests read
// that file back, span by span: what a real collector made of what baton sent, not what baton meant to send.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import { catches, freePort, waitFor } from "../integration/helpers.js";
import { peer } from "../conformance/peers.js";

/** An OTLP attribute value as the JSON encoding gives it. */
type AnyValue =
  | { stringValue: string }
  | { intValue: string }
  | { boolValue: boolean }
  | { doubleValue: number }
  | { arrayValue: { values?: AnyValue[] } }
  | { kvlistValue: { values?: KeyValue[] } }
  | { bytesValue: string }
  | Record<string, never>;
interface KeyValue {
  key: string;
  value: AnyValue;
}

/** A span as the collector received it, flattened: its attributes, resource and scope as plain values. */
export interface Span {
  traceId: string;
  spanId: string;
  /** "" for a root span. */
  parentSpanId: string;
  name: string;
  kind: number;
  start: bigint;
  end: bigint;
  attributes: Record<string, unknown>;
  /** 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
  traceState: string;
  resource: Record<string, unknown>;
  scope: { name: string; version: string };
}

export interface Collector {
  /** The OTLP/HTTP base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it (`/v1/traces` appended). */
  endpoint: string;
  /** Every span written so far (the file exporter flushes every 10 ms; `stop` waits for the last ones). */
  spans(): Span[];
  /**
   * Stops the collector (SIGTERM: its shutdown stops the receiver, then flushes and closes the file) and returns every
   * span it received. What was sent and answered before this call is in the file by then: the exporter writes a
   * request before the receiver answers it.
   */
  stop(): Promise<Span[]>;
  /** What the collector logged (its stderr), for a failing test's message. */
  log(): string;
}

export interface CollectorOptions {
  /** Words before the collector's own: nsenter into a pod's network namespace (then it listens on 4318 there). */
  enter?: string[];
}

/** Collectors still running when the test file ends: killed, so that a failed test leaves none behind. */
const running = new Set<ChildProcess>();
after(() => {
  for (const child of running) child.kill("SIGKILL");
});

const READY = "Everything is ready. Begin running and processing data.";
const PORT_TAKEN = "address already in use";

/**
 * Starts the collector with a config of its own in a new folder and resolves once it says it is ready (its log line
 * after every component started: the receiver listens by then). On this machine's network it listens on a port that
 * was free a moment ago, and tries another one if that was taken in between; in a pod's network (`enter`), on 4318.
 */
export async function startCollector(options: CollectorOptions = {}): Promise<Collector> {
  const binary = peer("otelcol").path;
  for (let attempt = 1; ; attempt++) {
    const port = options.enter ? 4318 : await freePort();
    try {
      return await launch(binary, port, options.enter ?? []);
    } catch (error) {
      if (!(error instanceof PortTaken) || options.enter || attempt === 3) throw error;
    }
  }
}

class PortTaken extends Error {}

async function launch(binary: string, port: number, enter: string[]): Promise<Collector> {
  const dir = mkdtempSync(join(tmpdir(), "baton-collector-"));
  const file = join(dir, "spans.jsonl");
  writeFileSync(join(dir, "config.yaml"), config(port, file));
  const argv = [...enter, binary, `--config=file:${join(dir, "config.yaml")}`];
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ["ignore", "ignore", "pipe"] });
  running.add(child);
  let stderr = "";
  /** How it ended: "0", "1", "SIGKILL". */
  const exited = new Promise<string>((done) => {
    child.on("close", (code, signal) => {
      running.delete(child);
      done(signal ?? String(code));
    });
  });
  const said = new Promise<void>((ready, fail) => {
    const guard = setTimeout(() => fail(new Error(`the collector did not say it was ready within 30 s:\n${stderr}`)), 30_000);
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
      if (stderr.includes(READY)) {
        clearTimeout(guard);
        ready();
      }
    });
    child.on("error", (error) => {
      clearTimeout(guard);
      fail(error);
    });
    void exited.then((end) => {
      clearTimeout(guard);
      const message = `the collector exited (${end}) before it was ready:\n${stderr}`;
      fail(stderr.includes(PORT_TAKEN) ? new PortTaken(message) : new Error(message));
    });
  });
  try {
    await said;
    // Its SIGTERM handler (the graceful shutdown that `stop` asks for) is installed just after that line: a SIGTERM
    // in between would end it at once, its file unflushed. No event tells it: /proc does.
    await waitFor(() => (catches(child.pid!, 15) ? true : undefined), "the collector to handle SIGTERM");
  } catch (error) {
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const read = () => parseSpans(readOr(file));
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans: read,
    log: () => stderr,
    stop: async () => {
      child.kill("SIGTERM");
      const end = await exited;
      try {
        if (end !== "0") throw new Error(`the collector ended with ${end} at its shutdown:\n${stderr}`);
        return read();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/**
 * The collector's config: the OTLP receiver on HTTP only (baton exports over HTTP), the file exporter flushing every
 * 10 ms (1 s by default), and none of the collector's own telemetry (its metrics would listen on port 8888).
 */
function config(port: number, file: string): string {
  return `receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${port}
exporters:
  file:
    path: ${JSON.stringify(file)}
    format: json
    flush_interval: 10ms
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [file]
`;
}

function readOr(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

interface ExportRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: {
      scope?: { name?: string; version?: string };
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        traceState?: string;
        name: string;
        kind?: number;
        startTimeUnixNano: string;
        endTimeUnixNano: string;
        attributes?: KeyValue[];
        status?: { code?: number; message?: string };
      }[];
    }[];
  }[];
}

/** The file exporter's lines (one ExportTraceServiceRequest each, in OTLP's JSON encoding), flattened to spans. */
export function parseSpans(text: string): Span[] {
  const spans: Span[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const request = JSON.parse(line) as ExportRequest;
    for (const rs of request.resourceSpans ?? []) {
      const resource = attributes(rs.resource?.attributes);
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          spans.push({
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ?? "",
            name: s.name,
            kind: s.kind ?? 0,
            start: BigInt(s.startTimeUnixNano),
            end: BigInt(s.endTimeUnixNano),
            attributes: attributes(s.attributes),
            status: { code: s.status?.code ?? 0, message: s.status?.message ?? "" },
            traceState: s.traceState ?? "",
            resource,
            scope: { name: ss.scope?.name ?? "", version: ss.scope?.version ?? "" },
          });
        }
      }
    }
  }
  return spans;
}

function attributes(list: KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, plain(value)]));
}

/** An AnyValue as a plain value: an int64 (a string in OTLP JSON) as a number, which every value here fits. */
function plain(value: AnyValue): unknown {
  if ("stringValue" in value) return value.stringValue;
  if ("intValue" in value) return Number(value.intValue);
  if ("boolValue" in value) return value.boolValue;
  if ("doubleValue" in value) return value.doubleValue;
  if ("bytesValue" in value) return value.bytesValue;
  if ("arrayValue" in value) return (value.arrayValue.values ?? []).map(plain);
  if ("kvlistValue" in value) return attributes(value.kvlistValue.values);
  return undefined;
}
