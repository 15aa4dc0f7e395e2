// Whether this baton traces (docs/tracing.md "Turning it on"): a few environment lookups, the whole cost of tracing on
// the start path when it is off. Nothing else of tracing is in the bundle's start path: the spans, the encoders and the
// export are the trace chunk (src/trace/chunk.ts), loaded only when this says yes.

/**
 * On when OTEL_SDK_DISABLED is not true, OTEL_TRACES_EXPORTER is not none, and an OTLP endpoint, `otlp` or
 * BATON_TRACES_DIR is given; BATON_TRACES=off keeps it off whatever the OTEL variables say, which a pod may set for its
 * commands' own SDKs (a gRPC endpoint, which baton does not speak, would cost every step a line).
 */
export function tracingWanted(env: NodeJS.ProcessEnv): boolean {
  if (env.BATON_TRACES?.trim().toLowerCase() === "off") return false;
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return false;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (exporter === "none") return false;
  return !!env.BATON_TRACES_DIR || !!env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || !!env.OTEL_EXPORTER_OTLP_ENDPOINT || (exporter?.includes("otlp") ?? false);
}

/** baton's default bound on the export at exit, in ms (the specification's is 10000: a step's pod would wait for it). */
export const DEFAULT_EXPORT_TIMEOUT_MS = 2000;
/** The most an export may hold baton at exit, whatever the timeout variables say. */
export const MAX_EXPORT_TIMEOUT_MS = 10_000;

/** OTEL_EXPORTER_OTLP_TRACES_TIMEOUT, else OTEL_EXPORTER_OTLP_TIMEOUT (ms), capped; the default when neither is a number. */
export function exportTimeoutMs(env: NodeJS.ProcessEnv): number {
  const value = (env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT || env.OTEL_EXPORTER_OTLP_TIMEOUT)?.trim();
  if (value === undefined || !/^\d+$/.test(value)) return DEFAULT_EXPORT_TIMEOUT_MS;
  return Math.min(Number(value), MAX_EXPORT_TIMEOUT_MS);
}
