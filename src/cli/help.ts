declare const BATON_VERSION: string;

export const VERSION = typeof BATON_VERSION === "string" ? BATON_VERSION : "dev";

export const HELP = `baton ${VERSION}: entrypoint wrapper for the steps and sidecars of a pipeline pod

Usage:
  baton [step options] -- COMMAND [ARG...]
  baton sidecar --stop-file PATH... [sidecar options] [-- COMMAND [ARG...]]   (see baton sidecar --help)
  baton --version | --help

Step options:
  --wait-file PATH         wait until PATH exists (repeatable, in order); PATH.err skips the command
  --wait-file-content      a wait file counts only once it is non-empty
  --wait-timeout DURATION  give up waiting after DURATION (Go syntax: 300ms, 1.5s, 2m, 1h30m; 0 = never)
  --post-file PATH         on success write PATH, on failure PATH.err (atomic; folders created)
  --step-metadata-dir DIR  write DIR/exitCode; create DIR/results/ before waiting
  --entrypoint CMD         the program to run; the arguments after -- follow it
  --events PATH|stderr     write lifecycle events as JSON lines (also: BATON_EVENTS)

Exit codes: the command's own; 128+N if it died of signal N; 124 wait timeout; 126 not executable;
127 not found; 2 usage error; 1 skipped (previous step failed) or baton failed.
`;
