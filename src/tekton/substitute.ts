import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describeSystemError } from "../base/errors.js";
import { READ_LIMIT, readTextBounded } from "../base/safe-files.js";
import { goJson } from "./credentials.js";

// Tekton's runtime substitution, done by its entrypoint just before the command starts, of what the controller could
// not know when it built the pod: $(steps.<step>.results.<name>) (StepActions bound to an earlier step's results) and
// $(steps.<step>.inputs|outputs.<artifact>), read from <root>/steps/step-<step>/{results/<name>,artifacts/provenance.json}
// (pkg/entrypoint/entrypointer.go, pkg/internal/resultref, pkg/internal/artifactref in tektoncd/pipeline).
// Where Tekton only logs an unusable reference and runs the command with the text left in (or panics, for an index
// out of range), baton fails the step with one line: a command run on a half-substituted argument is never wanted.
// Loaded only when a command, argument, environment variable or `when` holds "$(steps.".

/** The same pattern as Tekton's: non-greedy, so "$(steps.a.results.b)-$(steps.a.results.c)" is two references. */
const STEP_RESULT = /\$\(steps\..*?\.results\..*?\)/g;
const STEP_ARTIFACT = /\$\(steps\.([^.]+)\.(?:inputs|outputs)\.([^.)]+)\)/g;

export class SubstitutionError extends Error {}

/** A result file's value as Tekton reads it (ParamValue.UnmarshalJSON): an array, an object, or a string. */
export type ResultValue = { type: "string"; value: string } | { type: "array"; value: string[] } | { type: "object"; value: Record<string, string> };

