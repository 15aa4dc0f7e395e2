// Each option is declared once, in a table (src/cli/step-flags.ts, src/sidecar/flags.ts); these checks fail when the
// parser, the help, Tekton's spelling or docs/reference.md drift from it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { type Flag, type FlagTable } from "../../src/cli/parse-args.js";
import { stepHelp } from "../../src/cli/help.js";
import { ALL_STEP_FLAGS, STEP_FLAGS, TEKTON_FEATURE_FLAGS } from "../../src/cli/step-flags.js";
import { parseStepOptions } from "../../src/cli/step-options.js";
import { translateTektonArgv } from "../../src/cli/tekton-argv.js";
import { SIDECAR_FLAGS } from "../../src/sidecar/flags.js";
import { sidecarHelp } from "../../src/sidecar/main.js";
import { parseSidecarOptions } from "../../src/sidecar/options.js";
import { blockNames, REFERENCE, renderTable, TABLES, writeTables } from "../../scripts/reference-flags.js";

const reference = readFileSync(REFERENCE, "utf8");

test("docs/reference.md's option tables are the tables in src/ (make reference writes them)", () => {
  assert.deepEqual(blockNames(reference).sort(), Object.keys(TABLES).sort(), "one block per table in docs/reference.md");
  for (const [name, table] of Object.entries(TABLES)) {
    assert.ok(reference.includes(renderTable(table)), `docs/reference.md's ${name} block is not the table in src/: run make reference`);
  }
  assert.equal(writeTables(reference), reference, "docs/reference.md differs from the tables in src/: run make reference");
});

test("the rendering catches an option added to a table and not to the page, or left on the page", () => {
  const extra: Flag = { name: "new-option", kind: "flag", help: "h", reference: "r" };
  const grown = { ...TABLES, STEP_FLAGS: [...STEP_FLAGS, extra] };
  assert.ok(!reference.includes(renderTable(grown.STEP_FLAGS)), "a table with one more option no longer matches the page");
  assert.ok(!reference.includes(renderTable(STEP_FLAGS.slice(1))), "a table with one less option no longer matches the page");
});

test("every option has a help line, a reference line, a unique name; every Tekton spelling is unique", () => {
  for (const table of [ALL_STEP_FLAGS, SIDECAR_FLAGS]) {
    const names = table.map((f) => f.name);
    assert.equal(new Set(names).size, names.length, `a name twice: ${names.join(" ")}`);
    for (const flag of table) {
      assert.match(flag.name, /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/, flag.name);
      assert.ok(flag.help.length > 0 && !flag.help.includes("\n"), `--${flag.name}: one help line`);
      assert.ok(flag.reference.length > 0 && !flag.reference.includes("\n"), `--${flag.name}: one reference line`);
      assert.equal(flag.kind === "flag", flag.arg === undefined && flag.choices === undefined, `--${flag.name}: a value has a name, a flag none`);
    }
  }
  const tekton = ALL_STEP_FLAGS.flatMap((f) => (f.tekton ? [f.tekton] : []));
  assert.equal(new Set(tekton).size, tekton.length);
});

test("--help and sidecar --help print one line for each option of their table, and no other option line", () => {
  const optionLines = (help: string) => help.split("\n").filter((line) => /^ {2}--[a-z]/.test(line)).map((line) => line.trim().split(" ")[0]);
  assert.deepEqual(optionLines(stepHelp()), [...STEP_FLAGS, ...TEKTON_FEATURE_FLAGS].map((f) => `--${f.name}`));
  assert.deepEqual(optionLines(sidecarHelp()), SIDECAR_FLAGS.map((f) => `--${f.name}`));
  for (const flag of [...ALL_STEP_FLAGS, ...SIDECAR_FLAGS]) {
    if (flag.default !== undefined) assert.ok(stepHelp().includes(`(default ${flag.default})`) || sidecarHelp().includes(`(default ${flag.default})`), flag.name);
  }
});

