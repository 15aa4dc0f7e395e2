import type { StepOptions } from "../cli/step-options.js";
import { loadChunk } from "../process/chunks.js";
import type { DebugWait } from "./debug.js";
import type { CommandDecision } from "./step-features.js";

// Tekton's features that act around a step's command, in the Tekton chunk (src/process/chunks.ts): only a step that
// uses one of them loads it (src/step/features.ts decides).

/** What the Tekton chunk provides: its entry, src/tekton/chunk.ts, must satisfy this (tsc checks the import below). */
export interface TektonChunk {
  /** Before the wait: checks the credential secrets and the `when` JSON; returns what to do once all is checked. */
  prepareTektonFeatures(options: StepOptions, copyCredentials: boolean, warn: (message: string) => void): () => void;
  /** After the wait: $(steps...) substituted, `when` evaluated; rejects with `signal.reason` once it aborts. */
  decideTektonCommand(options: StepOptions, signal: AbortSignal): Promise<CommandDecision>;
  /** During the wait: loads what evaluating this --when will need (the CEL chunk's code). */
  prepareWhen(when: string): void;
  /** -debug_before_step: whether to run the command. */
  waitBeforeStep(postFile: string, wait: DebugWait): Promise<boolean>;
  /** -breakpoint_on_failure: the exit code the user's script wrote. */
  waitForBreakpointExit(postFile: string, wait: DebugWait): Promise<number>;
}

export function loadTektonChunk(): Promise<TektonChunk> {
  return loadChunk<TektonChunk>("tekton", () => import("./chunk.js"));
}
