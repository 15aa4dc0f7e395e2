import { BatonError } from "../base/errors.js";

// `emissary [--loglevel L] [--log-format F] [--gloglevel N] -- COMMAND [ARG...]`, as Argo's controller writes it
// (workflowpod.go). The logging flags are argoexec's own (cmd/argoexec/commands/root.go); baton accepts and ignores
// them: it says only what goes wrong, as `baton: ...` lines.

/** What argoexec exits with when it, not the command, failed (cmd/argoexec/main.go). */
export const EXIT_EMISSARY_FAILURE = 64;

const VALUE_FLAGS = new Set(["--loglevel", "--log-format", "--gloglevel"]);

/** The command and its arguments; a BatonError (exit 64, as any failure of argoexec) for anything else. */
export function parseEmissaryArgs(args: readonly string[]): string[] {
  let i = 0;
  while (i < args.length) {
    const arg = args[i]!;
    if (arg === "--") {
      i++;
      break;
    }
    const [flag, inline] = arg.split(/=(.*)/s, 2) as [string, string | undefined];
    if (!VALUE_FLAGS.has(flag)) {
      if (arg.startsWith("-")) throw new BatonError(`emissary: unknown flag: ${flag}`, EXIT_EMISSARY_FAILURE);
      break; // the command, given without --
    }
    if (inline === undefined && i + 1 >= args.length) throw new BatonError(`emissary: flag needs an argument: ${flag}`, EXIT_EMISSARY_FAILURE);
    if (flag === "--gloglevel" && !/^[+-]?\d+$/.test(inline ?? args[i + 1]!)) {
      throw new BatonError(`emissary: invalid argument "${inline ?? args[i + 1]}" for "--gloglevel" flag`, EXIT_EMISSARY_FAILURE);
    }
    i += inline === undefined ? 2 : 1;
  }
  const command = args.slice(i);
  if (command.length === 0) throw new BatonError("emissary: no command given after --", EXIT_EMISSARY_FAILURE);
  return command;
}
