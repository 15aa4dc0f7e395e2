// The functions that scripts/eager-functions.mjs lists are compiled with the bundle, at start-up, never at their first
// call on the wake-up or hand-on path (docs/design.md#eager-functions). V8's own log of a step's compiles
// (--log-function-events) says which functions it compiled lazily: each lazy compile is a `parse-function` at the
// function's offset in the bundle's program (which its guard compiles: scripts/bundle-guard.cjs), which the bundle's
// source map turns into a line of src/.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { SourceMap } from "node:module";
import { relative, resolve } from "node:path";
import { EAGER_FUNCTIONS, eagerFunctionsIn } from "../../scripts/eager-functions.mjs";
import { BATON, cleanEnv, eventSeen, join, startBaton, tempDir } from "./helpers.js";
import { bundleLayout } from "../../scripts/bundle-layout.mjs";

const SRC = resolve(import.meta.dirname, "../../src");

/** "step/run-step.ts:203": the line of src/ where each of `names` of `file` (a path under src/) is named. */
function linesOf(file: string, names: readonly string[]): string[] {
  const { source, functions } = eagerFunctionsIn(file, readFileSync(join(SRC, file), "utf8"), names);
  return functions.map((node) => `${file}:${source.getLineAndCharacterOfPosition(node.name!.getStart(source)).line + 1}`);
}

/** Where the step's command phase begins ("step/run-step.ts:205"): its first run marks the end of the wait in V8's log. */
const RUN_COMMAND = linesOf("step/run-step.ts", ["runCommand"])[0]!;

/** "step/run-step.ts:203" for each function scripts/eager-functions.mjs lists. */
function eagerDeclarations(): Set<string> {
  return new Set([...EAGER_FUNCTIONS].flatMap(([file, names]) => linesOf(relative("src", file), names)));
}

/** V8's function events on the bundle's program, each with the line of src/ it maps to and its own line in the log. */
function bundleFunctionEvents(log: string): { event: string; at: string; line: number }[] {
  const text = bundleLayout(readFileSync(BATON, "latin1")).program;
  const map = new SourceMap(JSON.parse(readFileSync(`${BATON}.map`, "utf8")));
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) lineStarts.push(i + 1);
  const lines = log.split("\n").map((line) => line.split(","));
  // Two scripts have the bundle's name: the guard (the file as Node read it), then the program it compiles.
  const script = lines.filter((f) => f[0] === "script-details" && f[2] === BATON).at(-1)?.[1];
  assert.ok(script, `V8's log names no script ${BATON}`);
  const events: { event: string; at: string; line: number }[] = [];
  lines.forEach(([kind, event, id, start], logLine) => {
    if (kind !== "function" || id !== script) return;
    const offset = Number(start);
    let line = 0;
    while (line + 1 < lineStarts.length && lineStarts[line + 1]! <= offset) line++;
    const entry = map.findEntry(line, offset - lineStarts[line]!) as { originalSource?: string; originalLine?: number };
    if (!entry.originalSource) return;
    events.push({ event: event!, at: `${relative(SRC, resolve(resolve(BATON, ".."), entry.originalSource))}:${entry.originalLine! + 1}`, line: logLine });
  });
  return events;
}

test("the functions scripts/eager-functions.mjs lists are compiled with the bundle, not at their first call", async () => {
  const dir = tempDir();
  const log = join(dir, "v8.log");
  const events = join(dir, "events.jsonl");
  const baton = startBaton(["--wait-file", join(dir, "prev"), "--post-file", join(dir, "post"), "--", "true"], {
    baton: [process.execPath, "--log-function-events", `--logfile=${log}`, "--no-logfile-per-isolate", BATON],
    env: cleanEnv({ BATON_EVENTS: events }),
  });
  // Past start-up's deferred work (the spawn's preparation, the inspector guard's second look, the trim): what is
  // compiled after the wake is then the wake-up and hand-on paths' own.
  await eventSeen(events, "trimmed");
  writeFileSync(join(dir, "prev"), "");
  const exit = await baton.exited;
  assert.equal(exit.code, 0, exit.stderr);

  const tagged = eagerDeclarations();
  // With nothing listed (the list moved or emptied), the two checks below would pass on nothing.
  assert.ok(tagged.size > 0, "scripts/eager-functions.mjs lists no function: the check below would look at nothing");
  const seen = bundleFunctionEvents(readFileSync(log, "utf8"));
  // Each tagged function's bytecode is in the log (an `interpreter` event at its line): the log and the map agree.
  const compiled = new Set(seen.filter((e) => e.event === "interpreter" && tagged.has(e.at)).map((e) => e.at));
  const missing = [...tagged].filter((at) => !compiled.has(at));
  assert.deepEqual(missing, [], `listed eager, but no compile of them in V8's log: ${missing.join(", ")}`);
  const lazy = [...new Set(seen.filter((e) => e.event === "parse-function" && tagged.has(e.at)).map((e) => e.at))];
  assert.deepEqual(lazy, [], `compiled at their first call, though listed eager: ${lazy.join(", ")}`);
  // And none of the bundle is compiled at its first call once the wait is over (from runCommand's first run to the
  // exit): a function added to either path and not to the list is caught here.
  const woke = seen.findIndex((e) => e.event === "first-execution" && e.at === RUN_COMMAND);
  assert.ok(woke >= 0, `no first run of ${RUN_COMMAND} in V8's log`);
  const afterWake = [...new Set(seen.slice(woke).filter((e) => e.event === "parse-function").map((e) => e.at))];
  assert.deepEqual(afterWake, [], `compiled at their first call after the wait: ${afterWake.join(", ")}`);

  // Node's own code too: a step without --cancel-file aborts no AbortController (the first abort() compiles Node's
  // AbortController and DOMException code, ~0.5 ms, which sat between the command's exit and the post file).
  const aborts = nodeFunctionEvents(readFileSync(log, "utf8"), "node:internal/abort_controller", "abort").filter((e) => e === "first-execution");
  assert.deepEqual(aborts, [], "a step with no cancel file aborted an AbortController");
});

