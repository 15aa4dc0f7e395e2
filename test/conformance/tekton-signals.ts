// Conformance scenarios: what the command receives when the wrapper (PID 1) is sent a signal while the command runs,
// and a signal while the wrapper still waits. Run by tekton.test.ts.
import { step } from "./tekton-basics.js";
import { READY, type Scenario } from "./tekton-run.js";

/** Every signal a container's runtime or a user can send that the probe can catch (the faults too, sent by kill), and
 * some real-time ones. */
const SIGNALS: (NodeJS.Signals | number)[] = [
  "SIGHUP", "SIGINT", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGPIPE", "SIGALRM", "SIGTERM", "SIGCHLD", "SIGCONT",
  "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGURG", "SIGWINCH", "SIGXCPU", "SIGVTALRM", "SIGPROF", "SIGSYS", "SIGABRT",
  "SIGSTKFLT", "SIGXFSZ", "SIGIO", "SIGPWR", "SIGILL", "SIGTRAP", "SIGBUS", "SIGFPE", "SIGSEGV", 34, 35, 40, 64,
];

const AWAITED = `${READY}-awaited`;
const name = (sig: NodeJS.Signals | number) => (typeof sig === "number" ? `rt${sig}` : sig.slice(3).toLowerCase());

export const signals: Scenario[] = [
  // The probe records what it catches and ends after the first one (or 3 s without any): forwarding, not dying of it.
  // Sent a second time when the probe has not caught it within a second: Tekton's entrypoint reads signals through a
  // Go channel that holds one, so one that arrives with a SIGURG of Go's own runtime may be dropped.
  ...SIGNALS.map((sig): Scenario => ({
    id: `signal-${name(sig)}`,
    args: step([], "trap", "ready", READY, "await", "3000", "ready", AWAITED, "caught"),
    during: async (run) => {
      await run.appears(READY);
      await run.signal(sig);
      if (!(await run.appearsWithin(AWAITED, 1000))) await run.signal(sig);
    },
  })),
  // The command dies of the signal the wrapper forwards.
  {
    id: "signal-term-kills-command",
    args: step([], "ready", READY, "sleep", "20000"),
    during: async (run) => (await run.appears(READY), await run.signal("SIGTERM")),
  },
  // A signal before the command starts: the wrapper is waiting for a file that never comes.
  {
    id: "signal-term-while-waiting",
    args: step(["-wait_file", "/tekton/run/prev/out"], "report"),
    during: async (run) => (await run.waiting(), await run.signal("SIGTERM")),
  },
  {
    id: "signal-int-while-waiting",
    args: step(["-wait_file", "/tekton/run/prev/out"], "report"),
    during: async (run) => (await run.waiting(), await run.signal("SIGINT")),
  },
];
