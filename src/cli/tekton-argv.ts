import { existsSync } from "node:fs";
import { BatonError, usageError } from "../base/errors.js";
import { ALL_STEP_FLAGS } from "./step-flags.js";
import { tektonRoot } from "./step-options.js";

// Tekton's pod builder starts its entrypoint with Go-style flags: one dash, underscores, `-flag value` or
// `-flag=value`, bools as `-flag` or `-flag=true`, `-wait_file A,B` as a comma list, the command after `--`
// (cmd/entrypoint/main.go and pkg/pod/entrypoint.go in tektoncd/pipeline). This is the one place that turns such an
// argument vector into baton's own options, which the ordinary parser then reads; nothing else knows Tekton's spelling.

type GoFlagKind = "bool" | "string" | "repeatable";

type GoFlag = { kind: GoFlagKind; option: string };

/** SPIRE: baton does not sign results. -enable_spire is refused below; the socket path alone asks for nothing. */
const SPIRE_FLAGS: Readonly<Record<string, GoFlag>> = {
  enable_spire: { kind: "bool", option: "" },
  spire_socket_path: { kind: "string", option: "" },
};

/**
 * Every flag of Tekton's entrypoint (cmd/entrypoint/main.go, spire.go, creds flags), and the baton option it becomes:
 * the `tekton` spellings of step mode's table (step-flags.ts), made only for a Tekton argument vector.
 */
function goFlags(): Map<string, GoFlag> {
  const flags = new Map(Object.entries(SPIRE_FLAGS));
  for (const flag of ALL_STEP_FLAGS) {
    if (flag.tekton === undefined) continue;
    const kind = flag.kind === "flag" ? "bool" : flag.tektonRepeats ? "repeatable" : "string";
    flags.set(flag.tekton, { kind, option: `--${flag.name}` });
  }
  return flags;
}

/** Flags that Tekton's entrypoint does not have (it exits 2 on them too), with where they come from. */
const NOT_TEKTON: Readonly<Record<string, string>> = {
  secret_mask_file: "only in an unmerged Tekton pull request",
  step_metadata_dir_link: "removed in Tekton v0.32",
  run_always: "only in an unmerged Tekton pull request",
  discard_error: "only in an unmerged Tekton pull request",
};

/** What Tekton's `result_from` means when it is not "termination-message": the results sidecar reads them. */
const SIDECAR_LOGS = "sidecar-logs";

/** Tekton's subcommands (cmd/entrypoint/subcommands). */
export const TEKTON_SUBCOMMANDS: readonly string[] = ["init", "cp", "step-init", "decode-script"];

export type TektonInvocation =
  | { kind: "step"; argv: string[] }
  | { kind: "help" }
  | { kind: "subcommand"; name: string; args: string[] };

/**
 * True when `argv` is Tekton's rather than baton's: it starts with a single-dash flag of more than one letter, or a
 * double-dash one with an underscore. baton's own options are all `--kebab-case`, so the two never overlap.
 */
export function isTektonArgv(argv: readonly string[]): boolean {
  const first = argv[0] ?? "";
  return /^-[A-Za-z][\w-]+(=|$)/.test(first) || /^--[a-z][a-z0-9]*_[\w]*(=|$)/.test(first);
}

