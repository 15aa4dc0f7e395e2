// What the benchmark needs before it measures: the C probes, the reference tools, a description of the machine.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { join } from "node:path";
import { CLEAN_ENV } from "./lib.mjs";

const SOURCES = new URL(".", import.meta.url).pathname;

/** Compiles every scripts/bench/*.c into `outDir` (static, -O2) when the binary is missing or older. */
export function compileProbes(outDir) {
  mkdirSync(outDir, { recursive: true });
  const probes = {};
  for (const file of readdirSync(SOURCES).filter((f) => f.endsWith(".c"))) {
    const name = file.slice(0, -2);
    const source = join(SOURCES, file);
    const binary = join(outDir, name);
    if (!existsSync(binary) || statSync(binary).mtimeMs < statSync(source).mtimeMs) {
      // Static: a probe that stamps the clock "first thing" must not run the dynamic loader before it.
      const r = spawnSync("gcc", ["-O2", "-static", "-Wall", "-o", binary, source], { encoding: "utf8" });
      if (r.status !== 0) {
        throw new Error(`gcc failed for ${file} (the bench needs gcc and a static libc: apt-get install gcc libc6-dev)\n${r.stderr}`);
      }
    }
    probes[name] = binary;
  }
  return probes;
}

function which(command) {
  const r = spawnSync("sh", ["-c", `command -v ${command}`], { encoding: "utf8", env: CLEAN_ENV });
  return r.status === 0 ? r.stdout.trim() : null;
}

/**
 * Finds tini and dumb-init, installing the Debian packages when they are missing and we are root.
 * Returns { tini, dumbInit } (paths or null) and prints why a reference is skipped.
 */
export function referenceTools(log) {
  const wanted = { tini: "tini", dumbInit: "dumb-init" };
  const found = Object.fromEntries(Object.entries(wanted).map(([key, cmd]) => [key, which(cmd)]));
  const missing = Object.entries(wanted).filter(([key]) => !found[key]).map(([, pkg]) => pkg);
  if (missing.length > 0) {
    if (process.getuid?.() === 0 && which("apt-get")) {
      log(`installing ${missing.join(" ")} with apt-get (reference tools)...`);
      const env = { ...CLEAN_ENV, DEBIAN_FRONTEND: "noninteractive" };
      let r = spawnSync("apt-get", ["install", "-y", "-qq", ...missing], { encoding: "utf8", env });
      if (r.status !== 0) {
        spawnSync("apt-get", ["update", "-qq"], { encoding: "utf8", env });
        r = spawnSync("apt-get", ["install", "-y", "-qq", ...missing], { encoding: "utf8", env });
      }
      if (r.status !== 0) log(`apt-get install ${missing.join(" ")} failed: ${r.stderr.trim().split("\n").at(-1)}`);
      for (const key of Object.keys(wanted)) found[key] ??= which(wanted[key]);
    }
    for (const [key, pkg] of Object.entries(wanted)) {
      if (!found[key]) log(`${pkg} is not installed and could not be installed: its reference columns are skipped`);
    }
  }
  return found;
}

/** The machine the figures came from: they mean little without it. */
export function machine(probes) {
  const cpuModel = cpus()[0]?.model ?? "unknown";
  let kernel = "unknown";
  try {
    kernel = execFileSync("uname", ["-r"], { encoding: "utf8" }).trim();
  } catch {}
  let nproc = cpus().length;
  try {
    nproc = Number(execFileSync("nproc", { encoding: "utf8" }).trim());
  } catch {}
  let os = "unknown";
  try {
    os = /PRETTY_NAME="([^"]*)"/.exec(readFileSync("/etc/os-release", "utf8"))?.[1] ?? os;
  } catch {}
  // What a first touch of memory costs here (scripts/bench/firsttouch.c): a guest whose page tables the host shadows
  // pays ~10 times what one with hardware paging does, at every Node process's start and exit.
  let firstTouchMsPerMiB;
  try {
    firstTouchMsPerMiB = Number(execFileSync(probes.firsttouch, { encoding: "utf8" }).trim());
  } catch {}
  return {
    nproc,
    cpuModel,
    kernel,
    os,
    node: process.version,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    firstTouchMsPerMiB,
    loadAverageAtStart: loadavg().map((l) => Number(l.toFixed(2))),
  };
}
