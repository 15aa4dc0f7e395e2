// Which signals a wrapper hands on to its command: each signal 1-64 but SIGKILL and SIGSTOP, sent to the wrapper (PID
// 1) one at a time while the probe catches everything, and seen or not by the command. One signal at a time, because
// Argo's emissary reads its signals from a channel of one slot and drops what arrives while it is full. A signal that
// is not handed on has no event to wait for: the probe is given a moment to see it, then a sentinel signal that is
// handed on (SIGUSR2, or SIGUSR1 when SIGUSR2 is the one tested) shows that the wrapper has dealt with it. A signal
// that ends the wrapper (or the command, which cannot catch 32 and 33: glibc keeps them) ends the run, and the rest
// are sent to a new one. SIGTERM goes last: a wrapper may take it as the end.
import { writeFileSync } from "node:fs";
import { waitFor } from "../integration/helpers.js";
import { EMISSARY, probeListening, runContainer, type Run } from "./argo-pod.js";
import { podEnv } from "./argo-scenarios.js";

const SIGNALS = [...Array.from({ length: 64 }, (_, i) => i + 1).filter((n) => n !== 9 && n !== 19 && n !== 15), 15];
const GRACE_MS = 300;

const count = (run: Run, signal: number) => run.probeLines().filter((line) => line.signal === signal).length;

async function until(condition: () => boolean, ms: number): Promise<boolean> {
  try {
    await waitFor(() => (condition() ? true : undefined), "", ms);
    return true;
  } catch {
    return false;
  }
}

/** The fields `signal N` (what reached the command) for one wrapper, and `signals exit` (how the last run ended). */
export async function signalFields(wrapper: string[]): Promise<Record<string, string>> {
  const fields: Record<string, string> = {};
  let remaining = SIGNALS;
  while (remaining.length > 0) {
    const times = new Map<number, number>();
    const befores = new Map<number, number>();
    let endedBy: number | undefined;
    const { exit } = await runContainer({
      wrapper,
      args: [...EMISSARY, "probe", "listen", "/tmp/ready", "/tmp/stop"],
      env: podEnv({ name: "signals" }),
      template: {},
      during: async (run) => {
        // A signal that came after its sentinel still counts (Go hands on pending signals lowest number first, so
        // SIGUSR2 may overtake it under load): the rest of the run is its too, but for the sentinels themselves.
        const recount = () => {
          for (const [signal, before] of befores) if (signal !== 10 && signal !== 12) times.set(signal, count(run, signal) - before);
        };
        await probeListening(run);
        const pid = await run.pid();
        let ended = false;
        void run.exited.then(() => (ended = true));
        for (const signal of remaining) {
          const before = count(run, signal);
          const settle = async () => {
            await run.exited;
            recount();
            times.set(signal, count(run, signal) - before);
            endedBy = signal;
          };
          process.kill(pid, signal);
          const seen = await until(() => count(run, signal) > before || ended, GRACE_MS);
          if (ended) return settle();
          if (!seen) {
            const sentinel = signal === 12 ? 10 : 12;
            const sentinelsBefore = count(run, sentinel);
            let tries = 0;
            do {
              process.kill(pid, sentinel);
            } while (!(await until(() => count(run, sentinel) > sentinelsBefore || ended, 1000)) && ++tries < 20);
            if (ended) return settle();
            if (tries >= 20) throw new Error(`the sentinel ${sentinel} never reached the command`);
          }
          times.set(signal, count(run, signal) - before);
          befores.set(signal, before);
        }
        recount();
        writeFileSync(run.host("/tmp/stop"), "");
      },
    });
    for (const [signal, n] of times) {
      let value = n === 0 ? "not forwarded" : n === 1 ? "forwarded" : `forwarded ${n} times`;
      if (signal === endedBy) value += `; then the wrapper exited ${exit.signal ?? exit.code}`;
      fields[fieldOf(signal)] = value;
    }
    if (endedBy === undefined) {
      fields["signals exit"] = String(exit.signal ?? exit.code);
      break;
    }
    remaining = remaining.slice(remaining.indexOf(endedBy) + 1);
  }
  // The real-time signals 34-64 are one field: each is one row of the table otherwise, and they go together.
  const realTime = Object.keys(fields).filter((f) => /^signal (3[4-9]|[4-6]\d)$/.test(f));
  const values = new Set(realTime.map((f) => fields[f]));
  fields["signals 34-64"] = values.size === 1 ? [...values][0]! : JSON.stringify(Object.fromEntries(realTime.map((f) => [f, fields[f]])));
  for (const f of realTime) delete fields[f];
  return fields;
}

const NAMES = ["", "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1", "SEGV", "USR2", "PIPE", "ALRM",
  "TERM", "STKFLT", "CHLD", "CONT", "STOP", "TSTP", "TTIN", "TTOU", "URG", "XCPU", "XFSZ", "VTALRM", "PROF", "WINCH", "IO",
  "PWR", "SYS"];

/** `signal 6 SIGABRT`; the real-time ones by number alone. */
function fieldOf(signal: number): string {
  return signal < NAMES.length ? `signal ${signal} SIG${NAMES[signal]}` : `signal ${signal}`;
}
