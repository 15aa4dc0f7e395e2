// Measured figures live in docs/performance.md (and README.md's summary of it, which scripts/bench/readme-table.mjs
// writes from a bench run), with how to repeat them: a figure copied into a comment or another page goes stale when
// the bench moves. This test finds figures that read as measurements (a time, a size or a count of instructions with
// a `~`, or beside "median", "p95", "measured", "took", ...) in the other docs and in the comments of src/ and
// scripts/, and fails unless their paragraph (a comment block, a list item, a table row) links to performance.md or
// they are listed below with the reason they may stay.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");

/**
 * A number with a unit the bench reports in: a time below a second, a size, a count of instructions. (Seconds and
 * minutes are left out: in these pages they are how long a test suite or a build takes, which no bench row measures.)
 */
const FIGURE = /(~|≈|\b)\d+(?:[.,]\d+)?(?:[–-]\d+(?:\.\d+)?)? ?(?:ns|µs|us|ms|[kK]B|KiB|MB|MiB|GB|GiB)(?![\w/])|(~|≈|\b)\d+(?:\.\d+)?(?:[–-]\d+(?:\.\d+)?)? M(?= instructions|,| \(|\b)/g;
/** Words that make a figure a measurement rather than a setting (a default, a limit, a poll's interval). */
const MEASURED = /\b(median|p50|p95|p99|measured|measures|callgrind|took|takes ~|costs? ~|on this machine|instructions|a run of|runs? at [0-9a-f]{7})\b/i;

const DEPENDENCIES = "README.md's Dependencies table: the start-up cost of libraries baton does not use, measured by node scripts/bench/deps.mjs (the line below the table); no bench row measures them";
const EXPERIMENT = "a dated experiment behind a design choice, with its method (and commit or runs) beside it: the record of why, not a figure of the bench table that moves with each run";
const ARM64 = "the arm64 build measured under qemu, which ranks variants only (the paragraph above says so); no bench row runs arm64";
const E2E_K8S = "a figure of make e2e-k8s (a real cluster's run, printed by its case), with how to repeat it beside it: no bench row runs a cluster";
const CEL = "the comparison behind the choice of CEL library, with its command (scripts/cel-compare.mjs) and load above the table";

/**
 * Figures that may stay where they are, each with why. `file` and a piece of the paragraph's text identify it; an entry
 * that no longer matches anything fails the test too, so the list does not outlive what it excuses.
 */
const ALLOWED: { file: string; text: string; why: string }[] = [
  { file: "README.md", text: "| esbuild 0.28 |", why: DEPENDENCIES },
  { file: "README.md", text: "| chokidar 5 |", why: DEPENDENCIES },
  { file: "README.md", text: "| execa 9 |", why: DEPENDENCIES },
  { file: "docs/design.md", text: "traced with ftrace", why: EXPERIMENT },
  { file: "docs/design.md", text: "4 alternating runs of each bundle", why: EXPERIMENT },
  { file: "docs/design.md", text: "loading `node:crypto` cost every", why: EXPERIMENT },
  { file: "docs/design.md", text: "heap snapshots of a waiting baton", why: EXPERIMENT },
  { file: "docs/design.md", text: "It does not use `pipe()`", why: EXPERIMENT },
  { file: "docs/design.md", text: "~180 KB of 1 MiB were lost", why: EXPERIMENT },
  { file: "docs/design.md", text: "19.5 KB of never-run code", why: EXPERIMENT },
  { file: "docs/design.md", text: "the bundle without a payload", why: EXPERIMENT },
  { file: "docs/design.md", text: "loads a chunk on first use", why: EXPERIMENT },
  { file: "docs/design.md", text: "the earlier copies needed", why: EXPERIMENT },
  { file: "docs/design.md", text: "should rather be plain lazy code", why: EXPERIMENT },
  { file: "docs/design.md", text: "Node's compile cache", why: EXPERIMENT },
  { file: "docs/design.md", text: "Lazy compilation was ~45 %", why: EXPERIMENT },
  { file: "docs/e2e-k8s.md", text: "the same four groups from nothing", why: "what the test cluster's first build downloads and keeps (test infrastructure, never shipped), its command below the table; no bench row builds it" },
  { file: "docs/e2e-k8s.md", text: "The `20 no-op steps` case runs 5 times a side", why: E2E_K8S },
  { file: "docs/e2e-k8s.md", text: "| creation to the step's command, median (range), 5 pods |", why: E2E_K8S },
  { file: "docs/reference.md", text: "took longer than 10000 ms", why: "baton's own message, quoted: the budget it states is BATON_CEL_TIMEOUT's default, a setting" },
  { file: "docs/standalone.md", text: "The code cache saves", why: "a measurement of the arm64 build under qemu behind a build choice, its method beside it; no bench row runs arm64" },
  { file: "docs/standalone.md", text: "| `scripts/image.mjs` |", why: "a dated comparison behind the choice of scripts/image.mjs over buildah, its method above the table" },
  { file: "docs/standalone.md", text: "| `buildah bud --timestamp`", why: "a dated comparison behind the choice of scripts/image.mjs over buildah, its method above the table" },
  { file: "docs/standalone.md", text: "| `dist/baton-linux-arm64/` with `useCodeCache` |", why: ARM64 },
  { file: "docs/standalone.md", text: "| the same without the code cache", why: ARM64 },
  { file: "docs/standalone.md", text: "| the same with `useSnapshot` |", why: ARM64 },
  { file: "docs/standalone.md", text: "| `dist/baton-linux-x64/`, native, same run |", why: ARM64 },
  { file: "docs/tekton.md", text: "| `@bufbuild/cel` 0.6.1 |", why: CEL },
  { file: "docs/tekton.md", text: "| `@marcbachmann/cel-js` 8.0.0 |", why: CEL },
  { file: "docs/tekton.md", text: "| `cel-js` 0.8.2 |", why: CEL },
  { file: "src/argo/emissary.ts", text: "a 40 MB template took", why: "the worst case measured behind a size limit (a setting), said where the limit is set" },
  { file: "src/handoff/liveness-lock.ts", text: "A killed step must not hang the chain", why: "what a Node process's exit does (the memory it unmaps), the reason the wake FIFO orders the two batons' last moments: not a row of the bench" },
];

interface Paragraph {
  file: string;
  line: number;
  text: string;
  /** For a table row: the table's header and the paragraph before it. */
  context?: string;
}

/**
 * Markdown: each paragraph, list item and table row; fenced code (a bench's output, quoted) is left out. A table row
 * is read with its table's header and the paragraph before the table: "median" there makes its figures measured.
 */
function markdownParagraphs(file: string): Paragraph[] {
  const out: Paragraph[] = [];
  let current: Paragraph | undefined;
  let fenced = false;
  let context = "";
  let header: string | undefined;
  readFileSync(join(ROOT, file), "utf8").split("\n").forEach((line, i) => {
    if (line.startsWith("```")) {
      fenced = !fenced;
      current = undefined;
      return;
    }
    if (fenced) return;
    const row = line.startsWith("|");
    if (!row) header = undefined;
    else if (header === undefined) header = line;
    const starts = line.trim() === "" || row || /^(\s*[-*] |\s*\d+\. |#)/.test(line);
    if (starts) {
      if (current && !row && !current.text.startsWith("|")) context = current.text;
      current = undefined;
    }
    if (line.trim() === "") return;
    if (current === undefined) {
      current = { file, line: i + 1, text: "", context: row ? `${context}\n${header}` : undefined };
      out.push(current);
    }
    current.text += `${line}\n`;
  });
  return out;
}

/** Code: each block of comment lines (and a comment after code on its line). */
function commentBlocks(file: string): Paragraph[] {
  const out: Paragraph[] = [];
  let current: Paragraph | undefined;
  const hash = /\.(sh|py)$|^scripts\/emulate-arm64$|Makefile$/.test(file);
  readFileSync(join(ROOT, file), "utf8").split("\n").forEach((line, i) => {
    const whole = hash ? /^\s*#(.*)$/.exec(line) : /^\s*(?:\/\/|\/\*+|\*(?!\/))(.*)$/.exec(line);
    const trailing = whole ? undefined : / \/\/ (.*)$/.exec(line);
    const text = whole?.[1] ?? trailing?.[1];
    if (text === undefined) {
      current = undefined;
      return;
    }
    if (current === undefined || trailing) {
      current = { file, line: i + 1, text: "" };
      out.push(current);
    }
    current.text += `${text}\n`;
  });
  return out;
}

function filesUnder(dir: string, pattern: RegExp): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => pattern.test(f) && !f.includes("node_modules"))
    .map((f) => relative(ROOT, join(ROOT, dir, f)));
}

