import { isCelError, run } from "@bufbuild/cel";

// The CEL evaluator of a step's `when`, built into its own file (dist/baton-cel.cjs; lib/baton-cel.cjs in the
// standalone build) so that steps without CEL never read or parse it. @bufbuild/cel was chosen by measurement
// (docs/tekton.md, "CEL"): Tekton uses cel-go's standard environment with no variables and no extensions, which is
// what `run` with no bindings and no extra functions gives.

/** The bool value of `expression`; throws an Error with CEL's message when it does not parse, evaluate or give a bool. */
export function evaluateCel(expression: string): boolean {
  let value: unknown;
  try {
    value = run(expression, {});
  } catch (error) {
    throw new Error(`CEL expression ${JSON.stringify(expression)} does not compile: ${firstLine(error)}`);
  }
  if (isCelError(value)) throw new Error(`CEL expression ${JSON.stringify(expression)} failed: ${firstLine(value)}`);
  if (typeof value !== "boolean") {
    throw new Error(`CEL expression ${JSON.stringify(expression)} gives ${describe(value)}, not a bool`);
  }
  return value;
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n")[0]!;
}

function describe(value: unknown): string {
  if (typeof value === "string") return `the string ${JSON.stringify(value)}`;
  if (typeof value === "bigint" || typeof value === "number") return `the number ${String(value)}`;
  return value === null ? "null" : `a ${typeof value}`;
}
