import { closeSync, constants, fstatSync, mkdirSync, openSync, readSync, statSync, writeSync } from "node:fs";
import { dirname, isAbsolute, join, normalize, relative } from "node:path";
import { BatonError, describeSystemError } from "../base/errors.js";
import type { Template } from "./template.js";

// The container named `main` copies its outputs into the shared volume for the wait container (emissary.go
// saveParameter, saveArtifact): each output parameter's valueFrom.path to outputs/parameters/PATH, each output
// artifact's path as a gzipped tar to outputs/artifacts/PATH.tgz. A path under one of the template's volume mounts
// is skipped (the wait container reads it through its own mount of that volume); a path that does not exist is
// skipped (the output may be optional). Anything else that fails fails the container (exit 64).

export async function saveOutputs(template: Template, root: string, warn: (message: string) => void): Promise<void> {
  for (const path of template.parameterPaths) saveParameter(template, root, path);
  for (const path of template.artifactPaths) await saveArtifact(template, root, path, warn);
}

/** common.FindOverlappingVolume: whether `path` is one of the mount paths or under one (filepath.Rel's rule). */
export function onVolumeMount(template: Template, path: string): boolean {
  return template.volumeMountPaths.some((mount) => {
    if (isAbsolute(mount) !== isAbsolute(path)) return false; // Go's filepath.Rel cannot relate them
    const rel = relative(mount, path);
    return rel !== ".." && !rel.startsWith("../");
  });
}

function saveParameter(template: Template, root: string, path: string): void {
  if (onVolumeMount(template, path)) return;
  let source: number;
  try {
    source = openSync(goClean(path), constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw new BatonError(`failed to open ${path}: ${describeSystemError(error)}`);
  }
  try {
    // String concatenation, as Argo: outputs/parameters//tmp/x for /tmp/x.
    const destination = `${root}/outputs/parameters/${path}`;
    // Argo's io.Copy fails on a folder only after it made the destination: baton leaves no empty parameter behind.
    if (!fstatSync(source).isFile()) throw new BatonError(`failed to copy ${path} to ${destination}: not a regular file`);
    mkdirSync(dirname(destination), { recursive: true, mode: 0o755 });
    const target = openSync(destination, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, 0o666);
    try {
      copyAll(source, target);
    } finally {
      closeSync(target);
    }
  } catch (error) {
    if (error instanceof BatonError) throw error;
    throw new BatonError(`failed to save parameter ${path}: ${describeSystemError(error)}`);
  } finally {
    closeSync(source);
  }
}

async function saveArtifact(template: Template, root: string, path: string, warn: (message: string) => void): Promise<void> {
  if (onVolumeMount(template, path)) return;
  try {
    statSync(path);
  } catch (error) {
    // os.IsNotExist: ENOENT only. /tmp/file/ (ENOTDIR) is archived, as Go's filepath.Abs drops the slash.
    if ((error as NodeJS.ErrnoException).code === "ENOENT") {
      warn(`cannot save artifact ${path}: it does not exist`);
      return;
    }
  }
  const destination = join(root, "/outputs/artifacts/", `${path.endsWith("/") ? path.slice(0, -1) : path}.tgz`);
  try {
    mkdirSync(dirname(destination), { recursive: true, mode: 0o755 });
    // Loaded here: zlib and streams are for the containers that have output artifacts.
    const { writeTarGz } = await import("./tgz.js");
    await writeTarGz(path, destination);
  } catch (error) {
    throw new BatonError(`failed to tarball the output ${path} to ${destination}: ${error instanceof Error && !("code" in error) ? error.message : describeSystemError(error)}`);
  }
}

function copyAll(source: number, target: number): void {
  const buffer = Buffer.allocUnsafe(64 * 1024);
  for (;;) {
    const n = readSync(source, buffer, 0, buffer.length, null);
    if (n === 0) return;
    for (let written = 0; written < n; ) written += writeSync(target, buffer, written, n - written);
  }
}

/** Go's filepath.Clean: no "." or ".." where they can go, no doubled or trailing slash. */
function goClean(path: string): string {
  if (path === "") return ".";
  const cleaned = normalize(path);
  return cleaned.length > 1 && cleaned.endsWith("/") ? cleaned.slice(0, -1) : cleaned;
}
