// Conformance scenarios: Go's flag rules as Tekton's entrypoint applies them (spellings, bools, durations, unknown
// flags, missing values), and the flags that change an outcome without other files (-on_error, -timeout's parsing,
// SPIRE's). Run by tekton.test.ts.
import { step } from "./tekton-basics.js";
import { STEP, type Scenario } from "./tekton-run.js";

const existing = { "ws/ready": "yes" };

/** Tekton's string flags that a step may be given empty (-results and -wait_file have scenarios of their own). */
const STRING_FLAGS = ["post_file", "termination_path", "step_metadata_dir", "step_results", "stdout_path", "stderr_path", "result_from", "when_expressions", "on_error", "spire_socket_path"];
const BOOL_FLAGS = ["wait_file_content", "compress_termination_message", "breakpoint_on_failure", "debug_before_step", "enable_spire"];
const CREDENTIAL_FLAGS = ["basic-docker", "docker-config", "docker-cfg", "basic-git", "ssh-git"];

export const flags: Scenario[] = [
  // Every flag given an empty value, every bool =false and a value Go's ParseBool refuses, every credential flag empty.
  ...STRING_FLAGS.map((flag): Scenario => ({ id: `flag-empty-${flag.replaceAll("_", "-")}`, args: step([`-${flag}=`], "report") })),
  { id: "flag-empty-entrypoint", args: [...STEP, "-entrypoint=", "--", "x"], env: { TEKTON_PLATFORM_COMMANDS: '{"linux/amd64":["PROBE","report","stop"]}' } },
  ...BOOL_FLAGS.map((flag): Scenario => ({ id: `flag-false-${flag.replaceAll("_", "-")}`, args: step([`-${flag}=false`], "report") })),
  ...BOOL_FLAGS.map((flag): Scenario => ({ id: `flag-bad-${flag.replaceAll("_", "-")}`, args: step([`-${flag}=maybe`], "report") })),
  ...CREDENTIAL_FLAGS.map((flag): Scenario => ({ id: `flag-empty-${flag}`, args: step([`-${flag}=`], "report"), files: { creds: { dir: true } } })),
  {
    id: "flags-double-dash",
    args: ["--post_file", "/tekton/run/0/out", "--termination_path", "/tekton/termination", "--entrypoint", "PROBE", "--", "report"],
  },
  { id: "flags-equals", args: ["-post_file=/tekton/run/0/out", "-termination_path=/tekton/termination", "-entrypoint=PROBE", "--", "report"] },
  { id: "flags-repeated-last-wins", args: ["-post_file", "/tekton/run/0/first", ...step([], "report")] },
  { id: "flag-unknown", args: step(["-no_such_flag", "x"], "report") },
  { id: "flag-unknown-double-dash", args: step(["--no-such-flag"], "report") },
  { id: "flag-missing-value", args: [...STEP, "-entrypoint"] },
  { id: "flag-missing-value-before-dashdash", args: [...STEP, "-entrypoint", "PROBE", "-results", "--", "report"] },
  { id: "flag-help", args: ["-h"] },
  { id: "flag-help-long", args: ["-help"] },
  { id: "flag-help-after-flags", args: [...STEP, "-h", "-entrypoint", "PROBE", "--", "report"] },
  { id: "flag-single-dash-value-looks-like-flag", args: step(["-results", "-x"], "report") },
  { id: "positional-word-dropped", args: [...STEP, "-entrypoint", "PROBE", "stray", "--", "report"] },
  { id: "no-command", args: [...STEP, "--"] },
  // Bools: Go's strconv.ParseBool spellings, and one it refuses.
  { id: "bool-bare", args: step(["-wait_file", "/tekton/ws/ready", "-wait_file_content"], "report"), files: existing },
  { id: "bool-true", args: step(["-wait_file", "/tekton/ws/ready", "-wait_file_content=true"], "report"), files: existing },
  { id: "bool-one", args: step(["-wait_file", "/tekton/ws/ready", "-wait_file_content=1"], "report"), files: existing },
  { id: "bool-t", args: step(["-wait_file", "/tekton/ws/ready", "-wait_file_content=T"], "report"), files: existing },
  { id: "bool-false-caps", args: step(["-compress_termination_message=FALSE"], "report") },
  { id: "bool-bad", args: step(["-wait_file_content=yes"], "report") },
  { id: "bool-separate-word", args: step(["-compress_termination_message", "false"], "report") },
  // Durations: Go's time.ParseDuration.
  { id: "timeout-good", args: step(["-timeout", "1h2m3.5s"], "report") },
  { id: "timeout-zero", args: step(["-timeout", "0"], "report") },
  { id: "timeout-zero-unit", args: step(["-timeout", "0s"], "report") },
  { id: "timeout-bad-unit", args: step(["-timeout", "1x"], "report") },
  { id: "timeout-no-unit", args: step(["-timeout", "10"], "report") },
  { id: "timeout-negative", args: step(["-timeout", "-1s"], "report") },
  { id: "timeout-microseconds", args: step(["-timeout", "1h0m0.000001µs"], "report") },
  { id: "timeout-empty", args: step(["-timeout", ""], "report") },
  // -on_error: continue hands on whatever the command did; stopAndFail is the default's behaviour.
  { id: "on-error-continue-failure", args: step(["-on_error", "continue"], "report", "exit", "3") },
  { id: "on-error-continue-success", args: step(["-on_error", "continue"], "report") },
  { id: "on-error-continue-killed", args: step(["-on_error", "continue"], "kill", "15") },
  { id: "on-error-continue-not-found", args: [...STEP, "-on_error", "continue", "-entrypoint", "/tekton/ws/missing", "--"] },
  { id: "on-error-stop-and-fail", args: step(["-on_error", "stopAndFail"], "exit", "3") },
  { id: "on-error-stop-and-fail-success", args: step(["-on_error", "stopAndFail"], "report") },
  { id: "on-error-unknown-value", args: step(["-on_error", "ignore"], "exit", "3") },
  { id: "on-error-empty", args: step(["-on_error", ""], "exit", "3") },
  // SPIRE: off is accepted, the socket path is read only when it is on.
  { id: "spire-off", args: step(["-enable_spire=false", "-spire_socket_path", "unix:///nowhere"], "report") },
  { id: "spire-on", args: step(["-enable_spire", "-spire_socket_path", "unix:///tekton/ws/none.sock"], "report") },
  // TEKTON_HERMETIC=1: Tekton starts the command in new user, PID, mount and network namespaces.
  { id: "hermetic", args: step([], "report"), env: { TEKTON_HERMETIC: "1" } },
  // -result_from: any value but termination-message means sidecar logs in Tekton.
  { id: "result-from-termination-message", args: step(["-result_from", "termination-message", "-results", "a"], "file", "/tekton/results/a", "x"), files: { "results": { dir: true } } },
  { id: "result-from-other", args: step(["-result_from", "whatever", "-results", "a"], "file", "/tekton/results/a", "x"), files: { "results": { dir: true } } },
];
