import { usageError } from "../base/errors.js";

// Go's time.ParseDuration syntax, which Tekton and Kubernetes users already write: "300ms", "1.5s", "1h30m", "1m0s", "0".
// Go's two spellings of microseconds, µs (U+00B5) and μs (U+03BC), are written as escapes: the bundle must stay ASCII
// (scripts/build.mjs).
const UNIT_MS: Record<string, number> = {
  ns: 1e-6, us: 1e-3, "\u00b5s": 1e-3, "\u03bcs": 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000,
};
const TERM = /(\d+(?:\.\d*)?|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)/y;

/** Parses a Go duration into milliseconds. Negative durations are refused: no baton option means "before now". */
export function parseDuration(text: string, option = "duration"): number {
  if (text === "0" || text === "+0") return 0;
  const body = text.startsWith("+") ? text.slice(1) : text;
  let ms = 0;
  TERM.lastIndex = 0;
  while (body !== "" && TERM.lastIndex < body.length) {
    const match = TERM.exec(body);
    if (!match) break;
    ms += Number(match[1]) * UNIT_MS[match[2]!]!;
  }
  if (body === "" || TERM.lastIndex !== body.length) {
    throw usageError(`invalid ${option} "${text}": use Go's duration syntax, such as 300ms, 1.5s, 2m or 1h30m`);
  }
  return ms;
}
