import type { AttributeValue, Span } from "./spans.js";
import { STATUS_ERROR } from "./spans.js";
import { nanos } from "./otlp-proto.js";

// The same request in OTLP's JSON encoding (OTLP/HTTP's http/json, and the file form): the protobuf JSON mapping with
// trace and span ids in hexadecimal, enums as numbers, 64-bit integers as strings.

export function encodeRequestJson(resource: [string, AttributeValue][], scope: { name: string; version: string }, spans: readonly Span[]): string {
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: resource.map(keyValue) },
        scopeSpans: [{ scope, spans: spans.map(encodeSpan) }],
      },
    ],
  });
}

function encodeSpan(span: Span): Record<string, unknown> {
  return {
    traceId: span.traceId,
    spanId: span.spanId,
    ...(span.traceState ? { traceState: span.traceState } : {}),
    ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
    name: span.name,
    kind: 1,
    startTimeUnixNano: String(nanos(span.start)),
    endTimeUnixNano: String(nanos(span.end)),
    attributes: span.attributes.map(keyValue),
    ...(span.error !== undefined ? { status: { code: STATUS_ERROR, message: span.error } } : {}),
  };
}

function keyValue([key, value]: [string, AttributeValue]): Record<string, unknown> {
  if (typeof value === "string") return { key, value: { stringValue: value } };
  if (typeof value === "boolean") return { key, value: { boolValue: value } };
  return { key, value: { intValue: String(value) } };
}
