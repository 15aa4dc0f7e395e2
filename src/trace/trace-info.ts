// What the bundle's side of tracing (load.ts) and the trace chunk (chunk.ts, spans.ts) say to each other, apart from
// both so that neither imports the other.

/** What a mode knows that the spans should say (docs/tracing.md "Spans"). */
export interface TraceInfo {
  mode: "step" | "sidecar" | "emissary";
  engine: "tekton" | "argo" | "plain";
  name?: string | undefined;
  postFile?: string | undefined;
  stepMetadataDir?: string | undefined;
  tektonRoot?: string | undefined;
  containerName?: string | undefined;
}

/** What the trace chunk provides: its entry, src/trace/chunk.ts, must satisfy this. */
export interface TraceChunk {
  /** Reads the context (TRACEPARENT, or the pod's), once. */
  begin(info: TraceInfo, env: NodeJS.ProcessEnv): void;
  /** The TRACEPARENT of the command about to start (undefined: leave the environment as it is). */
  commandTraceparent(): string | undefined;
  /** Builds the spans from the marks and sends them; resolves when done or failed, never rejects. */
  finish(exitCode: number, warn: (message: string) => void, deadline: number): Promise<void>;
}
