import { celEnv, isCelError, parse, plan } from "@bufbuild/cel";

// The CEL evaluator of a step's `when`, built into a chunk of its own (baton-cel.cjs in the bundle's payload,
// src/process/chunks.ts) so that steps without CEL never read or parse it; it runs in a worker thread
// (src/tekton/cel-worker.ts). @bufbuild/cel was chosen by measurement
// (docs/tekton.md, "CEL"): Tekton uses cel-go's standard environment with no variables and no extensions, which is
// what `plan` with the default environment and an empty activation gives.

/** The bool value of `expression`; throws an Error with CEL's message when it does not parse, evaluate or give a bool. */
export function evaluateCel(expression: string): boolean {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(expression);
  } catch (error) {
    throw new Error(`CEL expression ${quote(expression)} does not compile: ${firstLine(error)}`);
  }
  let value: unknown;
  try {
    value = plan(celEnv(), parsed)({});
  } catch (error) {
    value = error; // reported as a failure below
  }
  if (isCelError(value) || value instanceof Error) throw new Error(`CEL expression ${quote(expression)} failed: ${firstLine(value)}`);
  if (typeof value !== "boolean") {
    throw new Error(`CEL expression ${quote(expression)} gives ${describe(value)}, not a bool`);
  }
  return value;
}

/** The expression as the error names it: quoted, and cut short, so that one line stays readable whatever its size. */
function quote(expression: string): string {
  return JSON.stringify(expression.length > 200 ? `${expression.slice(0, 200)}...` : expression);
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n")[0]!;
}

function describe(value: unknown): string {
  if (typeof value === "string") return `the string ${JSON.stringify(value)}`;
  if (typeof value === "bigint" || typeof value === "number") return `the number ${String(value)}`;
  return value === null ? "null" : `a ${typeof value}`;
}
