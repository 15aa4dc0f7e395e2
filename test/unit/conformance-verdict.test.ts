// The conformance suites' verdict (test/conformance/differences.ts): an unlisted difference fails, a listed one that
// no longer occurs fails, rows limited to one peer version apply to that version only.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { judge, readDifferences } from "../conformance/differences.js";

const page = `# A peer

## Differences the conformance suite finds

Some prose.

| scenario | field | peer | theirs | baton | why |
|---|---|---|---|---|---|
| \`killed\` | \`exit\` | | 255 | 137 | 128+N, as a shell gives |
| \`rt-signal\` | \`signals\` | \`v3.7.18\` | dropped | forwarded | a reason with a \\| pipe |

## Next
`;

function table() {
  const file = join(mkdtempSync(join(tmpdir(), "verdict-")), "page.md");
  writeFileSync(file, page);
  return readDifferences(file, "Differences the conformance suite finds");
}

test("rows are read by column name, backticks dropped, peers split", () => {
  const rows = table();
  assert.deepEqual(
    rows.map((r) => [r.scenario, r.field, r.peers]),
    [["killed", "exit", []], ["rt-signal", "signals", ["v3.7.18"]]],
  );
  assert.equal(rows[1]!.cells.why, "a reason with a \\| pipe");
});

test("listed differences are documented, the rest undocumented, and the summary counts scenarios", () => {
  const verdict = judge("peer", "v4.0.5", [
    { scenario: "plain", fields: { exit: ["0", "0"] } },
    { scenario: "killed", fields: { exit: ["255", "137"], post: ["\"err\"", "\"err\""] } },
    { scenario: "odd", fields: { post: ["\"ok\"", "\"err\""] } },
  ], table());
  assert.equal(verdict.summary, "conformance peer v4.0.5: 3 scenarios, 1 same, 1 documented differences, 1 undocumented");
  assert.deepEqual(verdict.problems, ['undocumented: odd post: peer "ok", baton "err"']);
});

test("a listed difference that no longer occurs fails, as does one for a scenario that did not run", () => {
  const verdict = judge("peer", "v3.7.18", [{ scenario: "killed", fields: { exit: ["137", "137"] } }], table());
  assert.deepEqual(verdict.problems, [
    "listed, but the same now: killed exit",
    "listed, but no such scenario ran: rt-signal signals",
  ]);
});

test("a row for another version does not apply", () => {
  const verdict = judge("peer", "v4.0.5", [{ scenario: "killed", fields: { exit: ["255", "137"] } }], table());
  assert.deepEqual(verdict.problems, []);
});

const wide = `## Differences

| scenario | field | why |
|---|---|---|
| \`*\` | \`post content\` | every scenario |
| \`a\`, \`b\` | \`exit\`, \`post\` | two scenarios, two fields |
`;

function wideTable() {
  const file = join(mkdtempSync(join(tmpdir(), "verdict-")), "page.md");
  writeFileSync(file, wide);
  return readDifferences(file, "Differences");
}

test("a cell naming several scenarios or fields lists every pair", () => {
  assert.deepEqual(
    wideTable().map((r) => `${r.scenario} ${r.field}`),
    ["* post content", "a exit", "a post", "b exit", "b post"],
  );
});

test("a row for scenario * covers that field in any scenario, and fails when no scenario shows it", () => {
  const rows = wideTable();
  const verdict = judge("peer", "v1", [
    { scenario: "a", fields: { exit: ["1", "2"], post: ["x", "y"], "post content": ['""', '"{}"'] } },
    { scenario: "b", fields: { exit: ["1", "2"], post: ["x", "y"] } },
    { scenario: "c", fields: { "post content": ['""', '"{}"'], other: ["1", "2"] } },
  ], rows);
  assert.equal(verdict.summary, "conformance peer v1: 3 scenarios, 0 same, 2 documented differences, 1 undocumented");
  assert.deepEqual(verdict.problems, ["undocumented: c other: peer 1, baton 2"]);
  const none = judge("peer", "v1", [
    { scenario: "a", fields: { exit: ["1", "2"], post: ["x", "y"] } },
    { scenario: "b", fields: { exit: ["1", "2"], post: ["x", "y"] } },
  ], rows);
  assert.deepEqual(none.problems, ["listed, but the same now: * post content"]);
});
