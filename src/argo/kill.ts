import { writeSync } from "node:fs";
import { BatonError } from "../base/errors.js";
import { parseGoInt } from "./exitcode-file.js";
import { EXIT_EMISSARY_FAILURE } from "./emissary-options.js";

// `baton kill SIGNAL PID`: what Argo's controller runs over pods/exec in a container to stop it (kill.go, signal.go):
// prints which signal it sends, then kill(PID, SIGNAL). Any failure exits 64, as argoexec does.

/** Go's names of the Linux signals (syscall.Signal.String()), which argoexec prints. */
const GO_SIGNAL_NAMES = [
  "", "hangup", "interrupt", "quit", "illegal instruction", "trace/breakpoint trap", "aborted", "bus error",
  "floating point exception", "killed", "user defined signal 1", "segmentation fault", "user defined signal 2",
  "broken pipe", "alarm clock", "terminated", "stack fault", "child exited", "continued", "stopped (signal)",
  "stopped", "stopped (tty input)", "stopped (tty output)", "urgent I/O condition", "CPU time limit exceeded",
  "file size limit exceeded", "virtual timer expired", "profiling timer expired", "window changed", "I/O possible",
  "power failure", "bad system call",
];

export function runKill(args: readonly string[]): number {
  if (args.length !== 2) throw new BatonError("kill: usage: baton kill SIGNAL PID", EXIT_EMISSARY_FAILURE);
  const signal = atoi(args[0]!);
  const pid = atoi(args[1]!);
  const name = signal > 0 && signal < GO_SIGNAL_NAMES.length ? GO_SIGNAL_NAMES[signal] : `signal ${signal}`;
  try {
    writeSync(1, `killing ${pid} with ${name}\n`);
  } catch {
    // stdout closed: the kill still matters more
  }
  if (pid === 0) throw new BatonError("kill: os: process not initialized", EXIT_EMISSARY_FAILURE);
  try {
    process.kill(pid, signal);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === "ESRCH" ? "os: process already finished" : code === "EPERM" ? "operation not permitted" : code === "EINVAL" ? "invalid argument" : String(error);
    throw new BatonError(`kill: ${why}`, EXIT_EMISSARY_FAILURE);
  }
  return 0;
}

/** strconv.Atoi: no blanks around the number (unlike the files, which Argo trims first). */
function atoi(text: string): number {
  const value = text === text.trim() ? parseGoInt(text) : undefined;
  if (value === undefined) throw new BatonError(`kill: strconv.Atoi: parsing ${JSON.stringify(text)}: invalid syntax`, EXIT_EMISSARY_FAILURE);
  return value;
}
