import { usageError } from "../base/errors.js";

// A small table-driven parser instead of commander: every step of every pod pays its start-up (~5 ms, see the Dependencies table in README.md).
// Parsing stops at "--" or at the first argument that is not an option, like tini and getopt's "+" mode,
// so the command's own flags are never taken for baton's.

export type OptionKind = "flag" | "value" | "list";
export type OptionTable = Readonly<Record<string, OptionKind>>;

export interface ParsedArgs {
  /** Option name (without "--") -> its value: true for a flag, the last string for a value, every string for a list. */
  options: Record<string, string | string[] | true>;
  /** Everything after the options: the command and its arguments. */
  rest: string[];
}

export function parseArgs(argv: readonly string[], table: OptionTable): ParsedArgs {
  // No prototype, and only the table's own names: an option named after an Object.prototype property (--constructor,
  // --toString, --__proto__) is unknown like any other, never a function found on the prototype.
  const options: ParsedArgs["options"] = Object.create(null) as ParsedArgs["options"];
  let i = 0;
  for (; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      i++;
      break;
    }
    if (!arg.startsWith("-") || arg === "-") break;
    if (!arg.startsWith("--")) throw usageError(`unknown option ${arg} (see baton --help)`);
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    const kind = Object.hasOwn(table, name) ? table[name] : undefined;
    if (kind === undefined) throw usageError(`unknown option --${name} (see baton --help)`);
    if (kind === "flag") {
      if (eq !== -1) throw usageError(`option --${name} takes no value`);
      options[name] = true;
      continue;
    }
    let value: string;
    if (eq !== -1) value = arg.slice(eq + 1);
    else if (i + 1 < argv.length) value = argv[++i]!;
    else throw usageError(`option --${name} needs a value`);
    if (kind === "list") {
      const list = options[name];
      options[name] = Array.isArray(list) ? [...list, value] : [value];
    } else {
      options[name] = value;
    }
  }
  return { options, rest: argv.slice(i) };
}

export function stringOption(parsed: ParsedArgs, name: string): string | undefined {
  const value = parsed.options[name];
  return typeof value === "string" ? value : undefined;
}

export function listOption(parsed: ParsedArgs, name: string): string[] {
  const value = parsed.options[name];
  return Array.isArray(value) ? value : [];
}

/**
 * The value of `--name` in an argument vector that failed to parse, if one can be found before "--": a misconfigured
 * step or sidecar still writes its .err file (POST.err, READY.err), so the containers after it end instead of waiting.
 */
export function findOptionValue(argv: readonly string[], name: string): string | undefined {
  let found: string | undefined;
  for (let i = 0; i < argv.length && argv[i] !== "--"; i++) {
    const arg = argv[i]!;
    if (arg === `--${name}`) found = argv[i + 1];
    else if (arg.startsWith(`--${name}=`)) found = arg.slice(name.length + 3);
  }
  return found || undefined;
}