/** A value of the option that is not its default, for the checks below. */
function sample(flag: Flag): string[] {
  if (flag.kind === "flag") return [`--${flag.name}`];
  const value = flag.choices?.find((c) => c !== flag.default)
    ?? { DURATION: "7s", NAMES: "a,b", SIG: "SIGINT", PROBE: "tcp:127.0.0.1:5432", URL: "http://127.0.0.1:1/x", JSON: "[]" }[flag.arg!]
    ?? "/some/path";
  return [`--${flag.name}`, value];
}

/** Each option of the table changes what the parser gives: none is declared and left unread. */
function eachOptionIsRead(table: FlagTable, parse: (args: string[]) => unknown, base: string[], command: string[]) {
  const without = parse([...base, "--", ...command]);
  for (const flag of table) {
    // An option given in `base` too is given again, with another value: the last one (or one more) is read.
    assert.notDeepEqual(parse([...base, ...sample(flag), "--", ...command]), without, `--${flag.name} is in the table but the parser does not read it`);
  }
}

test("the parser reads every option of its table", () => {
  eachOptionIsRead(ALL_STEP_FLAGS, (args) => parseStepOptions(args, {}), ["--post-file", "/p"], ["true"]);
  eachOptionIsRead(SIDECAR_FLAGS, (args) => parseSidecarOptions(args, {}), ["--stop-file", "/s", "--ready-probe", "file:/r", "--ready-file", "/r"], ["true"]);
});

test("a default the table states is the one the parser uses; choices are the values accepted", () => {
  const cases: [FlagTable, (args: string[]) => unknown, string[]][] = [
    [ALL_STEP_FLAGS, (args) => parseStepOptions(args, {}), ["--", "true"]],
    [SIDECAR_FLAGS, (args) => parseSidecarOptions(args, {}), ["--stop-file", "/s", "--", "true"]],
  ];
  let defaults = 0;
  for (const [table, parse, base] of cases) {
    for (const flag of table) {
      if (flag.default !== undefined) {
        defaults++;
        assert.deepEqual(parse([`--${flag.name}`, flag.default, ...base]), parse(base), `--${flag.name}'s default is not ${flag.default}`);
      }
      for (const choice of flag.choices ?? []) parse([`--${flag.name}`, choice, ...base]);
      if (flag.choices) assert.throws(() => parse([`--${flag.name}`, "other", ...base]), new RegExp(`invalid --${flag.name} "other": use ${flag.choices.join(" or ")}`));
    }
  }
  assert.ok(defaults >= 4);
});

test("every Tekton spelling in the table becomes its option", () => {
  let spelled = 0;
  for (const flag of ALL_STEP_FLAGS) {
    if (flag.tekton === undefined) continue;
    spelled++;
    const [option, value] = sample(flag);
    const words = value === undefined ? [`-${flag.tekton}`] : [`-${flag.tekton}`, flag.tekton === "result_from" ? "sidecar-logs" : value];
    const translated = translateTektonArgv([...words, "-entrypoint", "true", "--"], {});
    assert.equal(translated.kind, "step");
    assert.ok(translated.kind === "step" && translated.argv.includes(option!), `-${flag.tekton} does not become ${option}`);
  }
  assert.ok(spelled >= 20);
});

test("docs/tekton.md's table of Tekton's flags names every Tekton spelling in the table, and only flags the translation knows", () => {
  const page = readFileSync(REFERENCE.replace("reference.md", "tekton.md"), "utf8");
  const rows = page.split("\n").filter((line) => line.startsWith("| `-"));
  const named = new Set(rows.flatMap((row) => [...row.split(" | ")[0]!.matchAll(/`--?([a-z][\w-]*)/g)].map((m) => m[1]!)));
  const spelled = ALL_STEP_FLAGS.flatMap((f) => (f.tekton ? [f.tekton] : []));
  assert.deepEqual(spelled.filter((name) => !named.has(name)), [], "Tekton spellings of the table missing from docs/tekton.md");
  for (const name of named) {
    // Known (a step), or refused by name as not Tekton's (exit 2) or as SPIRE (exit 1): never "unknown".
    try {
      translateTektonArgv([`-${name}=x`, "-entrypoint", "true", "--"], {});
    } catch (error) {
      assert.doesNotMatch((error as Error).message, /unknown Tekton entrypoint flag/, `docs/tekton.md names -${name}`);
    }
  }
  assert.ok(named.size >= spelled.length);
});
