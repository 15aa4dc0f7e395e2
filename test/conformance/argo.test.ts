// Argo's emissary judged by the real thing: every scenario of argo-scenarios.ts (and the signals of argo-signals.ts)
// runs on Argo's argoexec (v4.0.5 and v3.7.18, built by `make peers`) and on baton (the bundle on this Node, and the
// standalone build), each as PID 1 of namespaces of its own with the same argv, environment and files
// (argo-pod.ts). What each run leaves is compared field by field; every field where baton differs from a peer must be
// listed in docs/argo.md, "Differences the conformance suite finds" (differences.ts), and the standalone build must
// give exactly what the bundle gives.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { before, test } from "node:test";
import { BATON, NO_STANDALONE, STANDALONE } from "../integration/helpers.js";
import { prepareHost, runContainer } from "./argo-pod.js";
import { argsOf, podEnv, SCENARIOS, type Scenario } from "./argo-scenarios.js";
import { signalFields } from "./argo-signals.js";
import { judge, readDifferences, type Comparison } from "./differences.js";
import { peer, probe } from "./peers.js";

const DOC = resolve(import.meta.dirname, "../../docs/argo.md");
const HEADING = "Differences the conformance suite finds";
/** Runs at once: each is mostly waiting (Argo's emissary reaps once a second), the machine has 2 cores. */
const CONCURRENCY = 6;

const peers = [peer("argoexec"), peer("argoexec-v3")];
const batons: [string, string[]][] = [["bundle", [process.execPath, BATON]]];
if (!NO_STANDALONE) batons.push(["standalone", [STANDALONE]]);
const wrappers: [string, string[]][] = [...peers.map((p): [string, string[]] => [p.version, [p.path]]), ...batons];

/** ARGO_CONFORMANCE_ONLY="NAME|NAME": only these scenarios (and only their rows of the table are judged). */
const only = process.env.ARGO_CONFORMANCE_ONLY?.split("|");

/** wrapper label -> scenario -> fields */
const results = new Map<string, Map<string, Record<string, string>>>();

async function runScenario(scenario: Scenario, wrapper: string[]): Promise<Record<string, string>> {
  let extra: Record<string, string> = {};
  try {
    const { fields } = await runContainer({
      wrapper,
      args: argsOf(scenario),
      env: podEnv(scenario),
      template: scenario.template === null ? undefined : (scenario.template ?? {}),
      planted: scenario.planted,
      fullView: scenario.fullView,
      during: scenario.during && (async (run) => void (extra = (await scenario.during!(run, wrapper)) ?? {})),
    });
    return { ...fields, ...extra };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

async function pool(tasks: (() => Promise<void>)[], width: number): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < tasks.length) await tasks[next++]!();
  }));
}

before(async () => {
  probe();
  prepareHost();
  const tasks: (() => Promise<void>)[] = [];
  for (const [label, words] of wrappers) {
    const mine = new Map<string, Record<string, string>>();
    results.set(label, mine);
    if (!only || only.includes("signals")) {
      tasks.push(async () => void mine.set("signals", await signalFields(words).catch((e: Error) => ({ error: e.message }))));
    }
    for (const scenario of SCENARIOS.filter((s) => !only || only.includes(s.name))) {
      tasks.push(async () => void mine.set(scenario.name, await runScenario(scenario, words)));
    }
  }
  await pool(tasks, CONCURRENCY);
  // ARGO_CONFORMANCE_DUMP=FILE: every field of every run, as JSON, to read when a difference needs a closer look.
  if (process.env.ARGO_CONFORMANCE_DUMP) {
    writeFileSync(process.env.ARGO_CONFORMANCE_DUMP, JSON.stringify(Object.fromEntries([...results].map(([w, m]) => [w, Object.fromEntries(m)])), null, 1));
  }
});

/** Both sides of every field either side has; a field one side lacks is `absent` there. */
function compare(theirs: Map<string, Record<string, string>>, ours: Map<string, Record<string, string>>): Comparison[] {
  return [...theirs.keys()].map((scenario) => {
    const a = theirs.get(scenario)!;
    const b = ours.get(scenario) ?? {};
    const fields: Record<string, [string, string]> = {};
    for (const field of new Set([...Object.keys(a), ...Object.keys(b)])) {
      // Where the command ran on one side only, `attempts` says so: what it saw is absent on the other side by
      // consequence, not a difference of its own.
      if (field.startsWith("command ") && a.attempts !== b.attempts && (a[field] === undefined || b[field] === undefined)) continue;
      fields[field] = [a[field] ?? "absent", b[field] ?? "absent"];
    }
    return { scenario, fields };
  });
}

for (const p of peers) {
  test(`argoexec ${p.version} and baton: every difference is listed in docs/argo.md`, () => {
    const listed = readDifferences(DOC, HEADING).filter((row) => !only || only.includes(row.scenario));
    const verdict = judge(`argoexec`, p.version, compare(results.get(p.version)!, results.get("bundle")!), listed);
    console.log(verdict.summary);
    assert.deepEqual(verdict.problems, []);
  });
}

test("the standalone build gives what the bundle gives", { skip: NO_STANDALONE }, () => {
  const problems = compare(results.get("bundle")!, results.get("standalone")!).flatMap(({ scenario, fields }) =>
    Object.entries(fields).filter(([, [a, b]]) => a !== b).map(([field, [a, b]]) => `${scenario} ${field}: bundle ${a}, standalone ${b}`),
  );
  assert.deepEqual(problems, []);
});
