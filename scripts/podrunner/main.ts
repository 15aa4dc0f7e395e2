// podrunner: runs a Kubernetes Pod (or a Job's pod) manifest on this machine, the way the kubelet would, shows baton's
// lifecycle events live, and draws a timeline of the run. Not part of the baton bundle: a development and demo tool.
//
//   node --import tsx scripts/podrunner/main.ts [options] MANIFEST.yaml
//     --env [CONTAINER:]NAME=VALUE  set an env var in one container (or all), as if written in the manifest
//     --expect PHASE                exit 0 only if the pod ends in PHASE (Succeeded, the default, or Failed)
//     --svg PATH                    where to write the timeline SVG (default: RUN_DIR/timeline.svg)
//     --run-dir DIR                 folder for volumes, logs and events (default: a new temp folder)
//     --deadline SECONDS            stop the pod after this long (default: activeDeadlineSeconds, else 300)
//     --quiet-logs                  do not echo the containers' output
//     --json PATH                   also write the result as JSON
// The host stands in for every image: a container's PATH is busybox's applets (the examples' images are busybox, see
// busybox.ts), then this process's PATH.
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { busyboxImageEnv } from "./busybox.js";
import type { EnvOverride } from "./env.js";
import { rerunAsRootIfNeeded } from "./root.js";
import { runAndShow } from "./show.js";

interface Options {
  manifest: string;
  env: EnvOverride[];
  expect: "Succeeded" | "Failed";
  svg?: string;
  runDir?: string;
  deadline?: number;
  logs: boolean;
  json?: string;
}

class UsageError extends Error {}

function parseArgs(argv: string[]): Options {
  const options: Partial<Options> & { env: EnvOverride[] } = { env: [], expect: "Succeeded", logs: true };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new UsageError(`${arg} needs a value`);
      return v;
    };
    switch (arg) {
      case "--env": {
        const m = /^(?:([a-z0-9-]+):)?([A-Za-z_][A-Za-z0-9_.-]*)=(.*)$/s.exec(value());
        if (!m) throw new UsageError(`--env wants [CONTAINER:]NAME=VALUE`);
        options.env.push({ ...(m[1] ? { container: m[1] } : {}), name: m[2]!, value: m[3]! });
        break;
      }
      case "--expect": {
        const v = value();
        if (v !== "Succeeded" && v !== "Failed") throw new UsageError(`--expect wants Succeeded or Failed`);
        options.expect = v;
        break;
      }
      case "--svg":
        options.svg = resolve(value());
        break;
      case "--run-dir":
        options.runDir = resolve(value());
        break;
      case "--deadline":
        options.deadline = Number(value());
        if (!(options.deadline > 0)) throw new UsageError(`--deadline wants a number of seconds`);
        break;
      case "--quiet-logs":
        options.logs = false;
        break;
      case "--json":
        options.json = resolve(value());
        break;
      default:
        if (arg.startsWith("-")) throw new UsageError(`unknown option ${arg}`);
        if (options.manifest) throw new UsageError(`one manifest at a time`);
        options.manifest = arg;
    }
  }
  if (!options.manifest) throw new UsageError(`usage: podrunner [options] MANIFEST.yaml`);
  return options as Options;
}

// A reader that goes away (| head) must not stop the pod half-way: the rest of the output is dropped.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error;
});

async function main(): Promise<number> {
  const rerun = rerunAsRootIfNeeded();
  if (rerun !== undefined) return rerun;
  const options = parseArgs(process.argv.slice(2));
  const results = await runAndShow(options.manifest, { ...options, imageEnv: busyboxImageEnv() });
  if (options.json) writeFileSync(options.json, JSON.stringify(results, null, 2));
  return results.every((r) => r.phase === options.expect) ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`podrunner: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(error instanceof UsageError ? 2 : 1);
  },
);
