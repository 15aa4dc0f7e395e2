import { usageError } from "../base/errors.js";
import { parseDuration } from "./duration.js";
import { findOptionValue, listOption, parseArgs, stringOption, valueOrDefault } from "./parse-args.js";
import { ALL_STEP_FLAGS } from "./step-flags.js";

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
  /** Where the Kubernetes termination message goes (Tekton's format). */
  terminationPath: string | undefined;
  /** Result names, read from resultsDir into the termination message. */
  results: string[];
  resultsDir: string;
  /** Stop the command after this long (0: never), SIGKILL its group gracePeriodMs after the stop signal. */
  timeoutMs: number;
  gracePeriodMs: number;
  /** "continue": a failing command still hands the baton on, and baton exits 0. */
  onError: OnError;
  stdoutPath: string | undefined;
  stderrPath: string | undefined;
  /** A non-empty file here stops the running command (Reason Cancelled). */
  cancelFile: string | undefined;
  /** The program and its arguments. */
  command: string[];
  /** Step result names, read from DIR/results/ into the termination message (type 4). */
  stepResults: string[];
  /** Tekton's step `when` expressions (JSON), checked before the command runs; false skips the step. */
  when: string | undefined;
  /** sidecar-logs: results and artifacts stay out of the termination message (a results sidecar reports them). */
  resultFrom: ResultFrom;
  /** Write the termination message DEFLATE-compressed (`tknz:`) when that is shorter. */
  compressTerminationMessage: boolean;
  /** A failed step waits for POST.breakpointexit instead of handing on; a wait file's .err still runs the step. */
  breakpointOnFailure: boolean;
  /** Wait for POST.beforestepexit (or .err) before the command runs. */
  debugBeforeStep: boolean;
  /** Tekton's credential flags ("secret=url" or a secret name each). */
  credentials: CredentialFlags;
  /** Where Tekton's volumes are (/tekton, or BATON_TEKTON_ROOT): creds, creds-secrets, steps, artifacts. */
  tektonRoot: string;
  /**
   * false (Tekton's argument vector): a command file the kernel will not execute fails to start, as under Tekton's
   * entrypoint, instead of running under /bin/sh (src/run/start-process.ts). Default true.
   */
  shellForScripts?: boolean;
}

export type ResultFrom = "termination-message" | "sidecar-logs";

export interface CredentialFlags {
  basicDocker: string[];
  dockerConfig: string[];
  dockerCfg: string[];
  basicGit: string[];
  sshGit: string[];
}

export type OnError = "continue" | "stopAndFail";

/** Where Tekton mounts its volumes; BATON_TEKTON_ROOT moves it (tests, unusual layouts). */
export function tektonRoot(env: NodeJS.ProcessEnv): string {
  return env.BATON_TEKTON_ROOT || "/tekton";
}
export function parseStepOptions(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): StepOptions {
  const parsed = parseArgs(argv, ALL_STEP_FLAGS);
  const entrypoint = stringOption(parsed, "entrypoint");
  const command = entrypoint === undefined ? parsed.rest : [entrypoint, ...parsed.rest];
  if (command.length === 0 || command[0] === "") {
    throw usageError("no command to run: give it after -- (baton [options] -- COMMAND [ARG...])");
  }
  for (const flag of ["breakpoint-on-failure", "debug-before-step"]) {
    if (parsed.options[flag] === true && stringOption(parsed, "post-file") === undefined) {
      throw usageError(`--${flag} needs --post-file: the debug files are named after it`);
    }
  }
  const waitTimeout = stringOption(parsed, "wait-timeout");
  const timeout = stringOption(parsed, "timeout");
  return {
    waitFiles: listOption(parsed, "wait-file").map((file) => nonEmpty(file, "wait-file")),
    waitFileContent: parsed.options["wait-file-content"] === true,
    waitTimeoutMs: waitTimeout === undefined ? 0 : parseDuration(waitTimeout, "--wait-timeout"),
    postFile: optionalPath(stringOption(parsed, "post-file"), "post-file"),
    stepMetadataDir: optionalPath(stringOption(parsed, "step-metadata-dir"), "step-metadata-dir"),
    safetyPollMs: safetyPollFromEnv(env),
    events: stringOption(parsed, "events"),
    terminationPath: optionalPath(stringOption(parsed, "termination-path"), "termination-path"),
    results: listOption(parsed, "results").flatMap((list) => resultNames(list)),
    resultsDir: optionalPath(stringOption(parsed, "results-dir"), "results-dir") ?? `${tektonRoot(env)}/results`,
    timeoutMs: timeout === undefined ? 0 : parseDuration(timeout, "--timeout"),
    gracePeriodMs: parseDuration(valueOrDefault(parsed, ALL_STEP_FLAGS, "grace-period")!, "--grace-period"),
    onError: valueOrDefault(parsed, ALL_STEP_FLAGS, "on-error") as OnError,
    stdoutPath: optionalPath(stringOption(parsed, "stdout-path"), "stdout-path"),
    stderrPath: optionalPath(stringOption(parsed, "stderr-path"), "stderr-path"),
    cancelFile: optionalPath(stringOption(parsed, "cancel-file"), "cancel-file"),
    command,
    stepResults: listOption(parsed, "step-results").flatMap((list) => resultNames(list, "--step-results")),
    // Checked (a usage error) before the wait by src/tekton/when.ts, loaded only for a step with a `when`.
    when: stringOption(parsed, "when") || undefined,
    resultFrom: valueOrDefault(parsed, ALL_STEP_FLAGS, "result-from") as ResultFrom,
    compressTerminationMessage: parsed.options["compress-termination-message"] === true,
    breakpointOnFailure: parsed.options["breakpoint-on-failure"] === true,
    debugBeforeStep: parsed.options["debug-before-step"] === true,
    credentials: {
      basicDocker: listOption(parsed, "basic-docker"),
      dockerConfig: listOption(parsed, "docker-config"),
      dockerCfg: listOption(parsed, "docker-cfg"),
      basicGit: listOption(parsed, "basic-git"),
      sshGit: listOption(parsed, "ssh-git"),
    },
    tektonRoot: tektonRoot(env),
  };
}

/** The wait's safety-net poll interval from BATON_SAFETY_POLL (a duration); undefined: the default. */
export function safetyPollFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  return env.BATON_SAFETY_POLL ? positive(parseDuration(env.BATON_SAFETY_POLL, "BATON_SAFETY_POLL")) : undefined;
}

/** "a,b" -> ["a", "b"]; empty names are dropped (Tekton passes "" for a task without results). */
export function resultNames(list: string, option = "--results"): string[] {
  const names = list.split(",").filter((name) => name !== "");
  for (const name of names) {
    // A result name becomes a file name under --results-dir: it must not climb out of it.
    if (name.includes("/") || name.includes("\0") || name === "." || name === "..") {
      throw usageError(`invalid result name "${name}" in ${option}: no path separators, "." or ".."`);
    }
  }
  return names;
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

/** The --post-file of an argument vector that failed to parse, if one can be found (see findOptionValue). */
export function findPostFile(argv: readonly string[]): string | undefined {
  return findOptionValue(argv, "post-file");
}
