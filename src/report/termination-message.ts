import { join } from "node:path";
import { describeSystemError } from "../base/errors.js";
import { READ_LIMIT, readOptionalText } from "../base/safe-files.js";
import { COMPRESSED_PREFIX, compress, decompress } from "./compress.js";

// The Kubernetes termination message in Tekton's format: a JSON array of {key, value, type}. The kubelet keeps at
// most 4096 bytes of it, so a message that does not fit is refused here, where the step can still fail cleanly.

export const TERMINATION_MESSAGE_LIMIT = 4096;
/**
 * Tekton's result types: 1 a task result, 3 an entry of Tekton's own (StartedAt, ExitCode, Reason), 4 a step result,
 * 5 the step's artifacts, 6 the task's artifacts (pkg/result/result.go).
 */
export const TASK_RESULT = 1;
export const INTERNAL_RESULT = 3;
export const STEP_RESULT = 4;
export const STEP_ARTIFACTS = 5;
export const TASK_ARTIFACTS = 6;
/** Entries that -result_from sidecar-logs keeps out of the message: the results sidecar reports them instead. */
const RESULT_TYPES: ReadonlySet<number> = new Set([TASK_RESULT, STEP_RESULT, STEP_ARTIFACTS, TASK_ARTIFACTS]);

export interface RunResult {
  key: string;
  value: string;
  type: number;
}

export type TerminationReason = "TimeoutExceeded" | "Cancelled" | "Skipped";

export interface StepRecord {
  startedAt: string;
  /** Set only when the step handed on the baton although its command failed (--on-error continue). */
  continuedExitCode?: number;
  reason?: TerminationReason;
  /** [name, content] of each result file that exists. */
  results: [string, string][];
  /** [name, content] of each step result file that exists (type 4). */
  stepResults?: [string, string][];
  /** [path, content] of the step's and the task's provenance.json, where they exist (types 5 and 6). */
  stepArtifacts?: [string, string];
  taskArtifacts?: [string, string];
}

/** How the message is written: -result_from sidecar-logs, -compress_termination_message. */
export interface MessageFormat {
  withoutResults?: boolean;
  compressed?: boolean;
}

export function buildEntries(record: StepRecord): RunResult[] {
  const entries: RunResult[] = [{ key: "StartedAt", value: record.startedAt, type: INTERNAL_RESULT }];
  if (record.continuedExitCode !== undefined) {
    entries.push({ key: "ExitCode", value: String(record.continuedExitCode), type: INTERNAL_RESULT });
  }
  if (record.reason) entries.push({ key: "Reason", value: record.reason, type: INTERNAL_RESULT });
  for (const [key, value] of record.results) entries.push({ key, value, type: TASK_RESULT });
  for (const [key, value] of record.stepResults ?? []) entries.push({ key, value, type: STEP_RESULT });
  if (record.stepArtifacts) entries.push({ key: record.stepArtifacts[0], value: record.stepArtifacts[1], type: STEP_ARTIFACTS });
  if (record.taskArtifacts) entries.push({ key: record.taskArtifacts[0], value: record.taskArtifacts[1], type: TASK_ARTIFACTS });
  return entries;
}

/** Existing entries first, then the new ones; a key given again keeps only its last value. */
export function mergeEntries(existing: readonly RunResult[], added: readonly RunResult[]): RunResult[] {
  const addedKeys = new Set(added.map((entry) => entry.key));
  const kept = existing.filter((entry) => !addedKeys.has(entry.key));
  const last = new Map(added.map((entry) => [entry.key, entry]));
  return [...kept, ...[...last.values()]];
}

