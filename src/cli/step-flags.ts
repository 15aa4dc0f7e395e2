import type { Flag, FlagTable } from "./parse-args.js";

// Every option of step mode, declared once: the parser (step-options.ts), Tekton's spelling (tekton-argv.ts),
// `baton --help` (help.ts) and docs/reference.md's two tables of step options (scripts/reference-flags.ts) all read
// these two lists. A new option is a row here, its use in parseStepOptions, and `make reference` (docs/reference.md).

/** "Step options" in --help and docs/reference.md. */
export const STEP_FLAGS: FlagTable = [
  {
    name: "wait-file", kind: "list", arg: "PATH", tekton: "wait_file",
    help: "wait until PATH exists (repeatable, in order); PATH.err skips the command",
    reference: "repeatable; wait until each PATH exists, in order. `PATH.err` instead means the previous step failed: the command is skipped",
  },
  {
    name: "wait-file-content", kind: "flag", tekton: "wait_file_content",
    help: "a wait file counts only once it is non-empty",
    reference: "a wait file counts only once it is non-empty (the downward-API \"ready\" file exists empty first)",
  },
  {
    name: "wait-timeout", kind: "value", arg: "DURATION",
    help: "give up waiting after DURATION (Go syntax: 300ms, 1.5s, 2m, 1h30m; 0 = never)",
    reference: "give up waiting after DURATION: `POST.err`, exit 124 (default: wait forever)",
  },
  {
    name: "post-file", kind: "value", arg: "PATH", tekton: "post_file",
    help: "on success write PATH, on failure PATH.err (atomic; folders created)",
    reference: "on success write PATH, on failure `PATH.err`; never both (a stale opposite is removed first). Atomic, folders created. baton also holds a lock on `PATH.baton-live` from its start until PATH or `PATH.err` is written ([a step that dies](#a-step-that-dies)); a folder that can take no new file (read-only, out of inodes, not writable by baton's uid) fails the step before its command runs (one line, exit 1). A baton given the post file of a baton that is running (two steps with one post file) refuses: one line, exit 1, no command, and neither PATH nor `PATH.err` written. PATH and `PATH.err` left by an earlier run (a restarted container) are removed once the lock is held. `PATH.err`'s name must fit 255 bytes (PATH's name at most 251; with the debug breakpoints `PATH.breakpointexit.err`'s), else a usage error ([Files baton did not write](#files-baton-did-not-write))",
  },
  {
    name: "step-metadata-dir", kind: "value", arg: "DIR", tekton: "step_metadata_dir",
    help: "write DIR/exitCode; create DIR/results/ and DIR/artifacts/ before waiting",
    reference: "create `DIR/results/` and `DIR/artifacts/` before waiting; write `DIR/exitCode` once the command has run (and `0` for a step skipped by `--when`)",
  },
  {
    name: "termination-path", kind: "value", arg: "PATH", tekton: "termination_path",
    help: "write the Kubernetes termination message (Tekton's JSON; 4096 bytes at most)",
    reference: "write the Kubernetes termination message in Tekton's format (see [Termination message](#termination-message)); checked and written before the post file",
  },
  {
    name: "results", kind: "list", arg: "NAMES", tekton: "results",
    help: "comma-separated result names to put in it, read from --results-dir",
    reference: "comma-separated (and repeatable) result names, read from `--results-dir` into the termination message. A name with `/`, or `.`/`..`, is a usage error",
  },
  {
    // No `default`: it follows BATON_TEKTON_ROOT (parseStepOptions).
    name: "results-dir", kind: "value", arg: "DIR",
    help: "where result files are (default /tekton/results)",
    reference: "where the result files are (default `/tekton/results`, or `$BATON_TEKTON_ROOT/results`)",
  },
  {
    name: "timeout", kind: "value", arg: "DURATION", tekton: "timeout",
    help: "stop the command after DURATION: SIGTERM to its process group (exit 124)",
    reference: "stop the command after DURATION: SIGTERM to its whole process group, SIGKILL to the group `--grace-period` later. `POST.err`, exit 124 (default: none). It counts from the end of the wait, so the work before the command (`$(steps...)` substitution, a `when`) is inside it: expired before the command started, the command never starts ([Before the command](#before-the-command))",
  },
  {
    name: "grace-period", kind: "value", arg: "DURATION", default: "10s",
    help: "then SIGKILL to the group this much later",
    reference: "time between SIGTERM and SIGKILL for `--timeout` and `--cancel-file`; baton does not wait it out once the group is gone",
  },
  {
    name: "on-error", kind: "value", choices: ["continue", "stopAndFail"], default: "stopAndFail", tekton: "on_error",
    help: "continue: a failing command still hands on POST; baton exits 0",
    reference: "`continue`: a command that exits non-zero (or dies of a signal) still hands on `POST`, baton exits 0, the real code goes to `DIR/exitCode`, the post record and an `ExitCode` entry. Not for a timeout, a cancel or a command that cannot start",
  },
  {
    name: "stdout-path", kind: "value", arg: "PATH", tekton: "stdout_path",
    help: "also append the command's stdout to PATH",
    reference: "also append the command's stdout to PATH (folders created); the output still reaches baton's own stdout",
  },
  {
    name: "stderr-path", kind: "value", arg: "PATH", tekton: "stderr_path",
    help: "also append the command's stderr to PATH (may be the same as --stdout-path)",
    reference: "also append the command's stderr to PATH (folders created); the output still reaches baton's own stderr. The same PATH as `--stdout-path` gives one file with both streams",
  },
  {
    name: "cancel-file", kind: "value", arg: "PATH",
    help: "a non-empty PATH stops the running command like a timeout (exit 143)",
    reference: "watched from baton's start: a non-empty PATH (an empty one does not count: the downward-API file exists empty first) stops the running command like a timeout, or, while the step still waits, keeps the command from starting: `POST.err`, exit 143, Reason `Cancelled`. `PATH.err` means nothing here",
  },
  {
    name: "entrypoint", kind: "value", arg: "CMD", tekton: "entrypoint",
    help: "the program to run; the arguments after -- follow it",
    reference: "the program to run; the words after `--` are its arguments (Tekton style)",
  },
  {
    name: "events", kind: "value", arg: "PATH|stderr",
    help: "write lifecycle events as JSON lines (also: BATON_EVENTS)",
    reference: "lifecycle events as JSON lines (also `BATON_EVENTS=PATH|stderr`); off by default",
  },
];

