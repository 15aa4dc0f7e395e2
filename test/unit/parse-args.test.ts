import { test } from "node:test";
import assert from "node:assert/strict";
import { parseArgs, type FlagTable } from "../../src/cli/parse-args.js";
import { findPostFile, parseStepOptions } from "../../src/cli/step-options.js";
import { BatonError } from "../../src/base/errors.js";

const table: FlagTable = [
  { name: "wait-file", kind: "list", help: "", reference: "" },
  { name: "post-file", kind: "value", help: "", reference: "" },
  { name: "quiet", kind: "flag", help: "", reference: "" },
];

test("reads values in both forms, repeats lists, stops at --", () => {
  const parsed = parseArgs(["--wait-file", "a", "--wait-file=b", "--post-file=p", "--quiet", "--", "cmd", "--wait-file"], table);
  assert.deepEqual({ ...parsed.options }, { "wait-file": ["a", "b"], "post-file": "p", quiet: true });
  assert.equal(Object.getPrototypeOf(parsed.options), null);
  assert.deepEqual(parsed.rest, ["cmd", "--wait-file"]);
});

test("stops at the first word that is not an option, so the command's flags stay the command's", () => {
  const parsed = parseArgs(["--quiet", "ls", "--post-file", "x"], table);
  assert.deepEqual(parsed.rest, ["ls", "--post-file", "x"]);
});

test("refuses unknown options, missing values and values given to flags", () => {
  const usage = (argv: string[], pattern: RegExp) =>
    assert.throws(() => parseArgs(argv, table), (e: unknown) => e instanceof BatonError && e.exitCode === 2 && pattern.test(e.message));
  usage(["--nope"], /unknown option --nope/);
  usage(["-p", "x"], /unknown option -p/);
  usage(["--post-file"], /needs a value/);
  usage(["--quiet=yes"], /takes no value/);
  // Names of Object.prototype's properties are not in the table either.
  for (const name of ["constructor", "toString", "valueOf", "__proto__", "hasOwnProperty"]) usage([`--${name}`, "x"], new RegExp(`unknown option --${name}`));
});

test("step options: command from -- or from --entrypoint, durations in ms", () => {
  const options = parseStepOptions(["--wait-file", "a", "--wait-timeout", "1m0s", "--entrypoint", "/ko-app/main", "--", "-v"], {});
  assert.deepEqual(options.command, ["/ko-app/main", "-v"]);
  assert.deepEqual(options.waitFiles, ["a"]);
  assert.equal(options.waitTimeoutMs, 60_000);
  assert.equal(options.waitFileContent, false);
  assert.equal(options.safetyPollMs, undefined);
  assert.equal(parseStepOptions(["--", "true"], { BATON_SAFETY_POLL: "250ms" }).safetyPollMs, 250);
});

test("step options: a missing command or an empty path is a usage error", () => {
  for (const argv of [[], ["--post-file", "p"], ["--post-file", "", "--", "true"], ["--"]]) {
    assert.throws(() => parseStepOptions(argv, {}), (e: unknown) => e instanceof BatonError && e.exitCode === 2, argv.join(" "));
  }
});

test("findPostFile digs the post file out of an argument vector that failed to parse", () => {
  assert.equal(findPostFile(["--bogus", "--post-file", "/p", "--", "--post-file", "/no"]), "/p");
  assert.equal(findPostFile(["--post-file=/q", "--nope"]), "/q");
  assert.equal(findPostFile(["--", "--post-file", "/no"]), undefined);
});

test("step options for Tekton parity: defaults, durations, result names, on-error", () => {
  const defaults = parseStepOptions(["--", "true"], {});
  assert.equal(defaults.resultsDir, "/tekton/results");
  assert.equal(defaults.gracePeriodMs, 10_000);
  assert.equal(defaults.timeoutMs, 0);
  assert.equal(defaults.onError, "stopAndFail");
  assert.deepEqual(defaults.results, []);
  const options = parseStepOptions(["--results", "a,b", "--results", "c", "--timeout", "1.5s", "--grace-period", "0", "--on-error", "continue", "--", "true"], {});
  assert.deepEqual(options.results, ["a", "b", "c"]);
  assert.equal(options.timeoutMs, 1500);
  assert.equal(options.gracePeriodMs, 0);
  assert.equal(options.onError, "continue");
  for (const bad of [["--results", "../etc"], ["--results", "a/b"], ["--results", ".."], ["--on-error", "ignore"], ["--timeout", "10"]]) {
    assert.throws(() => parseStepOptions([...bad, "--", "true"], {}), (e: unknown) => e instanceof BatonError && e.exitCode === 2, bad.join(" "));
  }
});
