// docs/reference.md's tables of options are written from the option tables in src/ (src/cli/step-flags.ts,
// src/sidecar/flags.ts): `make reference` rewrites each block between its markers; test/unit/flag-table.test.ts fails
// when the page and the tables differ (an option added to a table and not to the page, or the other way round).
//   node --import tsx scripts/reference-flags.ts          rewrite docs/reference.md
import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { FlagTable } from "../src/cli/parse-args.js";
import { flagArg } from "../src/cli/help.js";
import { STEP_FLAGS, TEKTON_FEATURE_FLAGS } from "../src/cli/step-flags.js";
import { SIDECAR_FLAGS } from "../src/sidecar/flags.js";

export const REFERENCE = resolve(import.meta.dirname, "../docs/reference.md");

/** The blocks of docs/reference.md, by the name in their markers. */
export const TABLES: Readonly<Record<string, FlagTable>> = { STEP_FLAGS, TEKTON_FEATURE_FLAGS, SIDECAR_FLAGS };

/** A Markdown table of the options: `--name ARG`, then the reference line and the default. */
export function renderTable(table: FlagTable): string {
  const escape = (text: string) => text.replaceAll("|", "\\|");
  const rows = table.map((flag) => {
    const label = `\`--${flag.name}${flagArg(flag) ? ` ${flagArg(flag)}` : ""}\``;
    const meaning = flag.default === undefined ? flag.reference : `${flag.reference}. Default \`${flag.default}\``;
    return `| ${escape(label)} | ${escape(meaning)} |`;
  });
  return ["| option | meaning |", "|---|---|", ...rows].join("\n");
}

const BLOCK = /(<!-- options: (\w+), written by scripts\/reference-flags\.ts from src\/; edit them there -->\n)[^]*?(\n<!-- end of options -->)/g;

/** `text` with each block of options written anew from its table; throws on a block naming no table. */
export function writeTables(text: string): string {
  return text.replace(BLOCK, (_, start: string, name: string, end: string) => {
    const table = TABLES[name];
    if (table === undefined) throw new Error(`docs/reference.md names an option table that does not exist: ${name}`);
    return `${start}${renderTable(table)}${end}`;
  });
}

/** The names of the blocks in `text`, in order. */
export function blockNames(text: string): string[] {
  return [...text.matchAll(BLOCK)].map((match) => match[2]!);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  writeFileSync(REFERENCE, writeTables(readFileSync(REFERENCE, "utf8")));
}
