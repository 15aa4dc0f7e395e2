import { constants } from "node:os";
import { loadNativeAddon } from "../addon/load-addon.js";

// Signal hub. main.ts imports this module FIRST, so its listeners exist before any other code of baton runs:
// as PID 1 the kernel drops a signal that has no handler, and a listener here means none is lost from now on.
// Signals that arrive before anyone subscribes are kept and handed to the first subscriber.

/**
 * The signals Node listens to for baton: every catchable one except SIGCHLD, as Tekton's entrypoint and Argo's
 * emissary (Go's signal.Notify) forward, minus SIGPROF (V8's CPU profiler; the peers do not forward it either) and
 * those a Node listener cannot tell apart from baton's own trouble, which the addon relays instead (RELAYED, below):
 * the faults (a listener would turn a real crash of baton's into a loop of faults, where Go reads who sent it; tini
 * keeps them), SIGPIPE and SIGXFSZ (the kernel raises those on baton itself when one of its own writes fails: a closed
 * reader of its stdout, a capture file over its size limit; forwarding those would kill the command for baton's I/O),
 * and the real-time signals, which Node cannot listen to. SIGABRT is forwarded:
 * when baton aborts itself (abort(3), V8's fatal errors), the C library restores the default action after the
 * listener's handler returns and raises it again, so baton still dies of it. SIGHUP is last on purpose: tests wait
 * for its bit in /proc/PID/status SigCgt to know that every listener is in place.
 */
export const FORWARDED_SIGNALS: readonly NodeJS.Signals[] = [
  "SIGTERM", "SIGINT", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGSTKFLT", "SIGCONT", "SIGTSTP", "SIGTTIN",
  "SIGTTOU", "SIGURG", "SIGXCPU", "SIGVTALRM", "SIGWINCH", "SIGIO", "SIGPWR", "SIGABRT", "SIGHUP",
];

/**
 * Relayed by the addon (src/addon/signal-relay.c), since a Node listener cannot take them: the faults (SIGILL 4,
 * SIGTRAP 5, SIGBUS 7, SIGFPE 8, SIGSEGV 11, SIGSYS 31), SIGPIPE (13) and SIGXFSZ (25) when another process sent them
 * (a fault of baton's own still ends it; its own failed writes' are dropped), and the real-time signals 35-64, as
 * Tekton's entrypoint and Argo's emissary forward them (glibc keeps 32 and 33; the peers do not forward 34, SIGRTMIN,
 * either). A real-time signal has no name: it is its number here.
 */
const RELAYED: readonly number[] = [4, 5, 7, 8, 11, 13, 25, 31, ...Array.from({ length: 30 }, (_, i) => 35 + i)];

/** A signal baton received: its name, or the number of a real-time signal. */
export type Signal = NodeJS.Signals | number;

/** Signals whose default action does not end a process: they never end a wait. */
const HARMLESS: ReadonlySet<NodeJS.Signals> = new Set(["SIGCONT", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGURG", "SIGWINCH"]);

/**
 * What `baton emissary` forwards of those: all but SIGURG, which Argo's emissary filters out (Go's runtime sends
 * itself SIGURG to preempt goroutines). Tekton's entrypoint does not filter it, and tini forwards it: a step forwards it.
 */
export function emissaryForwards(signal: Signal): boolean {
  return signal !== "SIGURG";
}

export function endsWait(signal: Signal): boolean {
  return typeof signal === "number" || !HARMLESS.has(signal);
}

type SignalListener = (signal: Signal) => void;

const early: Signal[] = [];
let subscriber: SignalListener | undefined;

function deliver(signal: Signal): void {
  if (subscriber) subscriber(signal);
  else early.push(signal);
}

for (const signal of FORWARDED_SIGNALS) process.on(signal, deliver);

/** Routes every forwarded signal to `listener`, starting with those that arrived before this call. */
export function onSignal(listener: SignalListener): void {
  subscriber = listener;
  relayUnlistenable();
  for (const signal of early.splice(0)) listener(signal);
}

/** Starts the addon's relay (once, with the first subscriber): without the addon these signals stay unforwarded. */
function relayUnlistenable(): void {
  if (relaying) return;
  relaying = true;
  try {
    loadNativeAddon().relaySignals?.([...RELAYED], (number) => deliver(signalName(number) ?? number));
  } catch {
    // no addon: Node's own dispositions stay (SIGPIPE and SIGXFSZ ignored, a real-time signal's default)
  }
}

let relaying = false;

function signalName(number: number): NodeJS.Signals | undefined {
  for (const name in constants.signals) if (constants.signals[name as NodeJS.Signals] === number) return name as NodeJS.Signals;
  return undefined;
}
