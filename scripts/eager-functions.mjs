// The functions of src/ that V8 compiles with the bundle, at start-up, instead of at their first call: every function
// that runs for the first time on the two paths a step pays for after it has waited (docs/design.md#eager-functions).
// V8 compiles a function literal that follows a `(` with the code around it (the heuristic for a function invoked at
// once), so the build (scripts/build.mjs) wraps each function listed here in parentheses: a declaration
// `function f(...) {...}` becomes `const f = (function f(...) {...});`, an expression `function f() {}` given as an
// argument or a property becomes `(function f() {})`. The sources stay plain functions; this list is the one place
// that says which are eager, and test/integration/eager-functions.test.ts holds it to its word on each Node (none of
// them is compiled at its first call, and nothing else is after the wait).
//
// A function added to either path (a new call between the post file and the spawn, or between the command's exit and
// the post file) goes here, by its own name in its file (a name can be listed once per file; an arrow function has
// none: write it as `function name`). A declaration listed here is turned into a `const`: call it only after its line
// while its module (or the function around it) runs; a call from inside another function is fine.
import ts from "typescript";

/** From the post file to posix_spawn: the waiter's look and the command's start. */
const WAKE_UP_PATH = {
  "src/handoff/watch-folder.ts": ["onEvents", "runEffect", "nextTurn", "arm"],
  "src/handoff/watch-hand-off.ts": ["runEffect", "findWriter", "writerLetGo", "lookOnce", "stopWatchingFolder"],
  "src/process/kept-env.ts": ["launcherKept", "commandEnv", "keptEntryBytes"],
  "src/process/trim-memory.ts": ["clear"],
  "src/run/children.ts": ["trackChild"],
  "src/run/exact-bytes.ts": ["exactBytes"],
  "src/run/reaper.ts": ["shouldBecomeSubreaper", "startReaping"],
  "src/run/run-command.ts": ["startCommand", "settleOnExit"],
  // pipeReader: a plain step calls it too, with -1.
  "src/run/start-process.ts": ["spawnProcess", "addonPipes", "addonOrUndefined", "textLaunch", "startWithAddon", "holdsNul", "startedByAddon", "pipeReader"],
  "src/step/features.ts": ["decideCommand"],
  "src/step/run-step.ts": ["runCommand"],
  "src/step/start-step-command.ts": ["startStepCommand"],
  "src/step/stop-conditions.ts": ["waitOver", "started"],
  "src/trace/load.ts": ["traceCommand"],
};

/** From the command's exit to the post file and `_exit`, and the wait's tidy-up once the command has started. */
const HAND_ON_PATH = {
  "src/main.ts": ["end", "finish"],
  "src/base/atomic-write.ts": ["writeFileAtomic"],
  "src/base/clock.ts": ["monotonicMs"],
  "src/base/safe-files.ts": ["createTemporaryBeside", "writeAll"],
  "src/base/spare-descriptor.ts": ["releaseDescriptor"],
  "src/handoff/liveness-lock.ts": ["releaseLivenessLock", "letWaitersStart", "removeWakeFifo", "loadAddonOrUndefined", "closeQuietly"],
  "src/handoff/post-file.ts": ["postFilePath", "writePostFile", "removeIfPresent"],
  "src/handoff/watch-folder.ts": ["close", "stopInotify"],
  "src/handoff/watch-hand-off.ts": ["tidyUp"],
  "src/process/exit.ts": ["exitBaton", "profiled"],
  "src/process/step-aside.ts": ["stepAside"],
  "src/run/children.ts": ["untrack"],
  "src/run/exit-code.ts": ["exitCodeOf"],
  "src/run/run-command.ts": ["onExit", "afterStop"],
  "src/run/start-process.ts": ["collect"],
  "src/step/hand-on.ts": ["handOn"],
  "src/step/outcome.ts": ["decideOutcome", "batonExitCode"],
  "src/step/start-step-command.ts": ["copied"],
  "src/step/stop-conditions.ts": ["stoppedFor", "clear"],
  "src/trace/load.ts": ["tracing"],
  "src/base/trace-marks.ts": ["mark"],
};

/** Each file of src/ (its path from the repository's root) -> the names of its eager functions. */
export const EAGER_FUNCTIONS = new Map();
for (const path of [WAKE_UP_PATH, HAND_ON_PATH]) {
  for (const [file, names] of Object.entries(path)) EAGER_FUNCTIONS.set(file, [...(EAGER_FUNCTIONS.get(file) ?? []), ...names]);
}

/**
 * Each function of `text` named in `names`, as the syntax tree has it; throws when a name is missing or found more than
 * once.
 */
export function eagerFunctionsIn(file, text, names) {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found = new Map(names.map((name) => [name, []]));
  const visit = (node) => {
    if ((ts.isFunctionDeclaration(node) || ts.isFunctionExpression(node)) && node.name && found.has(node.name.text)) found.get(node.name.text).push(node);
    ts.forEachChild(node, visit);
  };
  visit(source);
  for (const [name, nodes] of found) {
    if (nodes.length !== 1) throw new Error(`scripts/eager-functions.mjs: ${file} has ${nodes.length} functions named ${name} (one is listed)`);
    const [node] = nodes;
    if (node.modifiers?.some((m) => m.kind === ts.SyntaxKind.DefaultKeyword)) throw new Error(`scripts/eager-functions.mjs: ${file}: ${name} is a default export`);
  }
  return { source, functions: [...found.values()].map(([node]) => node) };
}

/** `text` with its listed functions wrapped in parentheses; only insertions within lines, so every line stays where it was. */
export function makeEager(file, text, names) {
  const { source, functions } = eagerFunctionsIn(file, text, names);
  const inserts = [];
  for (const node of functions) {
    if (ts.isFunctionExpression(node)) {
      if (ts.isParenthesizedExpression(node.parent)) continue;
      inserts.push([node.getStart(source), "("], [node.end, ")"]);
      continue;
    }
    // `export async function f<T>(...) {...}` -> `export const f = (async function f<T>(...) {...});`
    const async = node.modifiers?.find((m) => m.kind === ts.SyntaxKind.AsyncKeyword);
    const keyword = node.getChildren(source).find((child) => child.kind === ts.SyntaxKind.FunctionKeyword);
    inserts.push([(async ?? keyword).getStart(source), `const ${node.name.text} = (`], [node.end, ");"]);
  }
  inserts.sort((a, b) => b[0] - a[0]);
  let out = text;
  for (const [at, insert] of inserts) out = out.slice(0, at) + insert + out.slice(at);
  return out;
}

/**
 * The esbuild plugin: each listed file is loaded with its eager functions wrapped. `loaded` gathers the listed files
 * the builds took in (a file listed but never built is a mistake of the list).
 */
export function eagerFunctionsPlugin(root, loaded) {
  return {
    name: "baton-eager-functions",
    setup(build) {
      build.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, async (args) => {
        const file = args.path.startsWith(`${root}/`) ? args.path.slice(root.length + 1) : args.path;
        const names = EAGER_FUNCTIONS.get(file);
        if (names === undefined) return undefined;
        loaded.add(file);
        const { readFile } = await import("node:fs/promises");
        return { contents: makeEager(file, await readFile(args.path, "utf8"), names), loader: "ts" };
      });
    },
  };
}
