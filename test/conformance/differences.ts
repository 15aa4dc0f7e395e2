// The conformance suites' verdict: each scenario runs on a real peer and on baton, and every field that differs must be
// listed, with its reason, in the differences table of the peer's page (docs/tekton.md, docs/argo.md). An unlisted
// difference fails the suite, and so does a listed one that no longer occurs: the table is the documentation and the
// test at once.
import { readFileSync } from "node:fs";

/** One row of a differences table: the scenario, the field that differs, and the rest of the row by column name. */
export interface ListedDifference {
  scenario: string;
  field: string;
  /** The peers (their versions) the row applies to; empty: every peer of the table. */
  peers: string[];
  cells: Record<string, string>;
}

/** What one scenario gave on both sides, field by field, after normalising what may differ by nature (paths, pids). */
export interface Comparison {
  scenario: string;
  /** Field name -> [peer's value, baton's value], as JSON text, for every field compared. */
  fields: Record<string, [string, string]>;
}

const unquote = (cell: string): string => cell.trim().replace(/^`(.*)`$/, "$1");

/** A row whose scenario is `*` lists a difference every scenario may show (a file only baton writes, say). */
export const EVERY_SCENARIO = "*";

/**
 * The rows of the table that follows `heading` (a Markdown heading's text, without its #s) in `file`. The table needs
 * columns named `scenario` and `field` (a cell may name several, each in backticks, comma-separated: the row lists every
 * pair); a column `peer` (optional) names the versions a row applies to, comma-separated.
 */
export function readDifferences(file: string, heading: string): ListedDifference[] {
  const lines = readFileSync(file, "utf8").split("\n");
  const start = lines.findIndex((line) => /^#+\s/.test(line) && line.replace(/^#+\s*/, "").trim() === heading);
  if (start < 0) throw new Error(`${file}: no heading "${heading}"`);
  let i = start + 1;
  while (i < lines.length && !lines[i].startsWith("|")) {
    if (/^#+\s/.test(lines[i])) throw new Error(`${file}: no table under "${heading}"`);
    i++;
  }
  const split = (line: string) => line.trim().replace(/^\|/, "").replace(/\|$/, "").split(/(?<!\\)\|/).map((c) => c.trim());
  const header = split(lines[i]).map((c) => c.toLowerCase());
  if (!header.includes("scenario") || !header.includes("field")) {
    throw new Error(`${file}: the table under "${heading}" needs the columns scenario and field`);
  }
  const rows: ListedDifference[] = [];
  for (i += 2; i < lines.length && lines[i].startsWith("|"); i++) {
    const cells: Record<string, string> = {};
    split(lines[i]).forEach((cell, column) => (cells[header[column]] = cell));
    const peers = (cells.peer ?? "").split(",").map(unquote).filter((p) => p !== "" && p !== "all");
    // A cell may name several scenarios or fields, each in backticks, comma-separated: one row for each pair.
    const several = (cell: string) => (/^`[^`]*`(\s*,\s*`[^`]*`)+$/.test(cell.trim()) ? cell.split(/`\s*,\s*`/).map((c) => c.trim().replace(/^`|`$/g, "")) : [unquote(cell)]);
    for (const scenario of several(cells.scenario)) {
      for (const field of several(cells.field)) rows.push({ scenario, field, peers, cells });
    }
  }
  return rows;
}

export interface Verdict {
  /** `conformance <peer> <version>: N scenarios, S same, D documented differences, U undocumented` */
  summary: string;
  /** One line per problem: an undocumented difference (with both values) or a listed one that did not occur. */
  problems: string[];
}

/** Judges the comparisons of one peer against the table. */
export function judge(peer: string, version: string, comparisons: Comparison[], listed: ListedDifference[]): Verdict {
  const applies = listed.filter((row) => row.peers.length === 0 || row.peers.includes(version));
  const key = (scenario: string, field: string) => `${scenario} ${field}`;
  const expected = new Set(applies.map((row) => key(row.scenario, row.field)));
  // The key a difference is listed under: its scenario's own row, else a row for every scenario.
  const listedAs = (scenario: string, field: string) =>
    expected.has(key(scenario, field)) ? key(scenario, field) : expected.has(key(EVERY_SCENARIO, field)) ? key(EVERY_SCENARIO, field) : undefined;
  const seen = new Set<string>();
  const problems: string[] = [];
  let same = 0;
  let documented = 0;
  let undocumented = 0;
  for (const { scenario, fields } of comparisons) {
    let differs = false;
    let unlisted = false;
    for (const [field, [theirs, ours]] of Object.entries(fields)) {
      if (theirs === ours) continue;
      differs = true;
      const listedKey = listedAs(scenario, field);
      if (listedKey) seen.add(listedKey);
      else {
        unlisted = true;
        problems.push(`undocumented: ${scenario} ${field}: ${peer} ${clip(theirs)}, baton ${clip(ours)}`);
      }
    }
    if (!differs) same++;
    else if (unlisted) undocumented++;
    else documented++;
  }
  const ran = new Set(comparisons.map((c) => c.scenario));
  for (const row of applies) {
    if (row.scenario !== EVERY_SCENARIO && !ran.has(row.scenario)) problems.push(`listed, but no such scenario ran: ${row.scenario} ${row.field}`);
    else if (!seen.has(key(row.scenario, row.field))) problems.push(`listed, but the same now: ${row.scenario} ${row.field}`);
  }
  return {
    summary: `conformance ${peer} ${version}: ${comparisons.length} scenarios, ${same} same, ${documented} documented differences, ${undocumented} undocumented`,
    problems,
  };
}

function clip(text: string): string {
  return text.length > 300 ? `${text.slice(0, 300)}...` : text;
}
