// Which of baton's modes and options a manifest uses, and which of them the built baton has. The examples are written
// for the whole contract; while parts of it are still being built, the demo and the tests run what the bundle can.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import type { PodToRun } from "./manifest.js";

export type Feature = "init" | "sidecar" | "termination-path" | "results";

/** The baton features a pod's containers use, read from their command lines. */
export function featuresUsed(pod: PodToRun): Set<Feature> {
  const used = new Set<Feature>();
  for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) {
    const argv = [...(c.command ?? []), ...(c.args ?? [])];
    const at = argv.findIndex((word) => basename(word) === "baton");
    if (at === -1) continue;
    if (argv[at + 1] === "init") used.add("init");
    if (argv[at + 1] === "sidecar") used.add("sidecar");
    for (const word of argv.slice(at + 1, argv.indexOf("--") === -1 ? undefined : argv.indexOf("--"))) {
      if (word.startsWith("--termination-path")) used.add("termination-path");
      if (word.startsWith("--results")) used.add("results");
    }
  }
  return used;
}

/** The features the bundle at `bundle` really has, found by trying each one (quick, in a scratch folder). */
export function featuresAvailable(bundle: string): Set<Feature> {
  const dir = mkdtempSync(join(tmpdir(), "baton-features-"));
  const works = (args: string[]) => spawnSync(process.execPath, [bundle, ...args], { cwd: dir, stdio: "ignore", timeout: 20_000 }).status === 0;
  try {
    const have = new Set<Feature>();
    if (works(["init", join(dir, "copy")]) && existsSync(join(dir, "copy"))) have.add("init");
    writeFileSync(join(dir, "stop"), "x");
    if (works(["sidecar", "--stop-file", join(dir, "stop"), "--", "true"])) have.add("sidecar");
    if (works(["--termination-path", join(dir, "termination"), "--", "true"])) have.add("termination-path");
    writeFileSync(join(dir, "r"), "x");
    if (works(["--termination-path", join(dir, "termination2"), "--results", "r", "--results-dir", dir, "--", "true"])) have.add("results");
    return have;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function missingFeatures(pod: PodToRun, available: Set<Feature>): Feature[] {
  return [...featuresUsed(pod)].filter((f) => !available.has(f));
}
