import { test } from "node:test";
import assert from "node:assert/strict";
import { parseDuration } from "../../src/cli/duration.js";
import { BatonError } from "../../src/base/errors.js";

test("parses Go durations into milliseconds", () => {
  const cases: [string, number][] = [
    ["0", 0], ["300ms", 300], ["1.5s", 1500], ["2m", 120_000], ["1h30m", 5_400_000], ["1m0s", 60_000],
    ["10s", 10_000], [".5s", 500], ["1500us", 1.5], ["2000000ns", 2], ["1h0m0.5s", 3_600_500], ["+5s", 5000],
    ["1500µs", 1.5], ["1500μs", 1.5], // Go's two micro signs, written as escapes in src/ (the bundle stays ASCII)
  ];
  for (const [text, ms] of cases) assert.equal(parseDuration(text), ms, text);
});

test("refuses anything else with a usage error (exit 2)", () => {
  for (const text of ["", "5", "1.5", "s", "-5s", "5 s", "5sec", "1h-30m", "1d", "ms5", "5s ", "0x"]) {
    assert.throws(() => parseDuration(text, "--timeout"), (e: unknown) => e instanceof BatonError && e.exitCode === 2 && /--timeout/.test(e.message), text);
  }
});