/** The entries of an existing message; undefined when the text is not a Tekton message (it is then replaced). */
export function parseMessage(text: string): RunResult[] | undefined {
  if (text.trim() === "") return [];
  try {
    const parsed: unknown = JSON.parse(text.startsWith(COMPRESSED_PREFIX) ? decompress(text) : text);
    if (!Array.isArray(parsed)) return undefined;
    const valid = parsed.every(
      (e) => e && typeof e === "object" && typeof e.key === "string" && typeof e.value === "string",
    );
    return valid ? parsed.map((e) => ({ key: e.key, value: e.value, type: typeof e.type === "number" ? e.type : TASK_RESULT })) : undefined;
  } catch {
    return undefined;
  }
}

/** The JSON, or with `compressed` its tknz: form where that is shorter (what Tekton writes; the controller reads both). */
export function serialize(entries: readonly RunResult[], format: MessageFormat = {}): string {
  const json = JSON.stringify(entries);
  if (!format.compressed) return json;
  const packed = compress(json);
  return packed.length < Buffer.byteLength(json) ? packed : json;
}

/** undefined when the message fits; otherwise the user-facing reason, naming the largest results first. */
export function sizeProblem(message: string, entries: readonly RunResult[]): string | undefined {
  const size = Buffer.byteLength(message);
  if (size <= TERMINATION_MESSAGE_LIMIT) return undefined;
  const largest = entries
    .filter((entry) => RESULT_TYPES.has(entry.type))
    .map((entry) => ({ key: entry.key, bytes: Buffer.byteLength(entry.value) }))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, 3)
    .map((r) => `${r.key} (${r.bytes} bytes)`);
  const names = largest.length ? `; largest results: ${largest.join(", ")}` : "";
  return `termination message is ${size} bytes, over the ${TERMINATION_MESSAGE_LIMIT}-byte limit of Kubernetes${names}`;
}

/** Reads each named result from `dir`; a result file that does not exist is left out, as Tekton does. */
export function readResults(dir: string, names: readonly string[], what = "result"): [string, string][] {
  const results: [string, string][] = [];
  for (const name of names) {
    const content = readOptionalFile(join(dir, name), `${what} ${name}`);
    if (content !== undefined) results.push([name, content]);
  }
  return results;
}

/**
 * A result file's content (a regular file, not a symlink, at most READ_LIMIT.result bytes), or undefined when it
 * does not exist; any other failure is an error naming `what`.
 */
export function readOptionalFile(path: string, what: string): string | undefined {
  try {
    return readOptionalText(path, READ_LIMIT.result);
  } catch (error) {
    throw new Error(`cannot read ${what}: ${describeSystemError(error)}`);
  }
}

/** The termination message file's content ("" for a file that does not exist yet), at most 4096 bytes. */
export function readExisting(path: string): string {
  return readOptionalText(path, READ_LIMIT.terminationMessage) ?? "";
}

export interface ComposedMessage {
  text: string;
  /** Set when the results made the message too large: `text` then holds the message without them. */
  tooLarge?: string;
  /** Set when the existing content was not a Tekton message and was replaced. */
  replacedExisting?: boolean;
}

/** The message to write: `record` merged into the file's existing content, checked against the size limit. */
export function composeMessage(existingText: string, record: StepRecord, format: MessageFormat = {}): ComposedMessage {
  const existing = parseMessage(existingText);
  const replacedExisting = existing === undefined ? { replacedExisting: true } : {};
  const own = buildEntries(record);
  const merged = mergeEntries(existing ?? [], format.withoutResults ? own.filter((e) => !RESULT_TYPES.has(e.type)) : own);
  const text = serialize(merged, format);
  const tooLarge = sizeProblem(text, merged);
  if (!tooLarge) return { text, ...replacedExisting };
  // Without this step's results; and when what was there already is too large too, this step's own entries alone:
  // the kubelet must always get a message that fits.
  const internal = own.filter((e) => !RESULT_TYPES.has(e.type));
  let without = serialize(mergeEntries(existing ?? [], internal), format);
  if (Buffer.byteLength(without) > TERMINATION_MESSAGE_LIMIT) without = serialize(internal, format);
  return { text: without, tooLarge, ...replacedExisting };
}
