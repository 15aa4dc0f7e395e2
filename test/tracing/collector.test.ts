// The harness itself (collector.ts) against the real collector, before any of baton's spans: a request made by hand in
// each of OTLP's two HTTP encodings comes back from the file exporter field by field. If these fail, the tracing
// tests' failures say nothing about baton.
import assert from "node:assert/strict";
import { test } from "node:test";
import { startCollector } from "./collector.js";

const TRACE = "5b8efff798038103d269b633813fc60c";
const PARENT = "eee19b7ec3c1b174";
const SPAN = "0102030405060708";

async function post(url: string, contentType: string, body: Uint8Array | string): Promise<number> {
  const response = await fetch(url, { method: "POST", headers: { "content-type": contentType }, body });
  await response.arrayBuffer();
  return response.status;
}

test("a request in OTLP's JSON encoding reaches the file, span by span", async () => {
  const collector = await startCollector();
  const request = {
    resourceSpans: [
      {
        resource: { attributes: [{ key: "service.name", value: { stringValue: "by-hand" } }] },
        scopeSpans: [
          {
            scope: { name: "test" },
            spans: [
              {
                traceId: TRACE,
                spanId: SPAN,
                parentSpanId: PARENT,
                name: "command",
                kind: 1,
                startTimeUnixNano: "1700000000000000000",
                endTimeUnixNano: "1700000000500000000",
                attributes: [{ key: "process.exit.code", value: { intValue: "3" } }],
                status: { code: 2, message: "exit code 3" },
              },
            ],
          },
        ],
      },
    ],
  };
  assert.equal(await post(`${collector.endpoint}/v1/traces`, "application/json", JSON.stringify(request)), 200);
  const spans = await collector.stop();
  assert.equal(spans.length, 1, JSON.stringify(spans, (_, v: unknown) => (typeof v === "bigint" ? String(v) : v)));
  const [span] = spans;
  assert.deepEqual(
    { ...span, start: String(span!.start), end: String(span!.end) },
    {
      traceId: TRACE,
      spanId: SPAN,
      parentSpanId: PARENT,
      name: "command",
      kind: 1,
      start: "1700000000000000000",
      end: "1700000000500000000",
      attributes: { "process.exit.code": 3 },
      status: { code: 2, message: "exit code 3" },
      traceState: "",
      resource: { "service.name": "by-hand" },
      scope: { name: "test", version: "" },
    },
  );
});

test("a request in OTLP's protobuf encoding reaches the file, span by span", async () => {
  const collector = await startCollector();
  assert.equal(await post(`${collector.endpoint}/v1/traces`, "application/x-protobuf", protobufRequest()), 200);
  const [span, ...more] = await collector.stop();
  assert.equal(more.length, 0);
  assert.equal(span!.traceId, TRACE);
  assert.equal(span!.spanId, SPAN);
  assert.equal(span!.parentSpanId, "");
  assert.equal(span!.name, "step");
  assert.equal(span!.end - span!.start, 250_000_000n);
  assert.deepEqual(span!.attributes, { "baton.step.name": "build" });
  assert.deepEqual(span!.resource, { "service.name": "by-hand" });
});

test("a request the receiver refuses (not OTLP) writes nothing", async () => {
  const collector = await startCollector();
  assert.equal(await post(`${collector.endpoint}/v1/traces`, "application/json", "{not json"), 400);
  assert.deepEqual(await collector.stop(), []);
});

// The smallest protobuf writer for the request above: field numbers from opentelemetry-proto's trace.proto,
// common.proto and resource.proto (ExportTraceServiceRequest.resource_spans = 1, ResourceSpans.resource = 1 and
// scope_spans = 2, ScopeSpans.spans = 2, Span.trace_id = 1, span_id = 2, name = 5, kind = 6, start = 7 and end = 8
// (fixed64), attributes = 9; KeyValue.key = 1, value = 2; AnyValue.string_value = 1).
function protobufRequest(): Uint8Array {
  const start = 1_700_000_000_000_000_000n;
  const span = Buffer.concat([
    bytes(1, Buffer.from(TRACE, "hex")),
    bytes(2, Buffer.from(SPAN, "hex")),
    bytes(5, Buffer.from("step")),
    Buffer.from([(6 << 3) | 0, 1]),
    fixed64(7, start),
    fixed64(8, start + 250_000_000n),
    bytes(9, keyValue("baton.step.name", "build")),
  ]);
  const resource = bytes(1, keyValue("service.name", "by-hand"));
  const resourceSpans = Buffer.concat([bytes(1, resource), bytes(2, bytes(2, span))]);
  return bytes(1, resourceSpans);
}

function keyValue(key: string, value: string): Buffer {
  return Buffer.concat([bytes(1, Buffer.from(key)), bytes(2, bytes(1, Buffer.from(value)))]);
}

function bytes(field: number, payload: Buffer): Buffer {
  return Buffer.concat([varint((field << 3) | 2), varint(payload.length), payload]);
}

function fixed64(field: number, value: bigint): Buffer {
  const out = Buffer.alloc(8);
  out.writeBigUInt64LE(value);
  return Buffer.concat([varint((field << 3) | 1), out]);
}

function varint(value: number): Buffer {
  const out: number[] = [];
  for (; value > 0x7f; value >>>= 7) out.push((value & 0x7f) | 0x80);
  out.push(value);
  return Buffer.from(out);
}