const credential = (name: string, arg: string, help: string, reference: string): Flag => ({
  name, kind: "list", arg, tekton: name, tektonRepeats: true, help, reference,
});

/** "Tekton features" in --help and docs/reference.md: what Tekton's entrypoint flags become (docs/tekton.md). */
export const TEKTON_FEATURE_FLAGS: FlagTable = [
  {
    name: "step-results", kind: "list", arg: "NAMES", tekton: "step_results",
    help: "step results to put in the termination message, read from DIR/results/",
    reference: "comma-separated (and repeatable) step result names, read from `DIR/results/NAME` (`results/` of the working folder without `--step-metadata-dir`) into the termination message as type 4",
  },
  {
    name: "when", kind: "value", arg: "JSON", tekton: "when_expressions",
    help: "Tekton's step when expressions (in, notin, cel); false skips the step and hands on POST",
    reference: "Tekton's step `when`: a JSON list of `{\"input\",\"operator\",\"values\"}` (`in`: the input is one of the values; any other operator: none of them) and `{\"cel\"}` (a CEL expression that must give a bool). Checked once the wait is over; all true: the command runs. One false: the command is skipped and the step hands on `POST` (reason `Skipped`, `exitCode` 0), `DIR/exitCode` is `0`, no results, exit 0. An expression that fails (CEL that does not compile or evaluate or is not a bool, or goes over its budget of time or memory, an unusable `$(steps...)` reference): `POST.err`, exit 1 ([Before the command](#before-the-command)). JSON of another shape: usage error",
  },
  {
    // Tekton's -result_from takes any value (tekton-argv.ts maps it onto these two).
    name: "result-from", kind: "value", choices: ["termination-message", "sidecar-logs"], default: "termination-message", tekton: "result_from",
    help: "sidecar-logs: results stay out of the termination message",
    reference: "`sidecar-logs`: result and artifact entries (types 1, 4, 5, 6) stay out of the termination message; the files are still read (an unreadable one fails the step) and left for Tekton's results sidecar",
  },
  {
    name: "compress-termination-message", kind: "flag", tekton: "compress_termination_message",
    help: "write it as tknz: (raw DEFLATE, base64) when that is shorter",
    reference: "write the termination message as `tknz:` + unpadded base64 of raw DEFLATE (best level) when that is shorter than the JSON; the 4096-byte limit applies to what is written",
  },
  {
    name: "breakpoint-on-failure", kind: "flag", tekton: "breakpoint_on_failure",
    help: "a failed step waits for POST.breakpointexit instead of handing on",
    reference: "(needs `--post-file`) a step whose command fails (or cannot start, or whose `when` fails) writes its termination message but neither a post file nor `DIR/exitCode`, then waits for `POST.breakpointexit` (or `POST.breakpointexit.err`) and exits with the number in it (`0` when there is none). A timeout, a cancel or a skip does not stop there. A wait file's `.err` does not skip the command",
  },
  {
    name: "debug-before-step", kind: "flag", tekton: "debug_before_step",
    help: "wait for POST.beforestepexit (or .err: skip) before the command runs",
    reference: "(needs `--post-file`) after the wait, wait for `POST.beforestepexit` (run the command) or `POST.beforestepexit.err` (skip it: `POST.err`, exit 1)",
  },
  credential("basic-docker", "SECRET=URL", "credentials from /tekton/creds-secrets/SECRET into /tekton/creds and $HOME (repeatable)",
    "repeatable: `$BATON_TEKTON_ROOT/creds-secrets/SECRET/{username,password}` become the `auths` entry for URL in `creds/.docker/config.json`"),
  credential("docker-config", "SECRET", "the same from SECRET's .dockerconfigjson (repeatable)",
    "repeatable: the `auths` of `creds-secrets/SECRET/.dockerconfigjson` go into the same file"),
  credential("docker-cfg", "SECRET", "the same from SECRET's .dockercfg (repeatable)",
    "repeatable: the map in `creds-secrets/SECRET/.dockercfg` goes into the same file"),
  credential("basic-git", "SECRET=URL", "git credentials for URL from SECRET (repeatable)",
    "repeatable: `creds/.gitconfig` (`credential.helper store`, the username) and `creds/.git-credentials`"),
  credential("ssh-git", "SECRET=URL", "an SSH key and known_hosts for URL's host from SECRET (repeatable)",
    "repeatable: `creds/.ssh/{config,id_SECRET,known_hosts}` from `ssh-privatekey` and `known_hosts`; a URL with a repository path also gets `insteadOf` lines in `creds/.gitconfig`"),
];

/** Every option of step mode: what the parser reads. */
export const ALL_STEP_FLAGS: FlagTable = [...STEP_FLAGS, ...TEKTON_FEATURE_FLAGS];
