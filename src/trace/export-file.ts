import { writeFileAtomic } from "../base/atomic-write.js";
import { describeSystemError } from "../base/errors.js";

// The file form (BATON_TRACES_DIR): one line of OTLP JSON in a file of this baton's own, written to a temporary name
// and renamed, so that a reader (the collector's otlpjsonfile receiver, `make demo`) never sees half of it.

export function writeTraceFile(folder: string, traceId: string, spanId: string, json: string): string | undefined {
  const file = `${folder}/baton-${traceId}-${spanId}.jsonl`;
  try {
    writeFileAtomic(file, `${json}\n`, 0o644);
    return undefined;
  } catch (error) {
    return `traces not written to ${file}: ${describeSystemError(error)}`;
  }
}
