import { loadChunk } from "./chunks.js";

// A bug of baton's is told in one line, `baton: internal error: MESSAGE`, and the step fails instead of hanging.
// BATON_DEBUG=1 adds the error's stack, its frames in src/ terms (src/process/source-stack.ts, a chunk of its own:
// only then is it loaded, and the source maps read).

/** What the stack chunk provides: its entry, src/process/source-stack.ts, must satisfy this. */
export interface StackChunk {
  sourceStack(stack: string): string;
}

/** The text after `baton: ` for an error that is not a BatonError. */
export async function describeInternalError(error: unknown): Promise<string> {
  const line = `internal error: ${error instanceof Error ? error.message : String(error)}`;
  const debug = process.env.BATON_DEBUG;
  if (debug === undefined || debug === "" || debug === "0" || debug === "false") return line;
  if (!(error instanceof Error) || typeof error.stack !== "string") return line;
  try {
    const { sourceStack } = await loadChunk<StackChunk>("stack", () => import("./source-stack.js"));
    return `${line}\n${sourceStack(error.stack)}`;
  } catch {
    return `${line}\n${error.stack.split("\n").filter((text) => /^\s+at /.test(text)).join("\n")}`;
  }
}