export function decodeResult(content: string): ResultValue {
  if (content.startsWith("[")) {
    const array = tryJson(content);
    if (Array.isArray(array) && array.every((e) => typeof e === "string" || e === null)) {
      return { type: "array", value: array.map((e: string | null) => e ?? "") };
    }
  }
  if (content.startsWith("{")) {
    const object = tryJson(content);
    if (object && typeof object === "object" && !Array.isArray(object) && Object.values(object).every((e) => typeof e === "string" || e === null)) {
      return { type: "object", value: Object.fromEntries(Object.entries(object).map(([k, v]) => [k, (v as string | null) ?? ""])) };
    }
  }
  // A JSON string is decoded ("\"x\"" gives x); anything else is taken as it is, newline and all.
  const decoded = content === "" ? "" : tryJson(content);
  if (typeof decoded === "string") return { type: "string", value: decoded };
  return { type: "string", value: decoded === null ? "" : content };
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

interface Reference {
  step: string;
  result: string;
  kind: "string" | "index" | "all" | "key";
  index?: number;
  key?: string;
}

/** Tekton's ParseStepExpression on the text between "$(" and ")". */
export function parseReference(text: string): Reference {
  const inner = text.slice(2, -1);
  const parts = inner.split(".");
  if (parts.length >= 4 && parts[0] === "steps" && parts[2] === "results") {
    if (parts.length === 4) {
      const index = /\[([0-9])*\*?\]/.exec(parts[3]!);
      const result = parts[3]!.replace(/\[([0-9])*\*?\]/g, "");
      const raw = index ? index[0].slice(1, -1) : "";
      if (raw === "*") return { step: parts[1]!, result, kind: "all" };
      if (raw !== "") return { step: parts[1]!, result, kind: "index", index: Number.parseInt(raw, 10) };
      return { step: parts[1]!, result, kind: "string" };
    }
    if (parts.length === 5) return { step: parts[1]!, result: parts[3]!, kind: "key", key: parts[4]! };
  }
  throw new SubstitutionError(
    `${text}: must be $(steps.<stepName>.results.<resultName>) or $(steps.<stepName>.results.<objectResultName>.<key>)`,
  );
}

/** Reads and resolves references against <stepsDir>/step-<name>/results/<result>, each file once. */
export class StepResults {
  private readonly cache = new Map<string, ResultValue>();
  constructor(private readonly stepsDir: string, private readonly output = new SubstitutionOutput()) {}

  private load(step: string, result: string, text: string): ResultValue {
    const path = join(this.stepsDir, `step-${step}`, "results", result);
    let value = this.cache.get(path);
    if (value === undefined) {
      try {
        value = decodeResult(readTextBounded(path, READ_LIMIT.result));
      } catch (error) {
        throw new SubstitutionError(`${text}: cannot read ${path}: ${describeSystemError(error)}`);
      }
      this.cache.set(path, value);
    }
    return value;
  }

  /** The replacement: a string, or (for [*] of an array) the elements. */
  resolve(text: string): string | string[] {
    const ref = parseReference(text);
    const value = this.load(ref.step, ref.result, text);
    switch (ref.kind) {
      case "string":
        return value.type === "string" ? value.value : "";
      case "key":
        return value.type === "object" ? (Object.hasOwn(value.value, ref.key!) ? value.value[ref.key!]! : "") : "";
      case "index": {
        const array = value.type === "array" ? value.value : [];
        if (ref.index! >= array.length) {
          throw new SubstitutionError(`${text}: index ${ref.index} is out of range: result ${ref.result} of step ${ref.step} has ${array.length} element(s)`);
        }
        return array[ref.index!]!;
      }
      case "all":
        return value.type === "array" ? value.value : "";
    }
  }

  /** Every reference in `text` replaced by its string (an array's [*] gives ""), as Tekton does for env and `when`. */
  inString(text: string): string {
    let out = text;
    for (const match of text.match(STEP_RESULT) ?? []) {
      const value = this.resolve(match);
      out = this.output.replaceAll(out, match, typeof value === "string" ? value : "");
    }
    return out;
  }

  /** One argument (or `when` value): "$(...[*])" alone expands to the array's elements; inside other text it is an error. */
  inListItem(item: string): string[] {
    let out = [item];
    for (const match of item.match(STEP_RESULT) ?? []) {
      const value = this.resolve(match);
      if (Array.isArray(value) && value.length > 0) {
        if (item !== match) {
          throw new SubstitutionError(`${item}: an array result must be used alone, as "$(steps.<step-name>.results.<result-name>[*])"`);
        }
        out = value;
      } else {
        out[0] = this.output.replaceAll(out[0]!, match, Array.isArray(value) ? "" : value);
      }
    }
    return out;
  }
}

/**
 * How much text one step's substitutions may produce, all together: 16 Mi characters, far beyond what exec(2) takes
 * (128 KiB per argument; in all, a quarter of the stack's limit: 2 MiB by default) or a script needs. A result file is bounded in size, but references multiply
 * it: a 1 MiB result named 2000 times in an argument would build gigabytes before exec refused them.
 */
export const SUBSTITUTION_LIMIT = 16 * 2 ** 20;

/** The text substitutions produce, counted against SUBSTITUTION_LIMIT. */
export class SubstitutionOutput {
  private used = 0;

  /**
   * Go's strings.ReplaceAll: `value` goes in byte for byte. String.prototype.replaceAll with a string would read
   * `$&`, `$'`, `` $` `` and `$$` in a result's value as patterns. The size is counted before the text is built.
   */
  replaceAll(text: string, reference: string, value: string): string {
    const parts = text.split(reference);
    this.used += text.length + (parts.length - 1) * (value.length - reference.length);
    if (this.used > SUBSTITUTION_LIMIT) {
      throw new SubstitutionError(`${reference}: the substituted text would pass ${SUBSTITUTION_LIMIT / 2 ** 20} Mi characters, baton's limit for a step's substitutions`);
    }
    return parts.join(value);
  }
}

export function hasStepReference(text: string): boolean {
  return text.includes("$(steps.");
}

/** The values of an artifact as Go's json.Marshal writes []ArtifactValue: digest (keys sorted) then uri. */
export function artifactValuesJson(values: unknown): string {
  if (!Array.isArray(values)) return "null";
  const items = values.map((v: { digest?: Record<string, string>; uri?: string }) => {
    const fields: string[] = [];
    const digest = v?.digest;
    if (digest && typeof digest === "object" && Object.keys(digest).length > 0) {
      const keys = Object.keys(digest).sort();
      fields.push(`"digest":{${keys.map((k) => `${goJson(k)}:${goJson(digestValue(k, digest[k]))}`).join(",")}}`);
    }
    if (typeof v?.uri === "string" && v.uri !== "") fields.push(`"uri":${goJson(v.uri)}`);
    return `{${fields.join(",")}}`;
  });
  return `[${items.join(",")}]`;
}

/** A digest's value: a string, as Go's map[string]string takes it (null is ""); anything else is refused, as Go refuses it. */
function digestValue(algorithm: string, value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "";
  throw new SubstitutionError(`the digest ${JSON.stringify(algorithm.slice(0, 80))} is not a string`);
}

/** Resolves $(steps.<step>.inputs|outputs.<name>) against <stepsDir>/step-<step>/artifacts/provenance.json. */
export class StepArtifacts {
  constructor(private readonly stepsDir: string, private readonly output = new SubstitutionOutput()) {}

  inString(text: string): string {
    let out = text;
    for (const match of text.matchAll(STEP_ARTIFACT)) {
      out = this.output.replaceAll(out, match[0], this.resolve(match[0], match[1]!, match[0].includes(".inputs.") ? "inputs" : "outputs", match[2]!));
    }
    return out;
  }

  private resolve(text: string, step: string, kind: "inputs" | "outputs", name: string): string {
    const path = join(this.stepsDir, `step-${step}`, "artifacts", "provenance.json");
    let parsed: unknown;
    try {
      parsed = JSON.parse(readTextBounded(path, READ_LIMIT.result));
    } catch (error) {
      const why = error instanceof SyntaxError ? `not JSON: ${error.message}` : describeSystemError(error);
      throw new SubstitutionError(`${text}: cannot read ${path}: ${why}`);
    }
    const list = (parsed as Record<string, unknown> | null)?.[kind];
    const artifact = Array.isArray(list) ? list.find((a: { name?: unknown }) => a?.name === name) : undefined;
    if (!artifact) throw new SubstitutionError(`${text}: no ${kind} artifact named ${name} in ${path}`);
    try {
      return artifactValuesJson((artifact as { values?: unknown }).values);
    } catch (error) {
      if (error instanceof SubstitutionError) throw new SubstitutionError(`${text}: ${path}: ${error.message}`);
      throw error;
    }
  }
}

export interface Substituted {
  command: string[];
  /** The environment for the command; undefined when nothing in it changed. */
  env: NodeJS.ProcessEnv | undefined;
}

/**
 * Tekton's order: step results in env, then command and arguments (`when` is done by its own module); then artifacts
 * in the command (or, for a command that is one script under <root>/scripts, in the script's text, run from a copy)
 * and in env.
 */
export function substituteCommand(command: readonly string[], env: NodeJS.ProcessEnv, tektonRoot: string): Substituted {
  const stepsDir = join(tektonRoot, "steps");
  const output = new SubstitutionOutput();
  const results = new StepResults(stepsDir, output);
  const artifacts = new StepArtifacts(stepsDir, output);
  let newEnv: NodeJS.ProcessEnv | undefined;
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || !hasStepReference(value)) continue;
    const replaced = artifacts.inString(results.inString(value));
    if (replaced.includes("\0")) throw holdsNul(value, `the environment variable ${name}`);
    if (replaced !== value) (newEnv ??= { ...env })[name] = replaced;
  }
  let newCommand = command.flatMap((arg, index) => {
    if (!hasStepReference(arg)) return [arg];
    const replaced = results.inListItem(arg);
    if (replaced.some((item) => item.includes("\0"))) throw holdsNul(arg, index === 0 ? "the command" : `the command's argument ${index}`);
    return replaced;
  });
  const scriptsDir = join(tektonRoot, "scripts");
  if (newCommand.length === 1 && dirname(newCommand[0]!) === scriptsDir) {
    let script: string;
    try {
      script = readTextBounded(newCommand[0]!, READ_LIMIT.script);
    } catch (error) {
      throw new SubstitutionError(`cannot read the script ${newCommand[0]}: ${describeSystemError(error)}`);
    }
    if (hasStepReference(script)) {
      const replaced = artifacts.inString(script);
      if (replaced !== script) newCommand = [writeScriptCopy(replaced)];
    }
  } else {
    newCommand = newCommand.map((arg) => (hasStepReference(arg) ? artifacts.inString(arg) : arg));
  }
  return { command: newCommand, env: newEnv };
}

/**
 * exec(2) takes C strings: a NUL byte from a result cannot reach the command. Said as the value that holds it, not as
 * Node's refusal to start the command (which named the command and Node's error code).
 */
function holdsNul(text: string, where: string): SubstitutionError {
  const references = [...new Set(text.match(STEP_RESULT) ?? [])].join(", ");
  return new SubstitutionError(`${references}: the value substituted into ${where} holds a NUL byte, which no argument or environment variable can hold`);
}

/** The substituted script, mode 0755, in a new folder under $TMPDIR (Tekton: os.CreateTemp("", "script-*")). */
function writeScriptCopy(text: string): string {
  try {
    const file = join(mkdtempSync(join(tmpdir(), "baton-script-")), "script");
    writeFileSync(file, text, { mode: 0o755 });
    return file;
  } catch (error) {
    throw new SubstitutionError(`cannot write the substituted script: ${describeSystemError(error)}`);
  }
}