export function translateTektonArgv(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): TektonInvocation {
  // As Tekton does: the command is everything after the first "--"; flags are read only before it.
  const terminator = argv.indexOf("--");
  const flagWords = terminator === -1 ? argv : argv.slice(0, terminator);
  const commandArgs = terminator === -1 ? [] : argv.slice(terminator + 1);

  const flags = goFlags();
  const values = new Map<string, string>(); // Go's flag package: the last value given wins
  const repeated = new Map<string, string[]>(); // ...except for the credential flags, which collect every value
  let i = 0;
  for (; i < flagWords.length; i++) {
    const word = flagWords[i]!;
    if (!word.startsWith("-") || word === "-") break; // Go stops at the first non-flag word
    const body = word.startsWith("--") ? word.slice(2) : word.slice(1);
    const eq = body.indexOf("=");
    const name = eq === -1 ? body : body.slice(0, eq);
    // Go's flag package answers -h and -help (either dash) wherever they come among the flags: usage, exit 0.
    if (name === "h" || name === "help") return { kind: "help" };
    // Own names only: -toString, -constructor or -__proto__ are unknown flags, not Object.prototype's properties.
    const spec = flags.get(name);
    if (!spec) {
      const why = Object.hasOwn(NOT_TEKTON, name) ? NOT_TEKTON[name] : undefined;
      throw usageError(why ? `-${name} is not a flag of Tekton's entrypoint (${why})` : `unknown Tekton entrypoint flag -${name} (see baton --help)`);
    }
    let value: string;
    if (eq !== -1) value = body.slice(eq + 1);
    else if (spec.kind === "bool") value = "true";
    else if (i + 1 < flagWords.length) value = flagWords[++i]!; // Go takes the next word even if it starts with "-"
    else throw usageError(`Tekton entrypoint flag -${name} needs a value`);
    // Go parses -timeout as it reads it: an empty duration is an error there, not "no timeout" as other empty values.
    if (name === "timeout" && value === "") throw usageError(`invalid value "" for Tekton entrypoint flag -timeout: not a duration`);
    if (spec.kind === "repeatable") repeated.set(name, [...(repeated.get(name) ?? []), value]);
    else values.set(name, spec.kind === "bool" ? goBool(name, value) : value);
  }

  const positional = flagWords.slice(i);
  if (positional.length > 0) {
    if (TEKTON_SUBCOMMANDS.includes(positional[0]!)) {
      return { kind: "subcommand", name: positional[0]!, args: positional.slice(1) };
    }
    throw usageError(`unexpected argument "${positional[0]}" before "--" in a Tekton argument vector`);
  }

  if (values.get("enable_spire") === "true") {
    // Tekton's own build without SPIRE (the disable_spire tag) refuses it the same way: exit 1, nothing run.
    throw new BatonError("-enable_spire: baton does not sign results with SPIRE (as Tekton's build without SPIRE, it refuses the flag)");
  }
  const options: string[] = [];
  for (const [name, value] of values) {
    const { kind, option } = flags.get(name)!;
    if (option === "") continue;
    if (name === "wait_file") {
      for (const file of value.split(",")) if (file !== "") options.push(option, file);
    } else if (name === "result_from") {
      // Tekton compares with "termination-message" only: any other value keeps results out of the message.
      options.push(option, value === "termination-message" ? value : SIDECAR_LOGS);
    } else if (kind === "bool") {
      if (value === "true") options.push(option);
    } else if (value !== "") {
      // Tekton treats an empty value as "not given" (its defaults are ""); baton refuses an empty path.
      options.push(option, value);
    }
  }
  for (const [name, list] of repeated) for (const value of list) options.push(flags.get(name)!.option, value);
  // keep-pod-on-cancel: the controller mounts the downward-API file /tekton/downward/cancel (empty until the TaskRun is
  // cancelled) and Tekton's entrypoint watches it in every step. Only where it is mounted: one stat, no watch otherwise.
  const cancelFile = `${tektonRoot(env)}/downward/cancel`;
  if (existsSync(cancelFile)) options.push("--cancel-file", cancelFile);
  const command = values.get("entrypoint") ? [] : platformCommand(env);
  return { kind: "step", argv: [...options, "--", ...command, ...commandArgs] };
}

/**
 * The -post_file of a Tekton argument vector that failed to translate, if one can be found: the step still writes
 * POST.err, so the steps after it end instead of waiting forever.
 */
export function findTektonPostFile(argv: readonly string[]): string | undefined {
  let found: string | undefined;
  for (let i = 0; i < argv.length && argv[i] !== "--"; i++) {
    const arg = argv[i]!;
    if (arg === "-post_file" || arg === "--post_file") found = argv[i + 1];
    else if (/^--?post_file=/.test(arg)) found = arg.slice(arg.indexOf("=") + 1);
  }
  return found || undefined;
}

/** Go's strconv.ParseBool. */
function goBool(name: string, value: string): string {
  if (["1", "t", "T", "true", "TRUE", "True"].includes(value)) return "true";
  if (["0", "f", "F", "false", "FALSE", "False"].includes(value)) return "false";
  throw usageError(`invalid boolean "${value}" for Tekton entrypoint flag -${name}`);
}

const GO_ARCH: Readonly<Record<string, string>> = {
  x64: "amd64", arm64: "arm64", arm: "arm", ia32: "386", ppc64: "ppc64le", s390x: "s390x", riscv64: "riscv64",
};

/**
 * Without -entrypoint, Tekton takes the image's own entrypoint for this platform from TEKTON_PLATFORM_COMMANDS
 * (JSON: {"linux/amd64": ["/bin/app"], ...}), falling back from "os/arch/variant" to "os/arch" (and from "os/arch" to "os").
 */
export function platformCommand(env: NodeJS.ProcessEnv, platform = `${process.platform}/${GO_ARCH[process.arch] ?? process.arch}`): string[] {
  const json = env.TEKTON_PLATFORM_COMMANDS;
  if (!json) throw usageError("no command to run: Tekton's -entrypoint is missing and TEKTON_PLATFORM_COMMANDS is not set");
  let commands: unknown;
  try {
    commands = JSON.parse(json);
  } catch {
    throw usageError("TEKTON_PLATFORM_COMMANDS is not valid JSON");
  }
  if (typeof commands !== "object" || commands === null) {
    throw usageError("TEKTON_PLATFORM_COMMANDS is not a JSON object of platforms");
  }
  // Tekton's key (containerd's platform string, with the CPU variant where there is one), then that key less its last
  // part, as Tekton's selectCommandForPlatform falls back: "linux/arm64/v8" -> "linux/arm64", "linux/amd64" -> "linux".
  const full = platform === "linux/arm64" ? "linux/arm64/v8" : platform === "linux/arm" ? "linux/arm/v7" : platform;
  for (const key of [full, full.slice(0, full.lastIndexOf("/"))]) {
    const command = (commands as Record<string, unknown>)[key];
    if (Array.isArray(command) && command.length > 0 && command.every((word) => typeof word === "string")) return command;
  }
  throw usageError(`TEKTON_PLATFORM_COMMANDS has no command for platform ${platform}`);
}
