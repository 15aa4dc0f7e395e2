// An OTLP/HTTP collector for the tracing tests, in the test's own process (node:http), and the hostile ones: refused,
// silent, slow, garbage, 5xx, an endless answer, a redirect. Also a reader of OTLP protobuf requests, enough to find
// each span's ids, name, attributes and status (field numbers of opentelemetry-proto's trace/v1).
import { createServer as createHttpServer, type IncomingMessage, type Server } from "node:http";
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from "node:net";
import { freePort } from "./helpers.js";

export interface Received {
  path: string;
  headers: IncomingMessage["headers"];
  body: Buffer;
}

export interface ReadSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  traceState: string;
  name: string;
  attributes: Record<string, string | number | boolean>;
  status?: { code: number; message: string };
  start: bigint;
  end: bigint;
}

export type Behaviour = "ok" | "silent" | "slow" | "garbage" | "5xx" | "endless" | "redirect" | "refused";

export interface Sink {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

/** A collector at 127.0.0.1 that behaves as asked ("refused": a port nobody listens on). */
export async function startSink(behaviour: Behaviour = "ok", redirectTo?: string): Promise<Sink> {
  const received: Received[] = [];
  if (behaviour === "refused") {
    const port = await freePort();
    return { url: `http://127.0.0.1:${port}`, received, close: async () => {} };
  }
  const sockets = new Set<Socket>();
  let server: Server | TcpServer;
  if (behaviour === "silent" || behaviour === "garbage") {
    server = createTcpServer((socket) => {
      sockets.add(socket);
      socket.on("error", () => undefined);
      if (behaviour === "garbage") socket.end(Buffer.from("\x00\xffNOT HTTP\r\n\r\n\x01\x02".repeat(100), "latin1"));
    });
  } else {
    const timers = new Set<NodeJS.Timeout>();
    server = createHttpServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        received.push({ path: request.url ?? "", headers: request.headers, body: Buffer.concat(chunks) });
        if (behaviour === "ok") response.writeHead(200, { "content-type": "application/x-protobuf" }).end();
        else if (behaviour === "5xx") response.writeHead(503).end("overloaded");
        else if (behaviour === "redirect") response.writeHead(307, { location: redirectTo ?? "http://127.0.0.1:1/" }).end();
        else if (behaviour === "slow") timers.add(setTimeout(() => response.writeHead(200).end(), 60_000));
        else if (behaviour === "endless") {
          response.writeHead(200, { "content-type": "application/x-protobuf" });
          const more = () => {
            if (!response.destroyed) response.write(Buffer.alloc(65536, 1), () => setImmediate(more));
          };
          more();
        }
      });
    });
    server.on("connection", (socket: Socket) => sockets.add(socket));
    server.on("close", () => timers.forEach(clearTimeout));
  }
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The spans of an OTLP ExportTraceServiceRequest in protobuf. */
export function readProtoSpans(body: Buffer): ReadSpan[] {
  const spans: ReadSpan[] = [];
  for (const resourceSpans of fields(body, 1)) {
    for (const scopeSpans of fields(resourceSpans, 2)) for (const span of fields(scopeSpans, 2)) spans.push(readSpan(span));
  }
  return spans;
}

function readSpan(span: Buffer): ReadSpan {
  const out: ReadSpan = { traceId: "", spanId: "", parentSpanId: "", traceState: "", name: "", attributes: {}, start: 0n, end: 0n };
  for (const [field, value] of walk(span)) {
    if (field === 1) out.traceId = (value as Buffer).toString("hex");
    else if (field === 2) out.spanId = (value as Buffer).toString("hex");
    else if (field === 3) out.traceState = (value as Buffer).toString();
    else if (field === 4) out.parentSpanId = (value as Buffer).toString("hex");
    else if (field === 5) out.name = (value as Buffer).toString();
    else if (field === 7) out.start = value as bigint;
    else if (field === 8) out.end = value as bigint;
    else if (field === 9) {
      const key = fields(value as Buffer, 1)[0]!.toString();
      const [[kind, v]] = walk(fields(value as Buffer, 2)[0] ?? Buffer.alloc(0)) as [number, Buffer | bigint][];
      out.attributes[key] = kind === 1 ? (v as Buffer).toString() : kind === 2 ? v === 1n : Number(v);
    } else if (field === 15) {
      let message = "";
      let code = 0;
      for (const [f, v] of walk(value as Buffer)) {
        if (f === 2) message = (v as Buffer).toString();
        if (f === 3) code = Number(v);
      }
      out.status = { code, message };
    }
  }
  return out;
}

/** The resource attributes of the first ResourceSpans. */
export function readProtoResource(body: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  const resource = fields(fields(body, 1)[0]!, 1)[0] ?? Buffer.alloc(0);
  for (const keyValue of fields(resource, 1)) out[fields(keyValue, 1)[0]!.toString()] = (fields(fields(keyValue, 2)[0]!, 1)[0] ?? Buffer.alloc(0)).toString();
  return out;
}

function fields(message: Buffer, wanted: number): Buffer[] {
  return walk(message).filter(([field]) => field === wanted).map(([, value]) => value as Buffer);
}

/** Protobuf's wire format, one level: [field, value] with value a Buffer (length-delimited) or a bigint. */
function walk(message: Buffer): [number, Buffer | bigint][] {
  const out: [number, Buffer | bigint][] = [];
  let at = 0;
  const varint = () => {
    let value = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const byte = message[at++]!;
      value |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return value;
    }
  };
  while (at < message.length) {
    const tag = Number(varint());
    const field = tag >> 3;
    const type = tag & 7;
    if (type === 0) out.push([field, varint()]);
    else if (type === 1) {
      out.push([field, message.readBigUInt64LE(at)]);
      at += 8;
    } else if (type === 2) {
      const length = Number(varint());
      out.push([field, message.subarray(at, at + length)]);
      at += length;
    } else if (type === 5) {
      out.push([field, BigInt(message.readUInt32LE(at))]);
      at += 4;
    } else throw new Error(`wire type ${type}`);
  }
  return out;
}

/** The spans of one line of the file form (OTLP JSON), read into the same shape. */
export function readJsonSpans(text: string): ReadSpan[] {
  const request = JSON.parse(text) as { resourceSpans: { scopeSpans: { spans: Record<string, unknown>[] }[] }[] };
  return request.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)).map((span) => ({
    traceId: span.traceId as string,
    spanId: span.spanId as string,
    parentSpanId: (span.parentSpanId as string | undefined) ?? "",
    traceState: (span.traceState as string | undefined) ?? "",
    name: span.name as string,
    start: BigInt(span.startTimeUnixNano as string),
    end: BigInt(span.endTimeUnixNano as string),
    attributes: Object.fromEntries((span.attributes as { key: string; value: Record<string, unknown> }[]).map(({ key, value }) => {
      const v = value.stringValue ?? value.boolValue ?? Number(value.intValue);
      return [key, v as string | number | boolean];
    })),
    ...(span.status ? { status: span.status as { code: number; message: string } } : {}),
  }));
}
