import type { FlagTable } from "../cli/parse-args.js";

// Every option of sidecar mode, declared once, in the form of step mode's (src/cli/step-flags.ts): the parser
// (options.ts), `baton sidecar --help` (main.ts) and docs/reference.md's table of sidecar options
// (scripts/reference-flags.ts) read this list. Tekton's entrypoint has no sidecar mode: no Tekton spelling here.
export const SIDECAR_FLAGS: FlagTable = [
  {
    name: "stop-file", kind: "list", arg: "PATH",
    help: "stop when PATH or PATH.err appears (repeatable: any of them); the last step's post file",
    reference: "repeatable, at least one; stop when any PATH (or `PATH.err`) appears, or the baton that writes it dies ([a step that dies](#a-step-that-dies)): the last step's post file",
  },
  {
    name: "grace-period", kind: "value", arg: "DURATION", default: "10s",
    help: "time between the stop signal and SIGKILL",
    reference: "time between the stop signal and SIGKILL; only with a COMMAND",
  },
  {
    name: "stop-signal", kind: "value", arg: "SIG", default: "SIGTERM",
    help: "the signal that stops the COMMAND's process group",
    reference: "the signal that stops the COMMAND's process group; only with a COMMAND",
  },
  {
    name: "ready-probe", kind: "value", arg: "PROBE",
    help: "tcp:HOST:PORT, http://HOST:PORT/PATH (2xx), file:PATH or exec:COMMAND; polled every 100 ms",
    reference: "`tcp:HOST:PORT`, `http://HOST:PORT/PATH`, `file:PATH` or `exec:COMMAND` (below); needs `--ready-file`",
  },
  {
    name: "ready-file", kind: "value", arg: "PATH",
    help: "written (non-empty) once the probe succeeds; PATH.err if the sidecar dies before that",
    reference: "written (non-empty) once the probe succeeds; `PATH.err` whenever the sidecar ends without having been ready (it died, a stop file came first or was there at start, the probe cannot run, its options are wrong). baton holds `PATH.baton-live` until PATH is written ([a step that dies](#a-step-that-dies))",
  },
  {
    name: "stop-url", kind: "list", arg: "URL",
    help: "POST to URL once a stop file appears (repeatable), e.g. http://127.0.0.1:15020/quitquitquit",
    reference: "repeatable; POST to URL once a stop file appears (`http://127.0.0.1:15020/quitquitquit`). Wherever baton shows a URL (stderr, events, the ready file's `probe`), its password is `xxxxx`",
  },
  {
    name: "events", kind: "value", arg: "PATH|stderr",
    help: "write lifecycle events as JSON lines (also: BATON_EVENTS)",
    reference: "lifecycle events as JSON lines, as in step mode",
  },
];
