declare const BATON_VERSION: string;

export const VERSION = typeof BATON_VERSION === "string" ? BATON_VERSION : "dev";

export const HELP = `baton ${VERSION}: entrypoint wrapper for the steps and sidecars of a pipeline pod

Usage:
  baton [step options] -- COMMAND [ARG...]
  baton sidecar --stop-file PATH... [sidecar options] [-- COMMAND [ARG...]]   (see baton sidecar --help)
  baton init DEST          copy this baton to DEST (mode 0755), as an init container does
  baton -wait_file ... -entrypoint CMD -- [ARG...]    Tekton's entrypoint arguments (also init SRC DST [STEP...], cp SRC DST)
  baton emissary [--loglevel L] [--log-format F] [--gloglevel N] -- COMMAND [ARG...]   Argo Workflows' emissary
  baton kill SIGNAL PID    Argo Workflows' kill
  baton --version | --help

Step options:
  --wait-file PATH         wait until PATH exists (repeatable, in order); PATH.err skips the command
  --wait-file-content      a wait file counts only once it is non-empty
  --wait-timeout DURATION  give up waiting after DURATION (Go syntax: 300ms, 1.5s, 2m, 1h30m; 0 = never)
  --post-file PATH         on success write PATH, on failure PATH.err (atomic; folders created)
  --step-metadata-dir DIR  write DIR/exitCode; create DIR/results/ and DIR/artifacts/ before waiting
  --termination-path PATH  write the Kubernetes termination message (Tekton's JSON; 4096 bytes at most)
  --results NAMES          comma-separated result names to put in it, read from --results-dir
  --results-dir DIR        where result files are (default /tekton/results)
  --timeout DURATION       stop the command after DURATION: SIGTERM to its process group (exit 124)
  --grace-period DURATION  then SIGKILL to the group this much later (default 10s)
  --on-error continue|stopAndFail   continue: a failing command still hands on POST; baton exits 0
  --stdout-path PATH       also append the command's stdout to PATH
  --stderr-path PATH       also append the command's stderr to PATH (may be the same as --stdout-path)
  --cancel-file PATH       a non-empty PATH stops the running command like a timeout (exit 143)
  --entrypoint CMD         the program to run; the arguments after -- follow it
  --events PATH|stderr     write lifecycle events as JSON lines (also: BATON_EVENTS)

Tekton features (what Tekton's entrypoint flags become; see docs/tekton.md):
  --step-results NAMES     step results to put in the termination message, read from DIR/results/
  --when JSON              Tekton's step when expressions (in, notin, cel); false skips the step and hands on POST
  --result-from termination-message|sidecar-logs   sidecar-logs: results stay out of the termination message
  --compress-termination-message   write it as tknz: (raw DEFLATE, base64) when that is shorter
  --breakpoint-on-failure  a failed step waits for POST.breakpointexit instead of handing on
  --debug-before-step      wait for POST.beforestepexit (or .err: skip) before the command runs
  --basic-docker SECRET=URL, --docker-config SECRET, --docker-cfg SECRET, --basic-git SECRET=URL,
  --ssh-git SECRET=URL     credentials from /tekton/creds-secrets/SECRET into /tekton/creds and $HOME (repeatable)

Exit codes: the command's own; 128+N if it died of signal N; 124 timeout or wait timeout; 143 cancelled;
126 not executable; 127 not found; 2 usage error; 1 skipped (previous step failed) or baton failed.
`;
