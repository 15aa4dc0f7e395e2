import { test } from "node:test";
import assert from "node:assert/strict";
import {
  buildEntries,
  composeMessage,
  mergeEntries,
  parseMessage,
  sizeProblem,
  TERMINATION_MESSAGE_LIMIT,
} from "../../src/report/termination-message.js";

const AT = "2026-11-29T07:00:00.000Z";

test("builds StartedAt, ExitCode and Reason as type 3 and results as type 1, in that order", () => {
  assert.deepEqual(buildEntries({ startedAt: AT, continuedExitCode: 3, reason: "TimeoutExceeded", results: [["digest", "sha256:1"]] }), [
    { key: "StartedAt", value: AT, type: 3 },
    { key: "ExitCode", value: "3", type: 3 },
    { key: "Reason", value: "TimeoutExceeded", type: 3 },
    { key: "digest", value: "sha256:1", type: 1 },
  ]);
  assert.deepEqual(buildEntries({ startedAt: AT, results: [] }), [{ key: "StartedAt", value: AT, type: 3 }]);
});

test("merges with existing entries: existing first, a key given again keeps its last value", () => {
  const existing = [
    { key: "StartedAt", value: "old", type: 3 },
    { key: "kept", value: "k", type: 1 },
  ];
  const added = [
    { key: "StartedAt", value: AT, type: 3 },
    { key: "url", value: "a", type: 1 },
    { key: "url", value: "b", type: 1 },
  ];
  assert.deepEqual(mergeEntries(existing, added), [
    { key: "kept", value: "k", type: 1 },
    { key: "StartedAt", value: AT, type: 3 },
    { key: "url", value: "b", type: 1 },
  ]);
});

test("reads an existing message; empty is no entries; anything else is not a message", () => {
  assert.deepEqual(parseMessage(""), []);
  assert.deepEqual(parseMessage('[{"key":"a","value":"1","type":1}]'), [{ key: "a", value: "1", type: 1 }]);
  assert.equal(parseMessage("not json"), undefined);
  assert.equal(parseMessage('{"key":"a"}'), undefined);
  assert.equal(parseMessage('[{"key":"a","value":1}]'), undefined);
});

test("the size check passes at exactly 4096 bytes and names the largest results above it", () => {
  const message = "x".repeat(TERMINATION_MESSAGE_LIMIT);
  assert.equal(sizeProblem(message, []), undefined);
  const entries = [
    { key: "StartedAt", value: AT, type: 3 },
    { key: "small", value: "s", type: 1 },
    { key: "big", value: "b".repeat(3000), type: 1 },
    { key: "medium", value: "m".repeat(1200), type: 1 },
  ];
  const problem = sizeProblem(`${message}y`, entries);
  assert.equal(
    problem,
    "termination message is 4097 bytes, over the 4096-byte limit of Kubernetes; largest results: big (3000 bytes), medium (1200 bytes), small (1 bytes)",
  );
});

test("counts bytes, not characters", () => {
  const value = "é".repeat(2100); // 4200 bytes in UTF-8
  const composed = composeMessage("", { startedAt: AT, results: [["name", value]] });
  assert.match(composed.tooLarge ?? "", /largest results: name \(4200 bytes\)/);
});

test("a message that is too large is written without the results", () => {
  const composed = composeMessage('[{"key":"earlier","value":"e","type":1}]', {
    startedAt: AT,
    results: [["big", "b".repeat(5000)]],
  });
  assert.ok(composed.tooLarge);
  assert.equal(composed.text, `[{"key":"earlier","value":"e","type":1},{"key":"StartedAt","value":"${AT}","type":3}]`);
});

test("existing content that is not a Tekton message is replaced, and said so", () => {
  const composed = composeMessage("garbage", { startedAt: AT, results: [] });
  assert.equal(composed.replacedExisting, true);
  assert.equal(composed.text, `[{"key":"StartedAt","value":"${AT}","type":3}]`);
});

test("when the existing content alone is too large, the step's own entries are written alone, so the message fits", () => {
  const existing = JSON.stringify([{ key: "huge", value: "x".repeat(4000), type: 1 }]);
  const composed = composeMessage(existing, { startedAt: AT, results: [["digest", "sha256:1"]] });
  assert.ok(composed.tooLarge);
  assert.ok(Buffer.byteLength(composed.text) <= TERMINATION_MESSAGE_LIMIT);
  assert.deepEqual(JSON.parse(composed.text), [{ key: "StartedAt", value: AT, type: 3 }]);
});
