import { constants } from "node:os";
import { parseDuration } from "../cli/duration.js";
import { listOption, parseArgs, stringOption, valueOrDefault } from "../cli/parse-args.js";
import { safetyPollFromEnv } from "../cli/step-options.js";
import { usageError } from "../base/errors.js";
import { CONTROL, parseProbe, type Probe } from "./probe.js";
import { redactPassword } from "../base/redact.js";
import { SIDECAR_FLAGS } from "./flags.js";

/** Everything sidecar mode needs, typed and checked. Durations are in milliseconds. */
export interface SidecarOptions {
  /** Any of these (or its .err) appearing means: the steps are over, stop. */
  stopFiles: string[];
  gracePeriodMs: number;
  stopSignal: NodeJS.Signals;
  readyProbe: Probe | undefined;
  readyFile: string | undefined;
  /** POSTed once a stop file appears (before the stop signal, when there is a COMMAND). */
  stopUrls: URL[];
  safetyPollMs: number | undefined;
  events: string | undefined;
  /** The sidecar and its arguments; empty for the killer of a sidecar baton does not run. */
  command: string[];
}

export function parseSidecarOptions(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): SidecarOptions {
  const parsed = parseArgs(argv, SIDECAR_FLAGS);
  const command = parsed.rest;
  if (command.length > 0 && command[0] === "") throw usageError("the sidecar's command is empty");
  const stopFiles = listOption(parsed, "stop-file").map((file) => nonEmpty(file, "stop-file"));
  if (stopFiles.length === 0) {
    throw usageError("sidecar mode needs at least one --stop-file (the last step's post file)");
  }
  const probe = stringOption(parsed, "ready-probe");
  const readyFile = stringOption(parsed, "ready-file");
  if ((probe === undefined) !== (readyFile === undefined)) {
    throw usageError("--ready-probe and --ready-file go together: the probe decides when the ready file is written");
  }
  const stopUrls = listOption(parsed, "stop-url").map(parseStopUrl);
  const gracePeriod = stringOption(parsed, "grace-period");
  const stopSignal = stringOption(parsed, "stop-signal");
  if (command.length === 0) {
    if (gracePeriod !== undefined || stopSignal !== undefined) {
      throw usageError("--grace-period and --stop-signal stop a COMMAND given after --; without one, use --stop-url");
    }
    if (stopUrls.length === 0 && probe === undefined) {
      throw usageError("nothing to do: give the sidecar's COMMAND after --, a --stop-url, or a --ready-probe");
    }
  }
  return {
    stopFiles,
    gracePeriodMs: parseDuration(valueOrDefault(parsed, SIDECAR_FLAGS, "grace-period")!, "--grace-period"),
    stopSignal: parseSignal(valueOrDefault(parsed, SIDECAR_FLAGS, "stop-signal")!),
    readyProbe: probe === undefined ? undefined : parseProbe(probe),
    readyFile: readyFile === undefined ? undefined : nonEmpty(readyFile, "ready-file"),
    stopUrls,
    safetyPollMs: safetyPollFromEnv(env),
    events: stringOption(parsed, "events"),
    command,
  };
}

/** "SIGTERM", "TERM", "term" or "15"; SIGKILL is allowed (no grace at all). */
export function parseSignal(text: string): NodeJS.Signals {
  const signals = constants.signals as Record<string, number>;
  if (/^\d+$/.test(text)) {
    const name = Object.keys(signals).find((key) => signals[key] === Number(text));
    if (name) return name as NodeJS.Signals;
  } else {
    const name = text.toUpperCase().startsWith("SIG") ? text.toUpperCase() : `SIG${text.toUpperCase()}`;
    if (signals[name] !== undefined) return name as NodeJS.Signals;
  }
  throw usageError(`invalid --stop-signal "${text}": use a signal name such as SIGTERM, SIGINT or SIGQUIT`);
}

function parseStopUrl(text: string): URL {
  if (CONTROL.test(text)) throw usageError(`invalid --stop-url ${JSON.stringify(redactPassword(text))}: a control character in a URL`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw usageError(`invalid --stop-url "${redactPassword(text)}": use http://HOST:PORT/PATH`);
  }
  if (url.protocol !== "http:") throw usageError(`invalid --stop-url "${redactPassword(text)}": only http:// is supported`);
  return url;
}

function nonEmpty(value: string, option: string): string {
  if (value === "") throw usageError(`option --${option} needs a non-empty path`);
  return value;
}
