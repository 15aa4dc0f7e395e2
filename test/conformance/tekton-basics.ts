// Conformance scenarios: how a command's end is reported (success, failure, not found, killed), what it sees, the
// argument vector and TEKTON_PLATFORM_COMMANDS. Run by tekton.test.ts.
import { STEP, type Scenario } from "./tekton-run.js";

/** Step 0's flags, then the probe as the command with these actions. */
export function step(flags: string[], ...actions: string[]): string[] {
  return [...STEP, ...flags, "-entrypoint", "PROBE", "--", ...actions];
}

export const basics: Scenario[] = [
  { id: "success", args: step([], "report", "out", "to stdout", "err", "to stderr") },
  { id: "exit-nonzero", args: step([], "report", "err", "failing", "exit", "3") },
  { id: "exit-255", args: step([], "exit", "255") },
  { id: "killed-by-sigterm", args: step([], "report", "kill", "15") },
  { id: "killed-by-sigkill", args: step([], "kill", "9") },
  { id: "killed-by-sigsegv", args: step([], "kill", "11") },
  { id: "command-not-found", args: [...STEP, "-entrypoint", "/tekton/ws/missing", "--", "a"] },
  { id: "command-on-path", args: [...STEP, "-entrypoint", "true", "--"] },
  { id: "command-not-on-path", args: [...STEP, "-entrypoint", "no-such-command-here", "--"] },
  {
    id: "command-not-executable",
    args: [...STEP, "-entrypoint", "/tekton/ws/script", "--"],
    files: { "ws/script": { content: "#!/bin/sh\nexit 0\n", mode: 0o644 } },
  },
  {
    id: "command-is-a-folder",
    args: [...STEP, "-entrypoint", "/tekton/ws/folder", "--"],
    files: { "ws/folder": { dir: true } },
  },
  {
    id: "exec-format-error",
    args: [...STEP, "-entrypoint", "/tekton/ws/script", "--"],
    files: { "ws/script": { content: "echo no interpreter line\n", mode: 0o755 } },
  },
  {
    id: "script-interpreter-missing",
    args: [...STEP, "-entrypoint", "/tekton/ws/script", "--"],
    files: { "ws/script": { content: "#!/no/such/shell\n", mode: 0o755 } },
  },
  {
    id: "shell-script",
    args: [...STEP, "-entrypoint", "/tekton/ws/script", "--", "one", "two"],
    files: { "ws/script": { content: '#!/bin/sh\necho "args: $*"\necho "cwd: $(pwd)" >&2\nexit 4\n', mode: 0o755 } },
  },
  // What the command sees: argv as given (empty words, spaces, a word that looks like a flag), environment, folder.
  { id: "argv-words", args: step([], "report", "stop", "--", "-entrypoint", "", "a b", "$(not.a.reference)", "ünïcode") },
  { id: "argv-no-dashdash", args: [...STEP, "-entrypoint", "PROBE", "report"] },
  { id: "environment", args: step([], "report"), env: { LANG: "C.UTF-8", EMPTY: "" } },
  { id: "no-post-file", args: ["-entrypoint", "PROBE", "--", "report"] },
  { id: "no-flags-at-all", args: ["PROBE", "report"] },
  { id: "post-file-folder-missing", args: ["-post_file", "/tekton/new/a/b/out", "-entrypoint", "PROBE", "--", "report"] },
  { id: "termination-path-elsewhere", args: ["-termination_path", "/tekton/ws/term", "-entrypoint", "PROBE", "--", "exit", "0"] },
  {
    id: "termination-existing-entries",
    args: step([], "report"),
    files: { termination: '[{"key":"earlier","value":"kept","type":1}]' },
  },
  { id: "termination-existing-garbage", args: step([], "report"), files: { termination: "not json" } },
  { id: "no-step-metadata-dir", args: ["-post_file", "/tekton/run/0/out", "-entrypoint", "PROBE", "--", "exit", "2"] },
  // TEKTON_PLATFORM_COMMANDS: the command when -entrypoint is not given (the controller's image lookup).
  {
    id: "platform-commands",
    args: [...STEP, "--", "from-args"],
    env: { TEKTON_PLATFORM_COMMANDS: '{"linux/amd64":["PROBE","report","stop"]}' },
  },
  {
    id: "platform-commands-variant-fallback",
    args: [...STEP, "--", "out", "from-args"],
    env: { TEKTON_PLATFORM_COMMANDS: '{"linux/arm64":["/bin/false"],"linux":["PROBE","report"]}' },
  },
  {
    id: "platform-commands-no-match",
    args: [...STEP, "--", "x"],
    env: { TEKTON_PLATFORM_COMMANDS: '{"windows/amd64":["cmd"]}' },
  },
  { id: "platform-commands-bad-json", args: [...STEP, "--", "x"], env: { TEKTON_PLATFORM_COMMANDS: "{not json" } },
  { id: "platform-commands-missing", args: [...STEP, "--", "x"] },
  {
    id: "entrypoint-beats-platform-commands",
    args: step([], "report"),
    env: { TEKTON_PLATFORM_COMMANDS: '{"linux/amd64":["/bin/false"]}' },
  },
];
