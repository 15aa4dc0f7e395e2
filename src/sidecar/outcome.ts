import { signalNumber } from "../run/exit-code.js";

// The sidecar's outcome table, in one place and without side effects, as src/step/outcome.ts is a step's: what ended
// the sidecar's baton -> its exit code and the one line it says. run-sidecar.ts acts (stops the sidecar, settles the
// ready file); this decides. test/unit/sidecar-outcome.test.ts drives it as one table.
//
// Stopped on purpose (a stop file or its .err appeared before the sidecar ended, or the step that writes it died) -> 0,
// whatever the sidecar's own code, so a Job can complete. A sidecar that ends on its own first -> its own code (128+N
// for signal N), also when that end came from a signal baton forwarded (pod deletion: SIGTERM -> 143). baton's own
// failure (a ready file it cannot write) is thrown, as in every mode: main.ts says it and exits 1.

/** What ended the sidecar lifecycle. */
export type SidecarEnded =
  /** A stop file appeared, or the step that writes it died: baton stopped the sidecar. */
  | { kind: "stopped" }
  /**
   * The sidecar ended on its own (or could not start: `spawnError`, code 126 or 127). `stopFileThere`: a stop file had
   * appeared by then (a pod deleted after its last step). `neverReady`: the --ready-probe, when it never succeeded.
   */
  | { kind: "exited"; exitCode: number; spawnError?: string; stopFileThere: boolean; neverReady?: string }
  /** A terminating signal ended the wait of a baton with no sidecar to forward it to. */
  | { kind: "signaled"; signal: NodeJS.Signals | number };

export interface SidecarOutcome {
  exitCode: number;
  /** The line on stderr, if any. */
  warning?: string;
}

export function decideSidecarOutcome(ended: SidecarEnded): SidecarOutcome {
  switch (ended.kind) {
    case "stopped":
      return { exitCode: 0 };
    case "signaled":
      return { exitCode: 128 + signalNumber(ended.signal), warning: `stopped by ${ended.signal} while waiting` };
    case "exited": {
      const { exitCode } = ended;
      if (ended.spawnError !== undefined) return { exitCode, warning: ended.spawnError };
      // It ended as the stop file appeared: that is a stop on purpose.
      if (ended.stopFileThere) return { exitCode: 0 };
      if (ended.neverReady !== undefined) {
        return { exitCode, warning: `the sidecar exited (code ${exitCode}) before it was ready (--ready-probe ${ended.neverReady})` };
      }
      return { exitCode, warning: `the sidecar exited (code ${exitCode}) before any stop file appeared` };
    }
  }
}
