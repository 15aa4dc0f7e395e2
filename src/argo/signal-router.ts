import { mark } from "../base/trace-marks.js";
import { constants } from "node:os";
import type { RunningCommand } from "../run/run-command.js";

// Where a signal goes, whichever way it came (to baton itself, or as a number in ctr/NAME/signal): to the command's
// process group while it runs (Argo forwards every signal); while baton waits (a dependency, a debug marker, the pause
// between attempts) a terminating one ends the wait. Either way a terminating signal means no further attempt.

export interface SignalHub {
  onSignal(listener: (signal: NodeJS.Signals | number) => void): void;
  endsWait(signal: NodeJS.Signals | number): boolean;
  /** Whether the emissary forwards a signal sent to baton (src/process/signals.ts). */
  emissaryForwards(signal: NodeJS.Signals | number): boolean;
}

/** Why a wait ended: a terminating signal (128+N is the exit code it gives). */
export class StoppedBy {
  constructor(readonly signal: NodeJS.Signals | number) {}
  get exitCode(): number {
    return 128 + (typeof this.signal === "number" ? this.signal : constants.signals[this.signal]);
  }
}

/** Signals kept for a command that has not started: a flood (SIGWINCH, SIGURG) must not grow without bound. */
const MAX_PENDING = 32;

export class SignalRouter {
  /** The command while it runs. */
  private command: RunningCommand | undefined;
  /** Signals that came while no command ran: the next command gets them as it starts (Argo's signal channel). */
  private pending: (NodeJS.Signals | number)[] = [];
  /** The first terminating signal received. */
  stopped: StoppedBy | undefined;
  private readonly waits = new Set<AbortController>();

  constructor(private readonly hub: SignalHub) {
    hub.onSignal((signal) => this.hub.emissaryForwards(signal) && this.receive(signal, this.hub.endsWait(signal)));
  }

  /** A signal number read from the signal file. */
  receiveNumber(signal: number): void {
    const name = Object.entries(constants.signals).find(([, n]) => n === signal)?.[0] as NodeJS.Signals | undefined;
    this.receive(name ?? signal, name === undefined || this.hub.endsWait(name));
  }

  private receive(signal: NodeJS.Signals | number, terminating: boolean): void {
    // runMainContainer's baton.signal (docs/tracing.md); nothing unless this baton traces.
    mark("signal", { signal });
    if (terminating) this.stopped ??= new StoppedBy(signal);
    if (this.command) {
      this.command.signal(signal);
      return;
    }
    if (this.pending.length < MAX_PENDING) this.pending.push(signal);
    if (terminating) for (const wait of this.waits) wait.abort(this.stopped);
  }

  /** The command that signals go to from now on, until detach(): those that came before it are sent at once. */
  attach(command: RunningCommand): void {
    this.command = command;
    for (const signal of this.pending.splice(0)) command.signal(signal);
  }

  detach(): void {
    this.command = undefined;
  }

  /** Runs `wait` with an AbortSignal that a terminating signal aborts (at once, if one came already). */
  async during<T>(wait: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    if (this.stopped) controller.abort(this.stopped);
    this.waits.add(controller);
    try {
      return await wait(controller.signal);
    } finally {
      this.waits.delete(controller);
    }
  }
}
