import { BatonError } from "../base/errors.js";

// `emissary [--loglevel L] [--log-format F] [--gloglevel N] -- COMMAND [ARG...]`, as Argo's controller writes it
// (workflowpod.go). The flags are argoexec's own, every subcommand's (cmd/argoexec/commands/root.go): the logging
// flags, read as argoexec reads them (a level or format it does not know fails, as it fails argoexec) and otherwise
// ignored, since baton says only what goes wrong, as `baton: ...` lines; and the kubectl flags argoexec takes for the
// subcommands that talk to Kubernetes (util/kube/cli), which the emissary never does: accepted and ignored. The
// messages are Go's flag package's words (pflag), which Argo writes to the termination log.

/** What argoexec exits with when it, not the command, failed (cmd/argoexec/main.go). */
export const EXIT_EMISSARY_FAILURE = 64;

/** Flags that take a value: argoexec's own, and kubectl's (k8s.io/client-go/tools/clientcmd, BindOverrideFlags). */
const VALUE_FLAGS = new Set([
  "--loglevel", "--log-format", "--gloglevel",
  "--kubeconfig", "--as", "--as-group", "--as-uid", "--certificate-authority", "--client-certificate", "--client-key",
  "--cluster", "--context", "--namespace", "-n", "--password", "--proxy-url", "--request-timeout", "--server",
  "--tls-server-name", "--token", "--user", "--username",
]);
/** kubectl's flags that take no value (or `=true`, `=false`). */
const BOOLEAN_FLAGS = new Set(["--insecure-skip-tls-verify", "--disable-compression"]);

/** The levels and formats argoexec accepts, in any case (util/logging ParseLevel, TypeFromString; 3.7: logrus). */
const LOG_LEVELS = new Set(["trace", "debug", "info", "print", "warn", "warning", "error", "fatal", "panic"]);
const LOG_FORMATS = new Set(["text", "json"]);

/** The command and its arguments; a BatonError (exit 64, as any failure of argoexec) for anything else. */
export function parseEmissaryArgs(args: readonly string[]): string[] {
  let i = 0;
  while (i < args.length) {
    const arg = args[i]!;
    if (arg === "--") {
      i++;
      break;
    }
    if (!arg.startsWith("-") || arg === "-") break; // the command, given without --
    // --flag=value, and the short -n's -nVALUE and -n=VALUE
    const [flag, inline] = arg.startsWith("--")
      ? (arg.split(/=(.*)/s, 2) as [string, string | undefined])
      : [arg.slice(0, 2), arg.length > 2 ? arg.slice(2).replace(/^=/, "") : undefined];
    if (BOOLEAN_FLAGS.has(flag)) {
      if (inline !== undefined && !/^(1|0|t|f|true|false|TRUE|FALSE|True|False|T|F)$/.test(inline)) {
        throw new BatonError(`invalid argument "${inline}" for "${flag}" flag: strconv.ParseBool: parsing "${inline}": invalid syntax`, EXIT_EMISSARY_FAILURE);
      }
      i++;
      continue;
    }
    if (!VALUE_FLAGS.has(flag)) {
      const what = flag.startsWith("--") ? `flag: ${flag}` : `shorthand flag: '${flag.slice(1)}' in ${arg}`;
      throw new BatonError(`unknown ${what}`, EXIT_EMISSARY_FAILURE);
    }
    if (inline === undefined && i + 1 >= args.length) throw new BatonError(`flag needs an argument: ${flag}`, EXIT_EMISSARY_FAILURE);
    const value = inline ?? args[i + 1]!;
    if (flag === "--gloglevel" && !/^[+-]?\d+$/.test(value)) {
      throw new BatonError(`invalid argument "${value}" for "--gloglevel" flag: strconv.ParseInt: parsing "${value}": invalid syntax`, EXIT_EMISSARY_FAILURE);
    }
    if (flag === "--loglevel" && !LOG_LEVELS.has(value.toLowerCase())) throw new BatonError(`invalid log level: ${value}`, EXIT_EMISSARY_FAILURE);
    if (flag === "--log-format" && !LOG_FORMATS.has(value.toLowerCase())) throw new BatonError(`invalid log type: ${value}`, EXIT_EMISSARY_FAILURE);
    i += inline === undefined ? 2 : 1;
  }
  const command = args.slice(i);
  if (command.length === 0) throw new BatonError("no command given after --", EXIT_EMISSARY_FAILURE);
  return command;
}
