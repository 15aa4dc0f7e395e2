// Types of eager-functions.mjs, for the tests that read its list.
import type ts from "typescript";

/** Each file of src/ (its path from the repository's root) -> the names of its eager functions. */
export const EAGER_FUNCTIONS: Map<string, string[]>;
/** Each function of `text` named in `names`; throws when a name is missing or found more than once. */
export function eagerFunctionsIn(file: string, text: string, names: readonly string[]): { source: ts.SourceFile; functions: (ts.FunctionDeclaration | ts.FunctionExpression)[] };
/** `text` with its listed functions wrapped in parentheses, every line where it was. */
export function makeEager(file: string, text: string, names: readonly string[]): string;
