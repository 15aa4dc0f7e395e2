// Signal hub. main.ts imports this module FIRST, so its listeners exist before any other code of baton runs:
// as PID 1 the kernel drops a signal that has no handler, and a listener here means none is lost from now on.
// Signals that arrive before anyone subscribes are kept and handed to the first subscriber.

/**
 * The signals baton forwards: every catchable one except SIGCHLD, minus those tini also keeps for itself
 * (SIGFPE, SIGILL, SIGSEGV, SIGBUS, SIGABRT, SIGTRAP, SIGSYS are faults of baton's own; SIGTTIN and SIGTTOU
 * concern its own terminal I/O), SIGPROF, which V8's CPU profiler uses, and SIGPIPE and SIGXFSZ: the kernel raises
 * those on baton itself when one of its own writes fails (a closed reader of its stdout, a capture file over its size
 * limit), and forwarding them would kill the command for baton's I/O; Node keeps them ignored. SIGHUP is last on purpose: tests
 * wait for its bit in /proc/PID/status SigCgt to know that every listener is in place.
 */
export const FORWARDED_SIGNALS: readonly NodeJS.Signals[] = [
  "SIGTERM", "SIGINT", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGSTKFLT", "SIGCONT",
  "SIGTSTP", "SIGURG", "SIGXCPU", "SIGVTALRM", "SIGWINCH", "SIGIO", "SIGPWR", "SIGHUP",
];

/** Signals whose default action does not end a process: they never end a wait. */
const HARMLESS: ReadonlySet<NodeJS.Signals> = new Set(["SIGCONT", "SIGTSTP", "SIGURG", "SIGWINCH"]);

export function endsWait(signal: NodeJS.Signals): boolean {
  return !HARMLESS.has(signal);
}

type SignalListener = (signal: NodeJS.Signals) => void;

const early: NodeJS.Signals[] = [];
let subscriber: SignalListener | undefined;

function deliver(signal: NodeJS.Signals): void {
  if (subscriber) subscriber(signal);
  else early.push(signal);
}

for (const signal of FORWARDED_SIGNALS) process.on(signal, deliver);

/** Routes every forwarded signal to `listener`, starting with those that arrived before this call. */
export function onSignal(listener: SignalListener): void {
  subscriber = listener;
  for (const signal of early.splice(0)) listener(signal);
}
