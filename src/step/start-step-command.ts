import type { WriteStream } from "node:fs";
import type { StepOptions } from "../cli/step-options.js";
import { isTrackedChild } from "../run/children.js";
import { teeOutput } from "../run/output-tee.js";
import { shouldBecomeSubreaper, startReaping } from "../run/reaper.js";
import { startCommand, type RunningCommand } from "../run/run-command.js";

/** The command, once started: its process, and the copy of its output to the capture files, if any. */
export interface StartedCommand {
  command: RunningCommand;
  /** Settles once the copy has finished (at once without capture). */
  copied(): Promise<void>;
}

/** Starts the step's command, reaping the orphans it leaves, its output copied to `files` when given. */
export function startStepCommand(
  argv: readonly string[],
  options: StepOptions,
  files: Map<string, WriteStream> | undefined,
  warn: (message: string) => void,
): StartedCommand {
  // As PID 1 (or a subreaper) baton also inherits every orphan the command leaves: reap them.
  startReaping({ isOurChild: isTrackedChild, warn, subreaper: shouldBecomeSubreaper() });
  const command = startCommand(
    argv,
    // Pipes only when asked: inherited stdio costs nothing and keeps the command's output unbuffered.
    {
      stdio: files ? ["inherit", options.stdoutPath ? "pipe" : "inherit", options.stderrPath ? "pipe" : "inherit"] : "inherit",
      shellForScripts: options.shellForScripts,
    },
  );
  const tee = files ? teeOutput(command, options, files, warn) : undefined;
  return {
    command,
    copied: function copied() {
      return tee?.finish() ?? Promise.resolve();
    },
  };
}
