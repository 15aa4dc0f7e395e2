// Signal hub. main.ts imports this module FIRST, so its listeners exist before any other code of baton runs:
// as PID 1 the kernel drops a signal that has no handler, and a listener here means none is lost from now on.
// Signals that arrive before anyone subscribes are kept and handed to the first subscriber.

/**
 * The signals baton forwards: every catchable one except SIGCHLD, as Tekton's entrypoint and Argo's emissary (Go's
 * signal.Notify) do, minus those that a Node listener cannot tell apart from baton's own trouble: the faults
 * (SIGFPE, SIGILL, SIGSEGV, SIGBUS, SIGTRAP, SIGSYS; a listener would turn a real crash of baton's into a loop of
 * faults, where Go reads who sent it; tini keeps them too), SIGPIPE and SIGXFSZ (the kernel raises those on baton
 * itself when one of its own writes fails: a closed reader of its stdout, a capture file over its size limit;
 * forwarding them would kill the command for baton's I/O; Node keeps them ignored), SIGPROF (V8's CPU profiler; the
 * peers do not forward it either), and the real-time signals, which Node cannot listen to. SIGABRT is forwarded:
 * when baton aborts itself (abort(3), V8's fatal errors), the C library restores the default action after the
 * listener's handler returns and raises it again, so baton still dies of it. SIGHUP is last on purpose: tests wait
 * for its bit in /proc/PID/status SigCgt to know that every listener is in place.
 */
export const FORWARDED_SIGNALS: readonly NodeJS.Signals[] = [
  "SIGTERM", "SIGINT", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGSTKFLT", "SIGCONT", "SIGTSTP", "SIGTTIN",
  "SIGTTOU", "SIGURG", "SIGXCPU", "SIGVTALRM", "SIGWINCH", "SIGIO", "SIGPWR", "SIGABRT", "SIGHUP",
];

/** Signals whose default action does not end a process: they never end a wait. */
const HARMLESS: ReadonlySet<NodeJS.Signals> = new Set(["SIGCONT", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGURG", "SIGWINCH"]);

/**
 * What `baton emissary` forwards of those: all but SIGURG, which Argo's emissary filters out (Go's runtime sends
 * itself SIGURG to preempt goroutines). Tekton's entrypoint does not filter it, and tini forwards it: a step forwards it.
 */
export function emissaryForwards(signal: NodeJS.Signals): boolean {
  return signal !== "SIGURG";
}

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
