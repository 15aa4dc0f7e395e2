import { READ_LIMIT, readTextBounded } from "../base/safe-files.js";
import { warnLines } from "../base/warn.js";
import { waitForFile } from "../handoff/wait-for-file.js";

// Tekton's debug breakpoints (TaskRun spec.debug, alpha), with the same files, so that the scripts the controller
// puts in /tekton/debug/scripts work unchanged: `kubectl exec` into the step and run debug-continue,
// debug-fail-continue, debug-beforestep-continue or debug-beforestep-fail-continue (pkg/entrypoint/entrypointer.go,
// pkg/pod/scripts_constants.go in tektoncd/pipeline). baton waits for those files by inotify, not a 1 s poll.

const SCRIPTS = "/tekton/debug/scripts";

export interface DebugWait {
  signal: AbortSignal;
  safetyPollMs: number | undefined;
  warn: (message: string) => void;
}

/**
 * -debug_before_step: waits for POST.beforestepexit (go on) or POST.beforestepexit.err (skip the command, fail).
 * Returns whether to run the command.
 */
export async function waitBeforeStep(postFile: string, wait: DebugWait): Promise<boolean> {
  // Tekton's text, on its three lines (a line of baton's is otherwise one line: src/base/warn.ts).
  warnLines([
    "debug before step breakpoint has taken effect, waiting for user's decision:",
    `1) continue, use cmd: ${SCRIPTS}/debug-beforestep-continue`,
    `2) fail-continue, use cmd: ${SCRIPTS}/debug-beforestep-fail-continue`,
  ]);
  const found = await waitForFile(`${postFile}.beforestepexit`, { content: false, ...wait });
  return found === "found";
}

/**
 * -breakpoint_on_failure, once the step failed: waits for POST.breakpointexit (or POST.breakpointexit.err, which
 * ends the wait too) and returns the exit code written in it: 0 when it is missing or not a number, as in Tekton.
 */
export async function waitForBreakpointExit(postFile: string, wait: DebugWait): Promise<number> {
  warnLines([
    "debug onFailure breakpoint has taken effect, waiting for user's decision:",
    `1) continue, use cmd: ${SCRIPTS}/debug-continue`,
    `2) fail-continue, use cmd: ${SCRIPTS}/debug-fail-continue`,
  ]);
  await waitForFile(`${postFile}.breakpointexit`, { content: false, ...wait });
  return breakpointExitCode(`${postFile}.breakpointexit`);
}

/**
 * Go's strconv.Atoi of the file with one trailing newline removed; 0 when missing or not an integer, and (safer than
 * Tekton) when it is not a regular file or over 4096 bytes, which no integer is.
 */
export function breakpointExitCode(file: string): number {
  let text: string;
  try {
    text = readTextBounded(file, READ_LIMIT.exitCode);
  } catch {
    return 0;
  }
  if (text.endsWith("\n")) text = text.slice(0, -1);
  if (!/^[+-]?[0-9]+$/.test(text)) return 0;
  const code = Number(text);
  // os.Exit(code): the kernel keeps the low 8 bits.
  return Number.isSafeInteger(code) ? ((code % 256) + 256) % 256 : 0;
}
