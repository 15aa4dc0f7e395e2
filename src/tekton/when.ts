import { usageError } from "../base/errors.js";
import { hasStepReference, StepResults, SubstitutionError } from "./substitute.js";

// A Tekton step's `when` (--when_expressions, a JSON list): every expression must hold for the command to run.
// `in`: the input equals one of the values (exactly); any other operator: it equals none. `cel`: a CEL expression of
// Google's standard definitions, no variables (Tekton substitutes its own before), that must give a bool; Tekton
// evaluates the CEL entries first, in order, and a false one skips the step at once (pkg/entrypoint/entrypointer.go,
// pkg/apis/pipeline/v1/when_types.go). The CEL library is a separate file, loaded only when a `cel` entry exists.

export interface WhenExpression {
  input: string;
  operator: string;
  values: string[];
  cel: string;
}

/** A `when` that cannot be evaluated: the step fails (POST.err), as in Tekton. */
export class WhenError extends Error {}

/** The JSON the controller writes (json.Marshal of StepWhenExpressions); a wrong shape is a usage error. */
export function parseWhen(json: string): WhenExpression[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw usageError(`--when is not valid JSON: ${json.length > 80 ? `${json.slice(0, 80)}...` : json}`);
  }
  if (parsed === null) return [];
  if (!Array.isArray(parsed)) throw usageError("--when must be a JSON list of {input, operator, values, cel}");
  return parsed.map((entry: unknown, i) => {
    if (entry === null) return { input: "", operator: "", values: [], cel: "" };
    if (typeof entry !== "object" || Array.isArray(entry)) throw usageError(`--when: entry ${i} is not an object`);
    const e = entry as Record<string, unknown>;
    const text = (key: string): string => {
      const value = e[key];
      if (value === undefined || value === null) return "";
      if (typeof value !== "string") throw usageError(`--when: entry ${i}: ${key} must be a string`);
      return value;
    };
    const values = e.values ?? [];
    if (!Array.isArray(values) || !values.every((v) => typeof v === "string")) {
      throw usageError(`--when: entry ${i}: values must be a list of strings`);
    }
    return { input: text("input"), operator: text("operator"), values: values as string[], cel: text("cel") };
  });
}

/** Step-result references in values (a lone [*] expands), input and cel, as Tekton's replaceWhen. */
function substitute(expressions: readonly WhenExpression[], stepsDir: string): WhenExpression[] {
  const all = expressions.flatMap((e) => [e.input, e.cel, ...e.values]);
  if (!all.some(hasStepReference)) return [...expressions];
  const results = new StepResults(stepsDir);
  try {
    return expressions.map((e) => ({
      operator: e.operator,
      values: e.values.flatMap((v) => results.inListItem(v)),
      input: results.inString(e.input),
      cel: results.inString(e.cel),
    }));
  } catch (error) {
    if (error instanceof SubstitutionError) throw new WhenError(`when: ${error.message}`);
    throw error;
  }
}

/** True when every CEL expression gives true, in order, stopping at the first false (src/tekton/cel-worker.ts). */
export type AllCelTrue = (expressions: readonly string[]) => Promise<boolean>;

/**
 * True when the step runs; false when it is skipped. Throws WhenError when a reference cannot be resolved; what
 * `allCelTrue` throws (an expression that cannot be evaluated) goes through.
 */
export async function evaluateWhen(expressions: readonly WhenExpression[], stepsDir: string, allCelTrue: AllCelTrue): Promise<boolean> {
  const substituted = substitute(expressions, stepsDir);
  // Each expression once (Tekton's entrypoint caches each one's value).
  const cels = [...new Set(substituted.map((e) => e.cel).filter((cel) => cel !== ""))];
  if (cels.length > 0 && !(await allCelTrue(cels))) return false;
  return substituted.every((e) => (e.operator === "in") === e.values.includes(e.input));
}
