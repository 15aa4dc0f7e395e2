// Tekton's real entrypoint (v1.15.1, `make peers`) against baton, scenario by scenario (tekton-run.ts runs one and
// says what is compared). Every field that differs must be listed in docs/tekton.md, "Differences the conformance
// suite finds", and every row listed there must still differ. The scenarios are in tekton-*.ts beside this file;
// CONFORMANCE_ONLY=id,id runs only those (docs/development.md, "The conformance suite").
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { test } from "node:test";
import { EVERY_SCENARIO, judge, readDifferences, type Comparison } from "./differences.js";
import { peer } from "./peers.js";
import { basics } from "./tekton-basics.js";
import { credentials } from "./tekton-credentials.js";
import { features } from "./tekton-features.js";
import { flags } from "./tekton-flags.js";
import { signals } from "./tekton-signals.js";
import { NO_STANDALONE } from "../integration/helpers.js";
import { batonSides, compare, runScenario, type Outcome, type Scenario } from "./tekton-run.js";

const PAGE = resolve(import.meta.dirname, "../../docs/tekton.md");
const HEADING = "Differences the conformance suite finds";

const all: Scenario[] = [...basics, ...flags, ...features, ...signals, ...credentials];
const ids = all.map((s) => s.id);
assert.equal(new Set(ids).size, ids.length, `scenario ids are unique: ${ids.filter((id, i) => ids.indexOf(id) !== i)}`);
const only = process.env.CONFORMANCE_ONLY?.split(",").filter(Boolean);
const scenarios = only ? all.filter((s) => only.includes(s.id)) : all;
if (only && scenarios.length !== only.length) throw new Error(`CONFORMANCE_ONLY names no such scenario: ${only.filter((id) => !ids.includes(id))}`);

// Scenarios at once: three runs each (the peer, the bundle, the standalone build). Most wait on something (Tekton's
// 1 s polls, a timeout), so more than the 2 cores.
const CONCURRENCY = 4;

test("Tekton's entrypoint and baton, scenario by scenario", { concurrency: CONCURRENCY }, async (t) => {
  const tekton = peer("tekton-entrypoint");
  const sides = batonSides();
  const listed = readDifferences(PAGE, HEADING);
  // Rows of scenarios that did not run (CONFORMANCE_ONLY) are not judged.
  const applies = listed.filter((row) => row.scenario === EVERY_SCENARIO || scenarios.some((s) => s.id === row.scenario));
  const comparisons: Comparison[] = [];
  await Promise.all(
    scenarios.map((scenario) =>
      t.test(scenario.id, async () => {
        const [theirs, ...ours] = await Promise.all([
          runScenario(scenario, { name: "tekton", words: [tekton.path] }),
          ...sides.map((side) => runScenario(scenario, side)),
        ]);
        const comparison = compare(scenario.id, theirs!, Object.fromEntries(sides.map((side, i) => [side.name, ours[i]!])) as Record<string, Outcome>);
        comparisons.push(comparison);
        const own = judge(tekton.name, tekton.version, [comparison], applies.filter((row) => row.scenario === scenario.id || row.scenario === EVERY_SCENARIO));
        assert.deepEqual(own.problems.filter((p) => p.startsWith("undocumented")), []);
      }),
    ),
  );
  comparisons.sort((a, b) => ids.indexOf(a.scenario) - ids.indexOf(b.scenario));
  // CONFORMANCE_DIFFS=FILE: every field that differs, one JSON line each, to write or check the table's rows from.
  if (process.env.CONFORMANCE_DIFFS) {
    const lines = comparisons.flatMap(({ scenario, fields }) =>
      Object.entries(fields)
        .filter(([, [theirs, ours]]) => theirs !== ours)
        .map(([field, [theirs, ours]]) => JSON.stringify({ scenario, field, theirs, ours })),
    );
    writeFileSync(process.env.CONFORMANCE_DIFFS, lines.map((l) => `${l}\n`).join(""));
  }
  const verdict = judge(tekton.name, tekton.version, comparisons, applies);
  // One line for both builds: a field where the bundle and the standalone build disagree differs by itself.
  console.log(verdict.summary);
  if (sides.length === 1) console.log(`conformance tekton-entrypoint: the standalone build was not run (${NO_STANDALONE})`);
  // A row for every scenario need not show in the few that CONFORMANCE_ONLY runs.
  const problems = verdict.problems.filter((p) => !(only && p.startsWith(`listed, but the same now: ${EVERY_SCENARIO} `)));
  assert.deepEqual(problems, []);
});
