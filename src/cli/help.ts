import type { FlagTable } from "./parse-args.js";
import { STEP_FLAGS, TEKTON_FEATURE_FLAGS } from "./step-flags.js";

declare const BATON_VERSION: string;

export const VERSION = typeof BATON_VERSION === "string" ? BATON_VERSION : "dev";

/** `baton --help`: built when asked for, from the table of step options (step-flags.ts). */
export function stepHelp(): string {
  return `baton ${VERSION}: entrypoint wrapper for the steps and sidecars of a pipeline pod

Usage:
  baton [step options] -- COMMAND [ARG...]
  baton sidecar --stop-file PATH... [sidecar options] [-- COMMAND [ARG...]]   (see baton sidecar --help)
  baton init DEST          copy this baton to DEST (mode 0755), as an init container does
  baton -wait_file ... -entrypoint CMD -- [ARG...]    Tekton's entrypoint arguments (also init SRC DST [STEP...], cp SRC DST)
  baton emissary [--loglevel L] [--log-format F] [--gloglevel N] -- COMMAND [ARG...]   Argo Workflows' emissary
  baton kill SIGNAL PID    Argo Workflows' kill
  baton --version | --help

Step options:
${helpLines(STEP_FLAGS)}
Tekton features (what Tekton's entrypoint flags become; see docs/tekton.md):
${helpLines(TEKTON_FEATURE_FLAGS)}
Exit codes: the command's own; 128+N if it died of signal N; 124 timeout or wait timeout; 143 cancelled;
126 not executable; 127 not found; 2 usage error; 1 skipped (previous step failed) or baton failed.
`;
}

/** One line per option: `--name ARG`, then its help line and default from the table, aligned as a column. */
export function helpLines(table: FlagTable): string {
  return table.map((flag) => {
    const label = `--${flag.name}${flagArg(flag) ? ` ${flagArg(flag)}` : ""}`;
    const help = flag.default === undefined ? flag.help : `${flag.help} (default ${flag.default})`;
    return `  ${label.length <= 23 ? label.padEnd(25) : `${label}   `}${help}\n`;
  }).join("");
}

/** The value's name: the table's, or its choices joined with "|". */
export function flagArg(flag: FlagTable[number]): string | undefined {
  return flag.arg ?? flag.choices?.join("|");
}
