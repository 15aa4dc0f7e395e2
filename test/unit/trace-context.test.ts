// W3C Trace Context's TRACEPARENT as src/trace/context.ts reads it, and the OpenTelemetry variables as
// src/trace/config.ts and src/base/trace-switch.ts read them (docs/tracing.md).
import { test } from "node:test";
import assert from "node:assert/strict";
import { parseTraceparent, podTraceId, traceContext } from "../../src/trace/context.js";
import { exportConfig, headers, resourceAttributes } from "../../src/trace/config.js";
import { exportTimeoutMs, tracingWanted } from "../../src/base/trace-switch.js";

const VALID = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

test("a valid TRACEPARENT, and a later version read by its first four fields", () => {
  assert.deepEqual(parseTraceparent(VALID), { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", parentId: "00f067aa0ba902b7", flags: "01" });
  assert.equal(parseTraceparent(`01${VALID.slice(2)}-what-comes-next`)?.traceId, "4bf92f3577b34da6a3ce929d0e0e4736");
  assert.equal(parseTraceparent(`cc${VALID.slice(2)}`)?.flags, "01");
});

test("an invalid TRACEPARENT is ignored: length, case, zero ids, version ff, separators, trailing data on 00", () => {
  const cases = [
    "", VALID.slice(0, 54), `${VALID}0`, `${VALID}-x`, VALID.toUpperCase(), VALID.replace("4bf9", "4BF9"),
    `00-${"0".repeat(32)}-00f067aa0ba902b7-01`, `00-4bf92f3577b34da6a3ce929d0e0e4736-${"0".repeat(16)}-01`,
    `ff${VALID.slice(2)}`, VALID.replace(/-/g, "_"), VALID.replace("-01", "-0g"), `0x${VALID.slice(2)}`,
    `01${VALID.slice(2)}x`, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\u0000",
  ];
  for (const value of cases) assert.equal(parseTraceparent(value), undefined, JSON.stringify(value));
});

test("the context: TRACEPARENT's trace and parent, TRACESTATE kept; without one, the pod's id; sampled from the flags", () => {
  assert.deepEqual(traceContext({ TRACEPARENT: VALID, TRACESTATE: "a=b" }), { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", parentSpanId: "00f067aa0ba902b7", traceState: "a=b", sampled: true, flags: "01" });
  assert.equal(traceContext({ TRACEPARENT: VALID.replace(/01$/, "00") }).sampled, false);
  const pod = traceContext({ TRACEPARENT: VALID.toUpperCase(), TRACESTATE: "a=b", HOSTNAME: "pod-1" });
  assert.equal(pod.parentSpanId, undefined);
  assert.equal(pod.traceState, undefined);
  assert.equal(pod.traceId, podTraceId({ HOSTNAME: "pod-1" }));
  assert.match(pod.traceId, /^[0-9a-f]{32}$/);
  assert.notEqual(podTraceId({ HOSTNAME: "pod-2" }), pod.traceId, "another pod name, another trace");
});

test("what turns tracing on, and what keeps it off", () => {
  assert.equal(tracingWanted({}), false);
  assert.equal(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" }), true);
  assert.equal(tracingWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c:4318/v1/traces" }), true);
  assert.equal(tracingWanted({ OTEL_TRACES_EXPORTER: "otlp" }), true);
  assert.equal(tracingWanted({ BATON_TRACES_DIR: "/t" }), true);
  assert.equal(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: "" }), false);
  assert.equal(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SDK_DISABLED: "TRUE" }), false);
  assert.equal(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_TRACES_EXPORTER: "none" }), false);
  assert.equal(tracingWanted({ OTEL_TRACES_EXPORTER: "console" }), false);
  assert.equal(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", BATON_TRACES_DIR: "/t", BATON_TRACES: "OFF" }), false);
  assert.equal(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", BATON_TRACES: "on" }), true);
});

test("the endpoint, the protocol and the timeout", () => {
  const lines: string[] = [];
  const warn = (line: string) => lines.push(line);
  assert.equal(exportConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318/" }, warn).url?.href, "http://c:4318/v1/traces");
  assert.equal(exportConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318/base" }, warn).url?.href, "http://c:4318/base/v1/traces");
  assert.equal(exportConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://d/x" }, warn).url?.href, "http://d/x");
  assert.equal(exportConfig({ OTEL_TRACES_EXPORTER: "otlp" }, warn).url?.href, "http://localhost:4318/v1/traces");
  assert.equal(exportConfig({ BATON_TRACES_DIR: "/t" }, warn).url, undefined);
  assert.equal(exportConfig({ OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }, warn).json, true);
  assert.deepEqual(lines, []);
  assert.equal(exportConfig({ OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }, warn).url, undefined);
  assert.equal(exportConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "ftp://c" }, warn).url, undefined);
  assert.equal(exportConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "not a url" }, warn).url, undefined);
  assert.equal(lines.length, 3);
  assert.equal(exportTimeoutMs({}), 2000);
  assert.equal(exportTimeoutMs({ OTEL_EXPORTER_OTLP_TIMEOUT: "500" }), 500);
  assert.equal(exportTimeoutMs({ OTEL_EXPORTER_OTLP_TIMEOUT: "500", OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: "700" }), 700);
  assert.equal(exportTimeoutMs({ OTEL_EXPORTER_OTLP_TIMEOUT: "99999999999" }), 10_000);
  assert.equal(exportTimeoutMs({ OTEL_EXPORTER_OTLP_TIMEOUT: "-1" }), 2000);
  assert.equal(exportTimeoutMs({ OTEL_EXPORTER_OTLP_TIMEOUT: "1e3" }), 2000);
});

test("headers: decoded; one that cannot be sent is left out, its value never said", () => {
  const lines: string[] = [];
  const got = headers("api-key=s3cret%20x, X-Other = y ,bad name=secret1,crlf=a%0D%0Asecret2,big=" + "s".repeat(9000) + ",noequals,pct=%zz", "H", (l) => lines.push(l));
  assert.deepEqual(got, { "api-key": "s3cret x", "x-other": "y" });
  assert.equal(lines.length, 5);
  for (const line of lines) assert.doesNotMatch(line, /secret|sss/);
});

test("OTEL_RESOURCE_ATTRIBUTES: decoded; any error discards the whole value", () => {
  const lines: string[] = [];
  const warn = (l: string) => lines.push(l);
  assert.deepEqual(resourceAttributes("a=1,b=x%2Cy, c = z ", warn), { a: "1", b: "x,y", c: "z" });
  assert.deepEqual(resourceAttributes("a=%0A", warn), { a: "\n" }, "an encoded control character is a value like any other");
  assert.deepEqual(lines, []);
  for (const bad of ["a=1,b", "a=1\nb=2", "a=\u001b[31m", "=x", "a=%zz"]) assert.deepEqual(resourceAttributes(bad, warn), {}, JSON.stringify(bad));
  assert.equal(lines.length, 5);
});

test("the pod's trace id: the same text the same id, any change another; never all zeros", async () => {
  const { hash128 } = await import("../../src/trace/context.js");
  const a = hash128("boot\nnet:[4026532281]\nipc:[4026532282]\nuts:[4026532283]\npod-1");
  assert.match(a, /^[0-9a-f]{32}$/);
  assert.equal(hash128("boot\nnet:[4026532281]\nipc:[4026532282]\nuts:[4026532283]\npod-1"), a);
  const others = new Set([a]);
  for (const text of ["boot\nnet:[4026532281]\nipc:[4026532282]\nuts:[4026532283]\npod-2", "boot\nnet:[4026532291]\nipc:[4026532282]\nuts:[4026532283]\npod-1", "", "a", "b"]) others.add(hash128(text));
  assert.equal(others.size, 6);
  assert.notEqual(hash128("").slice(0, 16), hash128("").slice(16), "two halves, not one repeated");
});
