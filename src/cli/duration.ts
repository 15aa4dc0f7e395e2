import { usageError } from "../base/errors.js";

// Go's time.ParseDuration, exactly, which Tekton's -timeout and Kubernetes users already write: "300ms", "1.5s", "1h30m",
// "1m0s", "0". The value is counted in whole nanoseconds as Go counts it (a fraction below 1 ns is dropped, so "0.4ns"
// is 0: no timeout, as in Tekton) and must fit Go's int64 (at most 2562047h47m16.854775807s): "9999999999h" is out of
// range in Go, and so a usage error here. Go's two spellings of microseconds, µs (U+00B5) and μs (U+03BC), are written
// as escapes: the bundle must stay ASCII (scripts/build.mjs).
const UNIT_NS: Record<string, bigint> = {
  ns: 1n, us: 1_000n, "\u00b5s": 1_000n, "\u03bcs": 1_000n, ms: 1_000_000n, s: 1_000_000_000n, m: 60_000_000_000n, h: 3_600_000_000_000n,
};
const MAX_NS = 2n ** 63n - 1n;
const OVERFLOW = 2n ** 63n;

/** Parses a Go duration into milliseconds (whole nanoseconds / 1e6). Negative durations are refused: no option of
 * baton's means "before now" (Go's "-0s" is 0, and accepted). */
export function parseDuration(text: string, option = "duration"): number {
  const ns = goDurationNs(text);
  if (ns === undefined) {
    throw usageError(`invalid ${option} "${text}": use Go's duration syntax, such as 300ms, 1.5s, 2m or 1h30m`);
  }
  if (ns === "range") throw usageError(`invalid ${option} "${text}": out of range (Go's durations end at 2562047h47m16.854775807s)`);
  if (ns < 0n) throw usageError(`invalid ${option} "${text}": a negative duration`);
  return Number(ns) / 1e6;
}

/** Go's algorithm, step for step (its float64 for fractions included); undefined: not a duration; "range": too large. */
export function goDurationNs(text: string): bigint | "range" | undefined {
  let s = text;
  let negative = false;
  if (s.startsWith("-") || s.startsWith("+")) {
    negative = s[0] === "-";
    s = s.slice(1);
  }
  if (s === "0") return 0n;
  if (s === "") return undefined;
  let total = 0n;
  while (s !== "") {
    if (!/^[0-9.]/.test(s)) return undefined;
    const whole = /^[0-9]*/.exec(s)![0];
    s = s.slice(whole.length);
    let value = 0n;
    for (const digit of whole) {
      if (value > OVERFLOW / 10n) return "range";
      value = value * 10n + BigInt(digit);
      if (value > OVERFLOW) return "range";
    }
    let fraction = 0n;
    let scale = 1;
    let fractionDigits = 0;
    if (s.startsWith(".")) {
      const digits = /^[0-9]*/.exec(s.slice(1))![0];
      s = s.slice(1 + digits.length);
      fractionDigits = digits.length;
      // Go's leadingFraction: stops gaining precision where the next digit would overflow, but goes on consuming.
      let full = false;
      for (const digit of digits) {
        if (full || fraction > (OVERFLOW - 1n) / 10n) {
          full = true;
          continue;
        }
        const next = fraction * 10n + BigInt(digit);
        if (next > OVERFLOW) {
          full = true;
          continue;
        }
        fraction = next;
        scale *= 10;
      }
    }
    if (whole === "" && fractionDigits === 0) return undefined; // "." or ".s"
    const unitText = /^[^0-9.]*/.exec(s)![0];
    if (unitText === "") return undefined;
    s = s.slice(unitText.length);
    const unit = Object.hasOwn(UNIT_NS, unitText) ? UNIT_NS[unitText]! : undefined;
    if (unit === undefined) return undefined;
    if (value > OVERFLOW / unit) return "range";
    value *= unit;
    if (fraction > 0n) {
      // float64, as Go: nanosecond-exact for fractions of hours.
      value += BigInt(Math.trunc(Number(fraction) * (Number(unit) / scale)));
      if (value > OVERFLOW) return "range";
    }
    total += value;
    if (total > OVERFLOW) return "range";
  }
  if (negative) return -total;
  return total > MAX_NS ? "range" : total;
}
