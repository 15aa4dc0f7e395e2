// The OTLP encoders of src/trace against bytes worked out by hand from opentelemetry-proto (trace/v1/trace.proto,
// collector/trace/v1/trace_service.proto, common/v1/common.proto): each field's tag, length and value as protoc writes
// them. The real collector decodes the same requests in the collector tests.
import { test } from "node:test";
import assert from "node:assert/strict";
import { encodeRequestProto, nanos } from "../../src/trace/otlp-proto.js";
import { encodeRequestJson } from "../../src/trace/otlp-json.js";
import type { Span } from "../../src/trace/spans.js";

const SPAN: Span = {
  traceId: "0102030405060708090a0b0c0d0e0f10",
  spanId: "1112131415161718",
  name: "n",
  start: 1,
  end: 2,
  attributes: [["k", 3]],
  error: "e",
};
const RESOURCE: [string, string][] = [["service.name", "b"]];
const SCOPE = { name: "s", version: "1" };

test("protobuf: an ExportTraceServiceRequest as protoc writes it", () => {
  const hex = [
    "0a 66", // ExportTraceServiceRequest.resource_spans (1), 102 bytes
    "0a 15", //   ResourceSpans.resource (1), 21 bytes
    "0a 13", //     Resource.attributes (1), a KeyValue of 19 bytes
    "0a 0c 736572766963652e6e616d65", // key (1) "service.name"
    "12 03 0a 01 62", //                 value (2): AnyValue.string_value (1) "b"
    "12 4d", //   ResourceSpans.scope_spans (2), 77 bytes
    "0a 06 0a 01 73 12 01 31", //   ScopeSpans.scope (1): name (1) "s", version (2) "1"
    "12 43", //     ScopeSpans.spans (2), 67 bytes
    "0a 10 0102030405060708090a0b0c0d0e0f10", // trace_id (1)
    "12 08 1112131415161718", //                span_id (2)
    "2a 01 6e", //                              name (5) "n"
    "30 01", //                                 kind (6) SPAN_KIND_INTERNAL
    "39 40420f0000000000", //                   start_time_unix_nano (7, fixed64) 1000000
    "41 80841e0000000000", //                   end_time_unix_nano (8, fixed64) 2000000
    "4a 07 0a 01 6b 12 02 18 03", //            attributes (9): "k" = AnyValue.int_value (3) 3
    "7a 05 12 01 65 18 02", //                  status (15): message (2) "e", code (3) STATUS_CODE_ERROR
  ].join("").replace(/ /g, "");
  assert.equal(Buffer.from(encodeRequestProto(RESOURCE, SCOPE, [SPAN])).toString("hex"), hex);
});

test("protobuf: a parent, a trace state, a boolean, an empty string, a large int and a nanosecond time", () => {
  const span: Span = { ...SPAN, parentSpanId: "2122232425262728", traceState: "a=b", attributes: [["t", true], ["s", ""], ["p", 300], ["y", 0], ["f", false]], error: undefined, start: 1795941982206.5, end: 1795941982206.5 };
  const out = Buffer.from(encodeRequestProto([], SCOPE, [span])).toString("hex");
  assert.ok(out.includes("1a03613d62"), "trace_state (3) \"a=b\"");
  assert.ok(out.includes("22082122232425262728"), "parent_span_id (4)");
  assert.ok(out.includes("4a070a01741202" + "1001"), "\"t\" = bool_value (2) true");
  assert.ok(out.includes("4a070a01731202" + "0a00"), "\"s\" = string_value (1) \"\", present");
  assert.ok(out.includes("4a080a0170120318ac02"), "\"p\" = int_value 300 as a two-byte varint");
  assert.ok(out.includes("4a070a017912021800"), "\"y\" = int_value 0, present: a oneof's default is still written");
  assert.ok(out.includes("4a070a016612021000"), "\"f\" = bool_value false, present");
  const ns = Buffer.alloc(8);
  ns.writeBigUInt64LE(1795941982206500000n);
  assert.ok(out.includes(`39${ns.toString("hex")}`), "start_time_unix_nano to the nanosecond");
  assert.ok(out.endsWith("4a070a016612021000"), "no status (15) after the last attribute when the span did not fail");
  assert.equal(nanos(1795941982206.5), 1795941982206500000n);
  assert.equal(nanos(0.000001), 1n);
});

test("JSON: OTLP's JSON encoding, ids in hexadecimal, 64-bit integers as strings", () => {
  const json = JSON.parse(encodeRequestJson(RESOURCE, SCOPE, [{ ...SPAN, parentSpanId: "2122232425262728" }]));
  assert.deepEqual(json, {
    resourceSpans: [
      {
        resource: { attributes: [{ key: "service.name", value: { stringValue: "b" } }] },
        scopeSpans: [
          {
            scope: { name: "s", version: "1" },
            spans: [
              {
                traceId: "0102030405060708090a0b0c0d0e0f10",
                spanId: "1112131415161718",
                parentSpanId: "2122232425262728",
                name: "n",
                kind: 1,
                startTimeUnixNano: "1000000",
                endTimeUnixNano: "2000000",
                attributes: [{ key: "k", value: { intValue: "3" } }],
                status: { code: 2, message: "e" },
              },
            ],
          },
        ],
      },
    ],
  });
});
