import { usageError } from "../base/errors.js";

// A small table-driven parser instead of commander: every step of every pod would pay its start-up (measured in
// README.md's Dependencies table, `node scripts/bench/deps.mjs`).
// Parsing stops at "--" or at the first argument that is not an option, like tini and getopt's "+" mode,
// so the command's own flags are never taken for baton's.

export type OptionKind = "flag" | "value" | "list";

/**
 * One option, declared once: the parser reads this table, `--help` prints its help lines (src/cli/help.ts) and
 * docs/reference.md's option tables are its reference lines (scripts/reference-flags.ts writes them,
 * test/unit/flag-table.test.ts fails when the page and the table differ).
 */
export interface Flag {
  /** Without the leading "--". */
  name: string;
  /** flag: takes no value; value: the last one given wins; list: repeatable, every value kept in order. */
  kind: OptionKind;
  /** What the value is, as --help and the reference name it: PATH, DURATION, NAMES... (choices: those, "|"-joined). */
  arg?: string;
  /** The value used when the option is not given, as a user would write it; --help and the reference state it. */
  default?: string;
  /** The only values allowed; anything else is a usage error. */
  choices?: readonly string[];
  /** Tekton's entrypoint's spelling of this flag (`-wait_file`), which src/cli/tekton-argv.ts turns into this one. */
  tekton?: string;
  /** Tekton's flag collects every value given (the credential flags); other Tekton flags keep the last one. */
  tektonRepeats?: true;
  /** One line of `--help`, without the default. */
  help: string;
  /** The option's row in docs/reference.md (Markdown), without the default. */
  reference: string;
}
export type FlagTable = readonly Flag[];

export interface ParsedArgs {
  /** Option name (without "--") -> its value: true for a flag, the last string for a value, every string for a list. */
  options: Record<string, string | string[] | true>;
  /** Everything after the options: the command and its arguments. */
  rest: string[];
}

export function parseArgs(argv: readonly string[], table: FlagTable): ParsedArgs {
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
    const flag = table.find((f) => f.name === name);
    if (flag === undefined) throw usageError(`unknown option --${name} (see baton --help)`);
    const kind = flag.kind;
    if (kind === "flag") {
      if (eq !== -1) throw usageError(`option --${name} takes no value`);
      options[name] = true;
      continue;
    }
    let value: string;
    if (eq !== -1) value = arg.slice(eq + 1);
    else if (i + 1 < argv.length) value = argv[++i]!;
    else throw usageError(`option --${name} needs a value`);
    if (flag.choices && !flag.choices.includes(value)) {
      throw usageError(`invalid --${name} "${value}": use ${flag.choices.join(" or ")}`);
    }
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

/** The option's value, or the table's default for it when it was not given. */
export function valueOrDefault(parsed: ParsedArgs, table: FlagTable, name: string): string | undefined {
  return stringOption(parsed, name) ?? table.find((f) => f.name === name)?.default;
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
