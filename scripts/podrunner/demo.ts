// `make demo`: the example pipeline pod, run on this machine by the pod runner, with the live view and the timeline.
// `make demo FAIL=1` breaks the middle step: the last step is skipped through the .err chain, the sidecar still stops,
// and the pod ends Failed. Exits 0 when the pod ends as intended (Succeeded, or Failed with FAIL=1).
import { rmSync } from "node:fs";
import { resolve } from "node:path";
import { busyboxImageEnv } from "./busybox.js";
import { featuresAvailable, missingFeatures } from "./features.js";
import { loadManifest } from "./manifest.js";
import { rerunAsRootIfNeeded } from "./root.js";
import { runAndShow } from "./show.js";
import { paint } from "./style.js";

// A reader that goes away (| head) must not stop the pod half-way: the rest of the output is dropped.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error;
});
process.on("uncaughtException", (error) => {
  process.stderr.write(`podrunner: ${error.message}\n`);
  process.exit(1);
});
const rerun = rerunAsRootIfNeeded();
if (rerun !== undefined) process.exit(rerun);

const repo = resolve(import.meta.dirname, "../..");
const fail = process.argv.includes("--fail");
const svgAt = process.argv.indexOf("--svg");
const svg = svgAt === -1 ? resolve(repo, "dist/demo/timeline.svg") : resolve(process.argv[svgAt + 1]!);
const c = paint(Boolean(process.stdout.isTTY) && !process.env.NO_COLOR);

let manifest = resolve(repo, "examples/pipeline-pod.yaml");
const missing = missingFeatures(loadManifest(manifest)[0]!, featuresAvailable(resolve(repo, "dist/baton.cjs")));
if (missing.length > 0) {
  console.log(c.yellow(`This baton does not have ${missing.join(", ")} yet: running examples/steps-pod.yaml instead of examples/pipeline-pod.yaml.`));
  manifest = resolve(repo, "examples/steps-pod.yaml");
}
console.log(c.dim(`Running ${manifest.slice(repo.length + 1)} on this machine: each container is PID 1 of its own namespaces; the host's files stand in for the images.`));
if (fail) console.log(c.dim(`FAIL=1: step-build is made to fail (BREAK_BUILD=true).`));
console.log("");

// The last run's volumes, logs and events stay in dist/demo/run for a look afterwards.
const runDir = resolve(repo, "dist/demo/run");
rmSync(runDir, { recursive: true, force: true });
const results = await runAndShow(manifest, {
  svg,
  runDir,
  env: fail ? [{ container: "step-build", name: "BREAK_BUILD", value: "true" }] : [],
  // The host stands in for the images: baton is on their PATH (bin/baton runs the bundle), then busybox's applets.
  imageEnv: busyboxImageEnv(resolve(repo, "bin")),
});
const expected = fail ? "Failed" : "Succeeded";
process.exit(results.every((r) => r.phase === expected) ? 0 : 1);