test("a plain step that has waited compiles nothing with V8's baseline compiler, and loads no Node built-in, after its wait", async () => {
  // The step turns the baseline compiler off when it trims (src/process/baseline-compiler.ts). That changes V8's flag
  // hash, so a Node built-in loaded after it would compile without its code cache: none may load on the hand-on path.
  const dir = tempDir();
  const log = join(dir, "v8.log");
  const events = join(dir, "events.jsonl");
  const baton = startBaton(["--wait-file", join(dir, "prev"), "--post-file", join(dir, "post"), "--", "true"], {
    // --log-code: each piece of code V8 makes, baseline code marked `^` (Node 20's log has no `baseline` function event).
    baton: [process.execPath, "--log-function-events", "--log-code", `--logfile=${log}`, "--no-logfile-per-isolate", BATON],
    env: cleanEnv({ BATON_EVENTS: events }),
  });
  const trimmed = await eventSeen(events, "trimmed");
  assert.equal(trimmed.compilerOff, true, "the step did not turn the baseline compiler off");
  writeFileSync(join(dir, "prev"), "");
  const exit = await baton.exited;
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(exit.stderr, "", "V8 said something about the flag");

  const text = readFileSync(log, "utf8");
  const woke = bundleFunctionEvents(text).find((e) => e.event === "first-execution" && e.at === RUN_COMMAND);
  assert.ok(woke, `no first run of ${RUN_COMMAND} in V8's log`);
  const after = text.split("\n").slice(woke.line).map((line) => line.split(","));
  const baseline = after.filter((f) => f[0] === "code-creation" && f[1] === "JS" && f.at(-1) === "^").map((f) => f[6]);
  assert.deepEqual(baseline, [], `baseline-compiled after the wait: ${baseline.join(", ")}`);
  const builtins = after.filter((f) => f[0] === "script-details" && f[2]!.startsWith("node:")).map((f) => f[2]);
  assert.deepEqual(builtins, [], `Node built-ins loaded after the wait: ${builtins.join(", ")}`);
});

// Each of these loads code after its wait that a changed V8 flag would make compile without Node's code cache.
for (const [name, options, env] of [
  // A $(steps...) reference the step substitutes after its wait, with the Tekton chunk's code.
  ["a step with Tekton's features", [], { SOME_PATH: "$(steps.step-a.exitCode.path)" }],
  // zlib, loaded on the hand-on path to compress the termination message.
  ["a step with a compressed termination message", ["--compress-termination-message"], {}],
] as const) {
  test(`${name} keeps the baseline compiler`, async () => {
    const dir = tempDir();
    const events = join(dir, "events.jsonl");
    const baton = startBaton([...options, "--wait-file", join(dir, "prev"), "--post-file", join(dir, "post"), "--", "true"], {
      env: cleanEnv({ BATON_EVENTS: events, ...env }),
    });
    const trimmed = await eventSeen(events, "trimmed");
    assert.equal(trimmed.compilerOff, false);
    writeFileSync(join(dir, "prev"), "");
    assert.equal((await baton.exited).code, 0);
  });
}

/** V8's function events (parse-function, first-execution, ...) for the functions named `name` of Node's `script`. */
function nodeFunctionEvents(log: string, script: string, name: string): string[] {
  const lines = log.split("\n").map((line) => line.split(","));
  const ids = new Set(lines.filter((f) => f[0] === "script-details" && f[2] === script).map((f) => f[1]));
  return lines.filter((f) => f[0] === "function" && ids.has(f[2]!) && f[7] === name).map((f) => f[1]!);
}
