import { DEFAULT_EXPORT_TIMEOUT_MS, exportTimeoutMs } from "../base/trace-switch.js";
import { readBounded } from "../base/safe-files.js";
import { describeSystemError } from "../base/errors.js";

// How the spans are exported, from the standard OpenTelemetry variables (docs/tracing.md): where (OTLP over HTTP, the
// file form), how (protobuf or JSON), with which headers and resource, and for how long at most. Each bad value is one
// line and a safe default, never a failed step.

export interface ExportConfig {
  /** The OTLP/HTTP traces URL; undefined: no HTTP export. */
  url?: URL;
  json: boolean;
  headers: Record<string, string>;
  /** OTEL_EXPORTER_OTLP_CERTIFICATE's PEM: the certificates an https collector's is checked against, in place of Node's. */
  ca?: string;
  /** The whole export's bound, in ms. */
  timeoutMs: number;
  /** BATON_TRACES_DIR: the file form's folder. */
  folder?: string;
  /** OTEL_RESOURCE_ATTRIBUTES, decoded (OTEL_SERVICE_NAME not yet applied). */
  resource: Record<string, string>;
  serviceName?: string;
}

const DEFAULT_ENDPOINT = "http://localhost:4318/v1/traces";
const CERTIFICATE_LIMIT = 1 << 20;
/** A header value larger than this is dropped: no collector needs it, and it would be sent with every export. */
export const MAX_HEADER_BYTES = 8192;

export function exportConfig(env: NodeJS.ProcessEnv, warn: (message: string) => void): ExportConfig {
  const config: ExportConfig = {
    json: false,
    headers: {},
    timeoutMs: timeout(env, warn),
    resource: resourceAttributes(env.OTEL_RESOURCE_ATTRIBUTES, warn),
  };
  if (env.OTEL_SERVICE_NAME) config.serviceName = env.OTEL_SERVICE_NAME;
  if (env.BATON_TRACES_DIR) config.folder = env.BATON_TRACES_DIR;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() ?? "";
  const wantsHttp = !!env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || !!env.OTEL_EXPORTER_OTLP_ENDPOINT || exporter.includes("otlp");
  if (!wantsHttp) return config;
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || "http/protobuf").trim().toLowerCase();
  if (protocol !== "http/protobuf" && protocol !== "http/json") {
    warn(`OTEL_EXPORTER_OTLP_PROTOCOL ${JSON.stringify(protocol)} is not supported (http/protobuf, http/json): no traces sent over HTTP`);
    return config;
  }
  config.json = protocol === "http/json";
  const endpoint = tracesEndpoint(env);
  let url: URL;
  try {
    url = new URL(endpoint.url);
  } catch {
    warn(`${endpoint.name} is not a URL: no traces sent over HTTP`);
    return config;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    warn(`${endpoint.name} is not an http or https URL: no traces sent over HTTP`);
    return config;
  }
  config.url = url;
  const certificateName = env.OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE ? "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE" : "OTEL_EXPORTER_OTLP_CERTIFICATE";
  const certificate = env.OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE || env.OTEL_EXPORTER_OTLP_CERTIFICATE;
  if (certificate && url.protocol === "https:") {
    try {
      // A Secret's file, mounted through Kubernetes' ..data links: followed. Bounded: a certificate file is a few KB.
      config.ca = readBounded(certificate, CERTIFICATE_LIMIT, { followSymlink: true }).toString("latin1");
    } catch (error) {
      warn(`${certificateName}: cannot read ${certificate}: ${describeSystemError(error)}: no traces sent over HTTP`);
      delete config.url;
      return config;
    }
  }
  config.headers = { ...headers(env.OTEL_EXPORTER_OTLP_HEADERS, "OTEL_EXPORTER_OTLP_HEADERS", warn), ...headers(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS, "OTEL_EXPORTER_OTLP_TRACES_HEADERS", warn) };
  return config;
}

/** The signal's own endpoint as it is; the general one with /v1/traces after its path; else the default. */
function tracesEndpoint(env: NodeJS.ProcessEnv): { url: string; name: string } {
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return { url: env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT.trim(), name: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" };
  if (env.OTEL_EXPORTER_OTLP_ENDPOINT) {
    const base = env.OTEL_EXPORTER_OTLP_ENDPOINT.trim();
    return { url: `${base.endsWith("/") ? base.slice(0, -1) : base}/v1/traces`, name: "OTEL_EXPORTER_OTLP_ENDPOINT" };
  }
  return { url: DEFAULT_ENDPOINT, name: "the default endpoint" };
}

/** The export's bound (src/base/trace-switch.ts), and one line when the variable says no number. */
function timeout(env: NodeJS.ProcessEnv, warn: (message: string) => void): number {
  const name = env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ? "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT" : "OTEL_EXPORTER_OTLP_TIMEOUT";
  const value = env[name]?.trim();
  if (value && !/^\d+$/.test(value)) warn(`${name} ${JSON.stringify(value.slice(0, 40))} is not a number of milliseconds: ${DEFAULT_EXPORT_TIMEOUT_MS} ms`);
  return exportTimeoutMs(env);
}

/** An HTTP header name (RFC 9110 token). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * `key=value,...` of OTEL_EXPORTER_OTLP_HEADERS: values percent-decoded. An entry that cannot be a header (a name that
 * is not a token, a control character in the value, a value over MAX_HEADER_BYTES: what Node's HTTP would refuse, or
 * send to no use) is dropped with one line naming
 * its position only: a header's value is a secret (an API key), and so may be what a mistyped name swallowed.
 */
export function headers(text: string | undefined, name: string, warn: (message: string) => void): Record<string, string> {
  const out: Record<string, string> = {};
  if (!text) return out;
  text.split(",").forEach((entry, index) => {
    if (entry.trim() === "") return;
    const eq = entry.indexOf("=");
    const key = eq < 0 ? "" : entry.slice(0, eq).trim();
    let value: string | undefined;
    try {
      value = eq < 0 ? undefined : decodeURIComponent(entry.slice(eq + 1).trim());
    } catch {
      value = undefined;
    }
    if (!TOKEN.test(key) || value === undefined || /[^\t\x20-\x7e\x80-\xff]/.test(value) || Buffer.byteLength(value) > MAX_HEADER_BYTES) {
      warn(`${name}: entry ${index + 1} is not a header that can be sent (a token, =, a value of at most ${MAX_HEADER_BYTES} bytes without control characters): left out`);
      return;
    }
    out[key.toLowerCase()] = value;
  });
  return out;
}

/**
 * OTEL_RESOURCE_ATTRIBUTES: `key=value,...`, percent-decoded. The specification: on any error the whole value is
 * discarded, and the error reported. A raw control character is an error (W3C Baggage's octets exclude them).
 */
export function resourceAttributes(text: string | undefined, warn: (message: string) => void): Record<string, string> {
  const out: Record<string, string> = {};
  if (!text) return out;
  const bad = () => {
    warn("OTEL_RESOURCE_ATTRIBUTES is not a list of key=value with percent-encoded values: ignored");
    return {};
  };
  if (/[\x00-\x1f\x7f]/.test(text)) return bad();
  for (const entry of text.split(",")) {
    if (entry.trim() === "") continue;
    const eq = entry.indexOf("=");
    if (eq <= 0) return bad();
    const key = entry.slice(0, eq).trim();
    if (key === "") return bad();
    try {
      out[decodeURIComponent(key)] = decodeURIComponent(entry.slice(eq + 1).trim());
    } catch {
      return bad();
    }
  }
  return out;
}
