import { test } from "node:test";
import assert from "node:assert/strict";
import { profiled } from "../../src/process/exit.js";

test("a profiler on the command line or in NODE_OPTIONS, or coverage, means Node's own exit", () => {
  assert.equal(profiled([], {}), false);
  assert.equal(profiled([], { NODE_OPTIONS: "" }), false);
  for (const flag of ["--cpu-prof", "--heap-prof", "--prof", "--cpu-prof=", "--heap-prof=x"]) {
    assert.equal(profiled([flag], {}), true, flag);
    assert.equal(profiled([], { NODE_OPTIONS: `--max-old-space-size=64  ${flag}` }), true, `NODE_OPTIONS ${flag}`);
  }
  // Only those flags: their relatives write no file at exit, or are not flags at all.
  for (const flag of ["--cpu-prof-dir=/tmp", "--prof-process", "--profile", "cpu-prof", "---prof", "--proff"]) {
    assert.equal(profiled([flag], { NODE_OPTIONS: flag }), false, flag);
  }
  assert.equal(profiled([], { NODE_V8_COVERAGE: "/tmp/coverage" }), true);
});
