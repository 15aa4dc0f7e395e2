// Sidecar mode, loaded only when `baton sidecar` is asked for: step mode's start-up never pays for it.
import { checkCanAppear, checkNamesAFile, makeFolder, namedAsGiven } from "../cli/check-paths.js";
import { findOptionValue } from "../cli/parse-args.js";
import { usageError } from "../base/errors.js";
import { configureEvents, emit } from "../report/events.js";
import { NAME_MAX, statOrUndefined } from "../base/files.js";
import { helpLines } from "../cli/help.js";
import { SIDECAR_FLAGS } from "./flags.js";
import { parseSidecarOptions, type SidecarOptions } from "./options.js";
import { markNotReady, runSidecar, type SidecarIO } from "./run-sidecar.js";
import { basename, dirname } from "node:path";
import { describeTrace, startTracing } from "../trace/load.js";

/** `baton sidecar --help`, from the table of sidecar options (flags.ts). */
export function sidecarHelp(): string {
  return `Usage:
  baton sidecar --stop-file PATH... [options] [-- COMMAND [ARG...]]

Runs a sidecar (or, without a COMMAND, stops one baton cannot wrap) for as long as the steps run.

Sidecar options:
${helpLines(SIDECAR_FLAGS)}
Exit codes: 0 when stopped by a stop file (whatever the sidecar's own code); the sidecar's own code (128+N for
signal N) when it ends first; 128+N when signal N ends the wait of a sidecar-less baton; 2 usage error.
`;
}

export async function sidecarMode(argv: string[], io: SidecarIO): Promise<number> {
  if (argv[0] === "--help" || argv[0] === "-h") {
    process.stdout.write(sidecarHelp());
    return 0;
  }
  let options: SidecarOptions;
  try {
    options = parseSidecarOptions(argv);
    configureEvents({ file: options.events, name: "sidecar" });
    emit("start", { mode: "sidecar" });
    describeTrace({ mode: "sidecar", engine: "plain", name: process.env.BATON_NAME || "sidecar" });
    checkSidecarPaths(options);
  } catch (error) {
    // A misconfigured sidecar would leave the first step waiting for its ready file forever: say "never" instead.
    const readyFile = namedAsGiven(findReadyFile(argv));
    if (readyFile) markNotReady(readyFile, 2);
    throw error;
  }
  await startTracing(io.warn);
  return runSidecar(options, io);
}

function checkSidecarPaths(options: SidecarOptions): void {
  for (const file of options.stopFiles) {
    checkCanAppear(file, "stop file");
    if (statOrUndefined(file)?.isDirectory()) throw usageError(`stop file ${file} is a directory`);
  }
  if (options.readyFile !== undefined) {
    checkNamesAFile(options.readyFile, "ready file");
    const notReady = `${basename(options.readyFile)}.err`;
    if (Buffer.byteLength(notReady) > NAME_MAX) {
      throw usageError(`ready file name ${basename(options.readyFile)} is too long: ${notReady} must fit ${NAME_MAX} bytes`);
    }
    if (statOrUndefined(options.readyFile)?.isDirectory()) throw usageError(`ready file ${options.readyFile} is a directory`);
    makeFolder(dirname(options.readyFile), "--ready-file");
  }
}

function findReadyFile(argv: readonly string[]): string | undefined {
  return findOptionValue(argv, "ready-file");
}
