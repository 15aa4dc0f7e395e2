// Conformance scenarios: waiting, results, step results and artifacts, `$(steps...)`, when, the termination message's
// compression and sidecar logs, the debug breakpoints, output files, timeout and cancel, and the subcommands. Run by
// tekton.test.ts.
import { step } from "./tekton-basics.js";
import { READY, STEP, type Running, type Scenario } from "./tekton-run.js";

const PREV = "/tekton/run/prev/out";
const waiting = (run: Running) => run.waiting();
const resultsDir = { results: { dir: true as const } };
/** /tekton/bin: an emptyDir in the pod, where `init` copies the entrypoint. */
const bin = { bin: { dir: true as const } };
const base64 = (text: string) => Buffer.from(text).toString("base64");

export const features: Scenario[] = [
  // -wait_file and -wait_file_content
  { id: "wait-file-there", args: step(["-wait_file", PREV], "report"), files: { "run/prev/out": "" } },
  { id: "wait-file-err-there", args: step(["-wait_file", PREV], "report"), files: { "run/prev/out.err": "" } },
  { id: "wait-file-and-err-there", args: step(["-wait_file", PREV], "report"), files: { "run/prev/out": "", "run/prev/out.err": "" } },
  {
    id: "wait-file-appears",
    args: step(["-wait_file", PREV], "report"),
    during: async (run) => (await waiting(run), run.write(PREV, "")),
  },
  {
    id: "wait-file-err-appears",
    args: step(["-wait_file", PREV], "report"),
    during: async (run) => (await waiting(run), run.write(`${PREV}.err`, "")),
  },
  {
    id: "wait-file-list",
    args: step(["-wait_file", "/tekton/run/a/out,/tekton/run/b/out"], "report"),
    files: { "run/a/out": "" },
    during: async (run) => (await waiting(run), run.write("/tekton/run/b/out", "")),
  },
  {
    id: "wait-file-list-second-err",
    args: step(["-wait_file", "/tekton/run/a/out,/tekton/run/b/out"], "report"),
    files: { "run/a/out": "", "run/b/out.err": "" },
  },
  { id: "wait-file-list-empty-items", args: step(["-wait_file", ","], "report") },
  { id: "wait-file-empty", args: step(["-wait_file", ""], "report") },
  {
    id: "wait-file-content",
    args: step(["-wait_file", "/tekton/downward/ready", "-wait_file_content"], "report"),
    files: { "downward/ready": "" },
    during: async (run) => (await waiting(run), run.write("/tekton/downward/ready", "READY")),
  },
  { id: "wait-file-content-there", args: step(["-wait_file", PREV, "-wait_file_content"], "report"), files: { "run/prev/out": "x" } },
  {
    id: "wait-file-content-empty-err",
    args: step(["-wait_file", PREV, "-wait_file_content"], "report"),
    files: { "run/prev/out": "", "run/prev/out.err": "" },
  },
  {
    id: "wait-file-err-breakpoint",
    args: step(["-wait_file", PREV, "-breakpoint_on_failure"], "report"),
    files: { "run/prev/out.err": "" },
  },
  // -results, -step_results, artifacts
  {
    id: "results",
    args: step(["-results", "a,b"], "file", "/tekton/results/a", "value a", "file", "/tekton/results/b", '["x","y"]'),
    files: resultsDir,
  },
  { id: "results-one-missing", args: step(["-results", "a,missing"], "file", "/tekton/results/a", "value a"), files: resultsDir },
  { id: "results-empty-file", args: step(["-results", "a"], "file", "/tekton/results/a", ""), files: resultsDir },
  { id: "results-empty-flag", args: step(["-results", ""], "report"), files: resultsDir },
  { id: "results-too-large", args: step(["-results", "a"], "file", "/tekton/results/a", "x".repeat(5000)), files: resultsDir },
  { id: "results-failed-step", args: step(["-results", "a"], "file", "/tekton/results/a", "value", "exit", "1"), files: resultsDir },
  {
    id: "results-on-error-continue",
    args: step(["-results", "a", "-on_error", "continue"], "file", "/tekton/results/a", "value", "exit", "1"),
    files: resultsDir,
  },
  {
    id: "results-trailing-newline",
    args: step(["-results", "a"], "file", "/tekton/results/a", "line\n"),
    files: resultsDir,
  },
  {
    id: "step-results",
    args: step(["-step_results", "x,y"], "file", "/tekton/run/0/status/results/x", '{"k":"v"}'),
  },
  {
    id: "step-and-task-results",
    args: step(["-results", "a", "-step_results", "x"], "file", "/tekton/results/a", "A", "file", "/tekton/run/0/status/results/x", "X"),
    files: resultsDir,
  },
  {
    id: "artifacts",
    args: step([], "file", "/tekton/run/0/status/artifacts/provenance.json", '{"outputs":[{"name":"image","values":[{"uri":"u","digest":{"sha256":"d"}}]}]}'),
    files: { "artifacts/provenance.json": '{"inputs":[]}' },
  },
  {
    id: "result-from-sidecar-logs",
    args: step(["-result_from", "sidecar-logs", "-results", "a", "-step_results", "x"], "file", "/tekton/results/a", "A", "file", "/tekton/run/0/status/results/x", "X"),
    files: resultsDir,
  },
  {
    id: "compress-smaller",
    args: step(["-compress_termination_message", "-results", "a"], "file", "/tekton/results/a", "abc".repeat(400)),
    files: resultsDir,
  },
  {
    id: "compress-too-large-even-compressed",
    args: step(["-compress_termination_message", "-results", "a"], "file", "/tekton/results/a", Array.from({ length: 1500 }, (_, i) => ((i * 2654435761) >>> 0).toString(36)).join("")),
    files: resultsDir,
  },
  {
    id: "step-results-too-large",
    args: step(["-step_results", "x"], "file", "/tekton/run/0/status/results/x", "y".repeat(5000)),
  },
  {
    id: "result-from-sidecar-logs-too-large",
    args: step(["-result_from", "sidecar-logs", "-results", "a"], "file", "/tekton/results/a", "z".repeat(5000)),
    files: resultsDir,
  },
  { id: "compress-larger-stays-json", args: step(["-compress_termination_message"], "report") },
  {
    id: "compress-fits-only-compressed",
    args: step(["-compress_termination_message=true", "-results", "a"], "file", "/tekton/results/a", "abcd".repeat(2000)),
    files: resultsDir,
  },
  // $(steps.<step>.results.<name>) in the command, its arguments and environment
  {
    id: "steps-reference",
    args: [...STEP, "-entrypoint", "PROBE", "--", "report", "stop", "$(steps.first.results.foo)", "x-$(steps.first.results.foo)-y"],
    env: { FROM_STEP: "$(steps.first.results.foo)" },
    files: { "steps/step-first/results/foo": "hello" },
  },
  {
    id: "steps-reference-array",
    args: [...STEP, "-entrypoint", "PROBE", "--", "report", "stop", "$(steps.first.results.list[*])", "$(steps.first.results.list[1])"],
    files: { "steps/step-first/results/list": '["a","b","c"]' },
  },
  {
    id: "steps-reference-object",
    args: [...STEP, "-entrypoint", "PROBE", "--", "report", "stop", "$(steps.first.results.obj.k)"],
    files: { "steps/step-first/results/obj": '{"k":"v","l":"w"}' },
  },
  {
    id: "steps-reference-json-string",
    args: [...STEP, "-entrypoint", "PROBE", "--", "report", "stop", "$(steps.first.results.s)"],
    files: { "steps/step-first/results/s": '"quoted"' },
  },
  {
    id: "steps-reference-missing",
    args: [...STEP, "-entrypoint", "PROBE", "--", "report", "stop", "$(steps.nobody.results.foo)"],
  },
  {
    id: "steps-reference-through-link",
    args: [...STEP, "-entrypoint", "PROBE", "--", "report", "stop", "$(steps.first.results.foo)"],
    files: { "steps/step-first": { symlink: "/tekton/run/9/status" }, "run/9/status/results/foo": "linked" },
  },
  {
    id: "steps-reference-index-out-of-range",
    args: [...STEP, "-entrypoint", "PROBE", "--", "report", "stop", "$(steps.first.results.list[5])"],
    files: { "steps/step-first/results/list": '["a","b"]' },
  },
  {
    id: "steps-reference-in-env-only",
    args: step([], "report"),
    env: { A: "$(steps.first.results.foo)", B: "plain" },
    files: { "steps/step-first/results/foo": "from env" },
  },
  // $(steps.<step>.outputs|inputs.<artifact>): the values of an earlier step's provenance.json, as JSON
  {
    id: "steps-artifact-reference",
    args: [...STEP, "-entrypoint", "PROBE", "--", "report", "stop", "$(steps.first.outputs.image)", "$(steps.first.inputs.source)"],
    files: {
      "steps/step-first/artifacts/provenance.json":
        '{"inputs":[{"name":"source","values":[{"uri":"git:x","digest":{"sha1":"a"}}]}],"outputs":[{"name":"image","values":[{"uri":"oci:y","digest":{"sha256":"b"}}]}]}',
    },
  },
  {
    id: "steps-artifact-reference-missing",
    args: [...STEP, "-entrypoint", "PROBE", "--", "report", "stop", "$(steps.first.outputs.none)"],
    files: { "steps/step-first/artifacts/provenance.json": '{"outputs":[]}' },
  },
  // A script step: the controller's command is /tekton/scripts/<name>; $(steps...) in it is replaced in a copy
  {
    id: "steps-reference-in-script",
    args: [...STEP, "-entrypoint", "/tekton/scripts/script-0", "--"],
    files: {
      "steps/step-first/results/foo": "hello",
      "steps/step-first/artifacts/provenance.json": '{"outputs":[{"name":"image","values":[{"uri":"oci:y"}]}]}',
      "/tekton/scripts/script-0": { content: `#!/bin/sh\necho '$(steps.first.results.foo)'\necho '$(steps.first.outputs.image)'\necho "$0" >&2\n`, mode: 0o755 },
    },
  },
  // The cancel file while the step still waits for the one before it. Tekton's entrypoint watches it only once the
  // command runs: when no POST.err shows the cancel within 3 s, the wait file comes, so that the run ends.
  {
    id: "cancel-while-waiting",
    args: step(["-wait_file", PREV], "sleep", "20000"),
    files: { "downward/cancel": "" },
    during: async (run) => {
      await waiting(run);
      run.write("/tekton/downward/cancel", "CANCEL");
      if (!(await run.appearsWithin("/tekton/run/0/out.err", 3000))) run.write(PREV, "");
    },
  },
  // -when_expressions
  { id: "when-in-true", args: step(["-when_expressions", '[{"input":"a","operator":"in","values":["a","b"]}]'], "report") },
  { id: "when-in-false", args: step(["-when_expressions", '[{"input":"a","operator":"in","values":["b"]}]'], "report") },
  { id: "when-notin", args: step(["--when_expressions", '[{"input":"a","operator":"notin","values":["a"]}]'], "report") },
  { id: "when-cel-true", args: step(["-when_expressions", '[{"cel":"1 + 1 == 2"}]'], "report") },
  { id: "when-cel-false", args: step(["-when_expressions", "[{\"cel\":\"'a' == 'b'\"}]"], "report") },
  { id: "when-empty-list", args: step(["-when_expressions", "[]"], "report") },
  { id: "when-cel-type-error", args: step(["-when_expressions", "[{\"cel\":\"1 == 'a'\"}]"], "report") },
  { id: "when-cel-not-bool", args: step(["-when_expressions", '[{"cel":"1 + 1"}]'], "report") },
  { id: "when-unknown-operator", args: step(["-when_expressions", '[{"input":"a","operator":"bogus","values":["a"]}]'], "report") },
  { id: "when-two-one-false", args: step(["-when_expressions", '[{"input":"a","operator":"in","values":["a"]},{"input":"b","operator":"in","values":["a"]}]'], "report") },
  { id: "when-bad-json", args: step(["-when_expressions", "[{"], "report") },
  {
    id: "when-steps-reference",
    args: step(["-when_expressions", '[{"input":"$(steps.first.results.foo)","operator":"in","values":["hello"]}]'], "report"),
    files: { "steps/step-first/results/foo": "hello" },
  },
  // -breakpoint_on_failure and -debug_before_step, with the files Tekton's debug scripts write
  {
    id: "breakpoint-on-failure-exit-file",
    args: step(["-breakpoint_on_failure"], "exit", "1"),
    files: { "run/0/out.breakpointexit": "3" },
  },
  {
    id: "breakpoint-on-failure-continue-later",
    args: step(["-breakpoint_on_failure"], "ready", READY, "exit", "1"),
    during: async (run) => (await run.appears(READY), run.write("/tekton/run/0/out.breakpointexit", "0")),
  },
  { id: "breakpoint-on-failure-success", args: step(["-breakpoint_on_failure"], "report") },
  {
    id: "breakpoint-on-failure-not-found",
    args: [...STEP, "-breakpoint_on_failure", "-entrypoint", "/tekton/ws/missing", "--"],
    files: { "run/0/out.breakpointexit": "5" },
  },
  { id: "debug-before-step-continue", args: step(["-debug_before_step"], "report"), files: { "run/0/out.beforestepexit": "0" } },
  { id: "debug-before-step-fail", args: step(["-debug_before_step"], "report"), files: { "run/0/out.beforestepexit.err": "" } },
  {
    id: "debug-before-step-later",
    args: step(["-debug_before_step"], "report"),
    during: async (run) => (await waiting(run), run.write("/tekton/run/0/out.beforestepexit", "0")),
  },
  // -stdout_path, -stderr_path
  {
    id: "output-paths",
    args: step(["-stdout_path", "/tekton/logs/a/out", "-stderr_path", "/tekton/logs/b/err"], "out", "one", "err", "two", "out", "three"),
  },
  {
    id: "output-paths-same-file",
    args: step(["-stdout_path", "/tekton/logs/all", "-stderr_path", "/tekton/logs/all"], "out", "one", "err", "two"),
    unorderedLines: ["/tekton/logs/all"],
  },
  {
    id: "output-path-appends",
    args: step(["-stdout_path", "/tekton/logs/out"], "out", "new"),
    files: { "logs/out": { content: "old\n", mode: 0o600 } },
  },
  {
    id: "output-path-command-killed",
    args: step(["-stdout_path", "/tekton/logs/out"], "out", "before", "kill", "15"),
  },
  { id: "output-path-is-a-folder", args: step(["-stdout_path", "/tekton/logs"], "out", "x"), files: { logs: { dir: true } } },
  // -timeout and the cancel file
  { id: "timeout-expires", args: step(["-timeout", "1s"], "clock", "sleep", "20000"), timed: 1 },
  { id: "timeout-signal", args: step(["-timeout", "1s"], "trap", "clock", "await", "20000", "caught", "exit", "0"), timed: 1 },
  { id: "timeout-not-reached", args: step(["-timeout", "30s"], "report") },
  {
    id: "cancel",
    args: step([], "clock", "ready", READY, "sleep", "20000"),
    files: { "downward/cancel": "" },
    during: async (run) => (await run.appears(READY), run.write("/tekton/downward/cancel", "CANCEL")),
  },
  // Cancelled before the step starts: Tekton's entrypoint starts the command and its cancel watch at once (a command
  // that ends at once may finish first), baton does not start it. The command sleeps, so that the race is not played.
  {
    id: "cancel-before-start",
    args: step([], "sleep", "20000"),
    files: { "downward/cancel": "CANCEL" },
  },
  // The subcommands
  {
    id: "subcommand-init",
    args: ["init", "/tekton/ws/src", "/tekton/bin/entrypoint", "step-one", "step-two"],
    files: { "ws/src": { content: "a binary", mode: 0o755 }, ...bin },
  },
  { id: "subcommand-init-no-steps", args: ["init", "/tekton/ws/src", "/tekton/bin/entrypoint"], files: { "ws/src": "a binary", ...bin } },
  { id: "subcommand-init-no-bin-folder", args: ["init", "/tekton/ws/src", "/tekton/bin/entrypoint", "step-one"], files: { "ws/src": "a binary" } },
  { id: "subcommand-init-missing-source", args: ["init", "/tekton/ws/none", "/tekton/bin/entrypoint", "step-one"], files: bin },
  { id: "subcommand-cp", args: ["cp", "/tekton/ws/src", "/tekton/bin/copy"], files: { "ws/src": { content: "bytes", mode: 0o700 }, ...bin } },
  { id: "subcommand-cp-missing-source", args: ["cp", "/tekton/ws/none", "/tekton/bin/copy"], files: bin },
  { id: "subcommand-cp-one-argument", args: ["cp", "/tekton/ws/src"], files: { "ws/src": "bytes" } },
  { id: "subcommand-step-init", args: ["step-init", "step-a", "step-b"] },
  {
    id: "subcommand-step-init-again",
    args: ["step-init", "step-a"],
    files: { "steps/step-a": { symlink: "/tekton/run/0/status" }, "steps/0": { symlink: "/tekton/run/0/status" } },
  },
  { id: "subcommand-step-init-none", args: ["step-init"] },
  {
    id: "subcommand-decode-script",
    args: ["decode-script", "/tekton/scripts/s"],
    files: { "/tekton/scripts/s": { content: base64("#!/bin/sh\necho hi\n"), mode: 0o755 } },
  },
  { id: "subcommand-decode-script-invalid", args: ["decode-script", "/tekton/scripts/s"], files: { "/tekton/scripts/s": "!!not base64!!" } },
  { id: "subcommand-decode-script-missing", args: ["decode-script", "/tekton/scripts/none"] },
  { id: "subcommand-after-flags", args: ["-post_file", "/tekton/run/0/out", "step-init", "step-a"] },
];
