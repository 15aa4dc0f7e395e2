// When a waiting step trims: once, TRIM_AFTER_MS into the wait, and never after the wait is over (the step is then on
// the next step's path). The trim itself is tested on a real waiting baton in test/integration/wait-footprint.test.ts.
import { afterEach, mock, test } from "node:test";
import assert from "node:assert/strict";
import { TRIM_AFTER_MS, trimWhileWaiting } from "../../src/process/trim-memory.js";

afterEach(() => mock.timers.reset());

test("a wait that lasts trims once, TRIM_AFTER_MS in", () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  let trims = 0;
  const heard: boolean[] = [];
  trimWhileWaiting((released) => heard.push(released), TRIM_AFTER_MS, () => ++trims === 1);
  mock.timers.tick(TRIM_AFTER_MS - 1);
  assert.equal(trims, 0);
  mock.timers.tick(1);
  assert.equal(trims, 1);
  mock.timers.tick(10 * TRIM_AFTER_MS);
  assert.equal(trims, 1);
  assert.deepEqual(heard, [true], "told once, with what the trim returned");
});

test("a wait that ends first never trims", () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  let trims = 0;
  const heard: boolean[] = [];
  const trimming = trimWhileWaiting((released) => heard.push(released), TRIM_AFTER_MS, () => trims++ > 0);
  mock.timers.tick(TRIM_AFTER_MS - 1);
  trimming.clear();
  mock.timers.tick(10 * TRIM_AFTER_MS);
  assert.equal(trims, 0);
  assert.deepEqual(heard, []);
});
