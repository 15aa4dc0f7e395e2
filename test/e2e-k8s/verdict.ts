// One line per case, as `make e2e-k8s` prints it: the same on the stock controller and with baton swapped in, a
// difference listed (with its reason) in docs/e2e-k8s.md, or a failure. The cases record what the controllers wrote
// (status, reasons, step states, results), reduced to the fields compared; timings are printed beside, not compared.
// build/e2e-k8s/outcomes.jsonl gets both runs' fields, a line per case.
import assert from "node:assert/strict";
import { appendFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { readDifferences } from "../conformance/differences.js";
import { REPO } from "./kube.js";

export type Record_ = Record<string, unknown>;

export interface Outcome {
  /** What is compared, field by field (each value compared as JSON). */
  fields: Record_;
  /** Shown beside the verdict, never compared (wall clocks). */
  info?: Record_;
}

const lines: string[] = [];

/** The verdict of one case; fails the test on an unlisted difference, and on a listed one that no longer occurs. */
export function judge(engine: "tekton" | "argo", name: string, stock: Outcome, baton: Outcome): void {
  const listed = readDifferences(join(REPO, "docs/e2e-k8s.md"), `${engine === "tekton" ? "Tekton" : "Argo"}: listed differences`)
    .filter((d) => d.scenario === name);
  const differing = Object.keys({ ...stock.fields, ...baton.fields })
    .filter((f) => JSON.stringify(stock.fields[f]) !== JSON.stringify(baton.fields[f]));
  const unlisted = differing.filter((f) => !listed.some((d) => d.field === f));
  const gone = listed.filter((d) => !differing.includes(d.field)).map((d) => d.field);
  const info = stock.info || baton.info ? ` (${Object.keys({ ...stock.info, ...baton.info }).map((k) => `${k}: stock ${stock.info?.[k]}, baton ${baton.info?.[k]}`).join("; ")})` : "";
  const verdict = unlisted.length > 0 || gone.length > 0
    ? `failure: ${unlisted.map((f) => `${f} stock ${JSON.stringify(stock.fields[f])}, baton ${JSON.stringify(baton.fields[f])}`).join("; ")}${gone.length ? ` listed but the same: ${gone.join(", ")}` : ""}`
    : differing.length > 0 ? `documented difference: ${differing.join(", ")}` : "same";
  // Every compared field of both runs, for a reader who wants more than the verdict.
  mkdirSync(join(REPO, "build/e2e-k8s"), { recursive: true });
  appendFileSync(join(REPO, "build/e2e-k8s/outcomes.jsonl"), `${JSON.stringify({ engine, name, stock, baton })}\n`);
  lines.push(`${engine} ${name}: ${verdict}${info}`);
  console.log(`e2e-k8s: ${engine} ${name}: ${verdict}${info}`);
  assert.deepEqual(unlisted, [], `${engine} ${name}: differences not listed in docs/e2e-k8s.md: ${JSON.stringify(Object.fromEntries(unlisted.map((f) => [f, { stock: stock.fields[f], baton: baton.fields[f] }])))}`);
  assert.deepEqual(gone, [], `${engine} ${name}: listed in docs/e2e-k8s.md but the same now`);
}

export function summary(): string {
  return lines.join("\n");
}
