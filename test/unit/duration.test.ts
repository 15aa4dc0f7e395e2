import { test } from "node:test";
import assert from "node:assert/strict";
import { goDurationNs, parseDuration } from "../../src/cli/duration.js";
import { BatonError } from "../../src/base/errors.js";

test("parses Go durations into milliseconds", () => {
  const cases: [string, number][] = [
    ["0", 0], ["300ms", 300], ["1.5s", 1500], ["2m", 120_000], ["1h30m", 5_400_000], ["1m0s", 60_000],
    ["10s", 10_000], [".5s", 500], ["1500us", 1.5], ["2000000ns", 2], ["1h0m0.5s", 3_600_500], ["+5s", 5000],
    ["1500µs", 1.5], ["1500μs", 1.5], // Go's two micro signs, written as escapes in src/ (the bundle stays ASCII)
    ["0.4ns", 0], ["-0s", 0], ["1.5ns", 1e-6],
  ];
  for (const [text, ms] of cases) assert.equal(parseDuration(text), ms, text);
});

test("refuses anything else with a usage error (exit 2)", () => {
  for (const text of ["", "5", "1.5", "s", "-5s", "5 s", "5sec", "1h-30m", "1d", "ms5", "5s ", "0x", "9999999999h"]) {
    assert.throws(() => parseDuration(text, "--timeout"), (e: unknown) => e instanceof BatonError && e.exitCode === 2 && /--timeout/.test(e.message), text);
  }
});

test("a duration past Go's range is called out of range", () => {
  for (const text of ["9999999999h", "2562048h", "9223372036854775808ns", "2562047h47m16.854775808s"]) {
    assert.throws(() => parseDuration(text, "--timeout"), /out of range/, text);
  }
});

// What Go's time.ParseDuration (which Tekton's -timeout flag is parsed with, flag.Duration) returns for each text, in
// nanoseconds, or "error": printed by a Go 1.26 program that calls it on each line.
const GO: [string, string][] = [
    ["0", "0"],
    ["+0", "0"],
    ["-0", "0"],
    ["0s", "0"],
    ["-0s", "0"],
    ["0.4ns", "0"],
    ["0.5ns", "0"],
    ["0.9999ns", "0"],
    ["1ns", "1"],
    ["1.5ns", "1"],
    [".5s", "500000000"],
    ["5.s", "5000000000"],
    [".", "error"],
    [".s", "error"],
    ["-.s", "error"],
    ["1.5", "error"],
    ["5", "error"],
    ["s", "error"],
    ["-5s", "-5000000000"],
    ["5 s", "error"],
    ["5sec", "error"],
    ["1h-30m", "error"],
    ["1d", "error"],
    ["ms5", "error"],
    ["5s ", "error"],
    ["0x", "error"],
    ["1h30m", "5400000000000"],
    ["1m0s", "60000000000"],
    ["1.5s", "1500000000"],
    ["300ms", "300000000"],
    ["1500us", "1500000"],
    ["1500µs", "1500000"],
    ["1500μs", "1500000"],
    ["2000000ns", "2000000"],
    ["1h0m0.5s", "3600500000000"],
    ["+5s", "5000000000"],
    ["9999999999h", "error"],
    ["2562047h", "9223369200000000000"],
    ["2562048h", "error"],
    ["2562047h47m16.854775807s", "9223372036854775807"],
    ["2562047h47m16.854775808s", "error"],
    ["9223372036854775807ns", "9223372036854775807"],
    ["9223372036854775808ns", "error"],
    ["9223372036.854775807s", "9223372036854775807"],
    ["9223372036.854775808s", "error"],
    ["0.000000001s", "1"],
    ["0.0000000009s", "0"],
    ["1.0000000001s", "1000000000"],
    ["0.33333333333333333333333333333h", "1200000000000"],
    ["3.9999999999999999999h", "14400000000000"],
    ["00000000000000000000000001s", "1000000000"],
    ["1.00000000000000000000000000000000000000000000000001h", "3600000000000"],
    ["+-5s", "error"],
    ["--5s", "error"],
    ["1e3s", "error"],
    ["1_000s", "error"],
    [" 5s", "error"],
    ["5s5", "error"],
    ["5m1.h", "3900000000000"]
];

test("counts nanoseconds exactly as Go's time.ParseDuration, range and rounding included", () => {
  for (const [text, go] of GO) {
    const ours = goDurationNs(text);
    if (go === "error") assert.ok(ours === undefined || ours === "range", `${JSON.stringify(text)}: ${String(ours)}, Go: error`);
    else assert.equal(ours, BigInt(go), JSON.stringify(text));
  }
});