/** README.md's table of bench figures, written by scripts/bench/readme-table.mjs from a run: not quoted by hand. */
function withoutBenchTable(paragraphs: Paragraph[]): Paragraph[] {
  return paragraphs.filter((p) => !(p.file === "README.md" && /^\| .*\(rows? [0-9]/.test(p.text)));
}

function quotedFigures(): { where: string; figures: string[]; text: string }[] {
  const docs = ["README.md", ...filesUnder("docs", /\.md$/).filter((f) => f !== "docs/performance.md")];
  const code = [...filesUnder("src", /\.(ts|c|h)$/), ...filesUnder("scripts", /\.(ts|mjs|cjs|js|c|h|sh)$/), "scripts/emulate-arm64", "Makefile"];
  const paragraphs = withoutBenchTable([...docs.flatMap(markdownParagraphs), ...code.flatMap(commentBlocks)]);
  const found: { where: string; figures: string[]; text: string }[] = [];
  for (const p of paragraphs) {
    if (p.text.includes("performance.md")) continue;
    // A sentence at a time: a measurement word makes the figures beside it measured ones (a table row: anywhere in
    // the row, its header or the paragraph that introduces the table).
    const rowMeasured = p.context !== undefined && (MEASURED.test(p.context) || MEASURED.test(p.text));
    const figures = (p.context === undefined ? p.text.split(/(?<=[.;:])\s+/) : [p.text]).flatMap((sentence) => {
      const all = [...sentence.matchAll(FIGURE)].map((m) => m[0]);
      return rowMeasured || MEASURED.test(sentence) ? all : all.filter((f) => /^[~≈]/.test(f));
    });
    // One line of text: an excuse's words may be wrapped anywhere in the paragraph.
    if (figures.length > 0) found.push({ where: `${p.file}:${p.line}`, figures, text: p.text.replace(/\s+/g, " ") });
  }
  return found;
}

test("figures that read as measurements are in docs/performance.md, linked, or listed with a reason", () => {
  const found = quotedFigures();
  const unexcused = found.filter((f) => !ALLOWED.some((a) => f.where.startsWith(`${a.file}:`) && f.text.includes(a.text)));
  assert.deepEqual(
    unexcused.map((f) => `${f.where}: ${f.figures.join(", ")}`),
    [],
    "a measured figure outside docs/performance.md: link its paragraph to performance.md, move it there, or list it in ALLOWED with a reason",
  );
  const stale = ALLOWED.filter((a) => !found.some((f) => f.where.startsWith(`${a.file}:`) && f.text.includes(a.text)));
  assert.deepEqual(stale, [], "ALLOWED entries that excuse nothing any more");
});

test("the scan finds a measured figure in a comment and in a page, and lets a setting be", () => {
  const figures = (text: string) => text.split(/(?<=[.;:])\s+/).flatMap((s) => {
    const all = [...s.matchAll(FIGURE)].map((m) => m[0]);
    return MEASURED.test(s) ? all : all.filter((f) => /^[~≈]/.test(f));
  });
  assert.deepEqual(figures("every step pays its start-up (~5 ms)"), ["~5 ms"]);
  assert.deepEqual(figures("a median of 47 ms (p95 81 ms)"), ["47 ms", "81 ms"]);
  assert.deepEqual(figures("the addon is 14 KB, measured"), ["14 KB"]);
  assert.deepEqual(figures("polled every 100 ms, each attempt bounded to 1 s"), []);
});

/** docs/performance.md's table of the last full run: each row's cells, split at " | " (escaped pipes kept). */
function lastRun(): { text: string; commit: string; rows: string[][] } {
  const page = readFileSync(join(ROOT, "docs/performance.md"), "utf8");
  const commit = /The last full run: `make bench` at ([0-9a-f]{7,})/.exec(page)?.[1];
  assert.ok(commit, "docs/performance.md names the commit of the last full run");
  const lines = page.split("\n");
  const start = lines.findIndex((line) => line.startsWith("| # | figure |"));
  assert.ok(start > 0, "docs/performance.md has the table of the last run");
  const end = lines.findIndex((line, i) => i > start && !line.startsWith("|"));
  const table = lines.slice(start + 2, end);
  return { text: table.join("\n"), commit, rows: table.map((line) => line.slice(2, -2).split(/ (?<!\\)\| /)) };
}

test("README.md's summary of the bench is the run that docs/performance.md's table holds", () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const run = lastRun();
  const ms = (cell: string) => Number(/^([\d.]+) ms/.exec(cell)?.[1]);
  const medians = (id: string) => run.rows.filter((r) => r[0] === id).map((r) => ms(r[2]!));
  // The table readme-table.mjs wrote: every figure in it is one of the run's.
  const table = readme.split("\n").filter((line) => /^\| .*\(rows? [0-9]/.test(line)).join("\n");
  const figures = [...table.matchAll(/\d+(?:\.\d+)? (?:ms|s|MiB)\b/g)].map((m) => m[0]);
  assert.ok(figures.length >= 15, "README.md's table of bench figures");
  assert.deepEqual(figures.filter((f) => !run.text.includes(f)), [], "in README.md's table but not in docs/performance.md's last run");
  assert.match(readme, new RegExp(`Medians of one \`make bench\` run \\([\\d-]+, commit ${run.commit}\\)`), "the same run's commit");
  // "What a step pays": the ranges over the runtimes, as the paragraph rounds them.
  const range = (values: number[], digits: number) => `${Math.min(...values).toFixed(digits)}-${Math.max(...values).toFixed(digits)}`;
  const startUp = medians("3");
  const ratios = run.rows.filter((r) => r[0] === "3").map((r) => ms(r[2]!) / Number(/node -e 0 ([\d.]+) ms/.exec(r[6]!)![1]));
  const pays = readme.slice(readme.indexOf("What a step pays"));
  for (const stated of [
    `start-up ${range(startUp, 0)} ms`,
    `${range(ratios, 2)} x \`node -e 0\``,
    `${medians("1")[0]!.toFixed(1)} ms from a`,
    `${range(medians("1c"), 1)} ms from one command's exit`,
    `${range(medians("8"), 1)} ms from a post file`,
  ]) {
    assert.ok(pays.replace(/\s+/g, " ").includes(stated), `README.md's "What a step pays" does not say "${stated}" (docs/performance.md's last run)`);
  }
});
