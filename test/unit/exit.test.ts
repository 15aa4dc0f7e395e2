import { test } from "node:test";
import assert from "node:assert/strict";
import { profiled } from "../../src/process/exit.js";

test("a profiler on Node's command line, or BATON_PROFILE=1, means Node's own exit; the step's NODE_OPTIONS and NODE_V8_COVERAGE do not", () => {
  assert.equal(profiled([], {}), false);
  for (const flag of ["--cpu-prof", "--heap-prof", "--prof", "--cpu-prof=", "--heap-prof=x"]) {
    assert.equal(profiled([flag], {}), true, flag);
    // The step's environment belongs to its command: a profiler it turns on for its own Node is not baton's.
    assert.equal(profiled([], { NODE_OPTIONS: `--max-old-space-size=64 ${flag}` }), false, `NODE_OPTIONS ${flag}`);
  }
  // Only those flags: their relatives write no file at exit, or are not flags at all.
  for (const flag of ["--cpu-prof-dir=/tmp", "--prof-process", "--profile", "cpu-prof", "---prof", "--proff"]) {
    assert.equal(profiled([flag], {}), false, flag);
  }
  assert.equal(profiled([], { NODE_V8_COVERAGE: "/tmp/coverage" }), false);
  assert.equal(profiled([], { NODE_V8_COVERAGE: "/tmp/coverage", BATON_PROFILE: "1" }), true);
  assert.equal(profiled([], { BATON_PROFILE: "0" }), false);
});
