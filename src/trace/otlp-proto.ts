import type { AttributeValue, Span } from "./spans.js";
import { STATUS_ERROR } from "./spans.js";

// An OTLP ExportTraceServiceRequest in protobuf's wire format (opentelemetry-proto, trace/v1 and collector/trace/v1):
// only the fields baton sends, each written as protoc would (fields in number order, defaults left out). Small enough
// to write by hand, and measured against the OpenTelemetry JS exporter in docs/performance.md ("Tracing"); the
// known bytes are in test/unit/trace-otlp.test.ts.

const SPAN_KIND_INTERNAL = 1;

export function encodeRequestProto(resource: [string, AttributeValue][], scope: { name: string; version: string }, spans: readonly Span[]): Uint8Array {
  const scopeSpans = new Writer();
  scopeSpans.message(1, new Writer().string(1, scope.name).string(2, scope.version));
  for (const span of spans) scopeSpans.message(2, encodeSpan(span));
  const resourceSpans = new Writer();
  const resourceMessage = new Writer();
  for (const attribute of resource) resourceMessage.message(1, keyValue(attribute));
  resourceSpans.message(1, resourceMessage);
  resourceSpans.message(2, scopeSpans);
  return new Writer().message(1, resourceSpans).finish();
}

function encodeSpan(span: Span): Writer {
  const out = new Writer();
  out.bytes(1, hex(span.traceId));
  out.bytes(2, hex(span.spanId));
  if (span.traceState) out.string(3, span.traceState);
  if (span.parentSpanId) out.bytes(4, hex(span.parentSpanId));
  out.string(5, span.name);
  out.varintField(6, SPAN_KIND_INTERNAL);
  out.fixed64(7, nanos(span.start));
  out.fixed64(8, nanos(span.end));
  for (const attribute of span.attributes) out.message(9, keyValue(attribute));
  if (span.error !== undefined) out.message(15, new Writer().string(2, span.error).varintField(3, STATUS_ERROR));
  return out;
}

function keyValue([key, value]: [string, AttributeValue]): Writer {
  // AnyValue's value is a oneof: the field is written even when it holds its type's default ("", false, 0), as protoc
  // writes a set oneof; left out, the value would read as no value at all.
  const any = new Writer();
  if (typeof value === "string") any.bytes(1, Buffer.from(value, "utf8"));
  else if (typeof value === "boolean") any.varintAlways(2, value ? 1 : 0);
  else any.varintAlways(3, value);
  return new Writer().string(1, key).message(2, any);
}

/** Wall-clock ms (with a fraction) as Unix nanoseconds, exact to the nanosecond the fraction holds. */
export function nanos(ms: number): bigint {
  const whole = Math.floor(ms);
  return BigInt(whole) * 1_000_000n + BigInt(Math.round((ms - whole) * 1e6));
}

function hex(text: string): Uint8Array {
  return Buffer.from(text, "hex");
}

/** Protobuf's wire format, length-delimited fields made of finished writers. */
class Writer {
  private readonly parts: Uint8Array[] = [];
  private length = 0;

  private push(part: Uint8Array): this {
    this.parts.push(part);
    this.length += part.length;
    return this;
  }

  private varint(value: number | bigint): this {
    let v = BigInt.asUintN(64, BigInt(value));
    const out: number[] = [];
    while (v > 0x7fn) {
      out.push(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    out.push(Number(v));
    return this.push(Uint8Array.from(out));
  }

  private tag(field: number, wireType: number): this {
    return this.varint((field << 3) | wireType);
  }

  varintField(field: number, value: number): this {
    if (value === 0) return this;
    return this.varintAlways(field, value);
  }

  varintAlways(field: number, value: number): this {
    return this.tag(field, 0).varint(value);
  }

  fixed64(field: number, value: bigint): this {
    const bytes = Buffer.alloc(8);
    bytes.writeBigUInt64LE(BigInt.asUintN(64, value));
    return this.tag(field, 1).push(bytes);
  }

  bytes(field: number, value: Uint8Array): this {
    return this.tag(field, 2).varint(value.length).push(value);
  }

  string(field: number, value: string): this {
    if (value === "") return this;
    return this.bytes(field, Buffer.from(value, "utf8"));
  }

  message(field: number, inner: Writer): this {
    return this.bytes(field, inner.finish());
  }

  finish(): Uint8Array {
    return Buffer.concat(this.parts, this.length);
  }
}
