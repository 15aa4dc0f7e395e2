import { usageError } from "../errors.js";
import { parseDuration } from "./duration.js";
import { listOption, parseArgs, stringOption, type OptionTable } from "./parse-args.js";

/** Everything step mode needs, typed and checked. Durations are in milliseconds; 0 means "none". */
export interface StepOptions {
  waitFiles: string[];
  waitFileContent: boolean;
  waitTimeoutMs: number;
  postFile: string | undefined;
  stepMetadataDir: string | undefined;
  /** The wait's safety-net poll interval, from BATON_SAFETY_POLL (a duration); undefined: the default. */
  safetyPollMs: number | undefined;
  /** Where lifecycle events go (a file or "stderr"); BATON_EVENTS does the same. */
  events: string | undefined;
  /** The program and its arguments. */
  command: string[];
}

export const STEP_OPTIONS: OptionTable = {
  "wait-file": "list",
  "wait-file-content": "flag",
  "wait-timeout": "value",
  "post-file": "value",
  "step-metadata-dir": "value",
  entrypoint: "value",
  events: "value",
};

export function parseStepOptions(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): StepOptions {
  const parsed = parseArgs(argv, STEP_OPTIONS);
  const entrypoint = stringOption(parsed, "entrypoint");
  const command = entrypoint === undefined ? parsed.rest : [entrypoint, ...parsed.rest];
  if (command.length === 0 || command[0] === "") {
    throw usageError("no command to run: give it after -- (baton [options] -- COMMAND [ARG...])");
  }
  const waitTimeout = stringOption(parsed, "wait-timeout");
  return {
    waitFiles: listOption(parsed, "wait-file").map((file) => nonEmpty(file, "wait-file")),
    waitFileContent: parsed.options["wait-file-content"] === true,
    waitTimeoutMs: waitTimeout === undefined ? 0 : parseDuration(waitTimeout, "--wait-timeout"),
    postFile: optionalPath(stringOption(parsed, "post-file"), "post-file"),
    stepMetadataDir: optionalPath(stringOption(parsed, "step-metadata-dir"), "step-metadata-dir"),
    safetyPollMs: safetyPollFromEnv(env),
    events: stringOption(parsed, "events"),
    command,
  };
}

/** The wait's safety-net poll interval from BATON_SAFETY_POLL (a duration); undefined: the default. */
export function safetyPollFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  return env.BATON_SAFETY_POLL ? positive(parseDuration(env.BATON_SAFETY_POLL, "BATON_SAFETY_POLL")) : undefined;
}

function positive(ms: number): number {
  if (ms <= 0) throw usageError("BATON_SAFETY_POLL must be longer than 0");
  return ms;
}

function nonEmpty(value: string, option: string): string {
  if (value === "") throw usageError(`option --${option} needs a non-empty path`);
  return value;
}

function optionalPath(value: string | undefined, option: string): string | undefined {
  return value === undefined ? undefined : nonEmpty(value, option);
}

/**
 * The --post-file of an argument vector that failed to parse, if one can be found: a misconfigured step still
 * writes POST.err, so the steps after it end instead of waiting forever.
 */
export function findPostFile(argv: readonly string[]): string | undefined {
  let found: string | undefined;
  for (let i = 0; i < argv.length && argv[i] !== "--"; i++) {
    const arg = argv[i]!;
    if (arg === "--post-file") found = argv[i + 1];
    else if (arg.startsWith("--post-file=")) found = arg.slice("--post-file=".length);
  }
  return found || undefined;
}
