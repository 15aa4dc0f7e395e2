import { closeSync, constants, existsSync, fstatSync, mkdirSync, openSync, readSync, realpathSync, renameSync, statSync, writeSync } from "node:fs";
import { dirname, isAbsolute, join, normalize, relative } from "node:path";
import { BatonError, describeSystemError } from "../base/errors.js";
import { createTemporaryBeside, removeQuietly } from "../base/safe-files.js";
import type { Template } from "./template.js";

// The container named `main` copies its outputs into the shared volume for the wait container (emissary.go
// saveParameter, saveArtifact): each output parameter's valueFrom.path to outputs/parameters/PATH, each output
// artifact's path as a gzipped tar to outputs/artifacts/PATH.tgz. A path under one of the template's volume mounts
// is skipped (the wait container reads it through its own mount of that volume); a path that does not exist is
// skipped (the output may be optional). Anything else that fails fails the container (exit 64).
// outputs/ is in the volume every container of the pod shares (a container set's members too): where Argo's os.Create
// writes through a symlink planted there, baton writes a new file renamed into place, in a folder that must resolve
// inside outputs/parameters or outputs/artifacts (writeOutput).

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
    const opened = source;
    writeOutput(root, destination, (target) => copyAll(opened, target));
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
    // Loaded here: zlib and streams are for the containers that have output artifacts.
    const { writeTarGz } = await import("./tgz.js");
    await writeOutput(root, destination, (fd) => writeTarGz(path, fd));
  } catch (error) {
    throw new BatonError(`failed to tarball the output ${path} to ${destination}: ${error instanceof Error && !("code" in error) ? error.message : describeSystemError(error)}`);
  }
}

/**
 * `destination` (under `root`) written by `write` as a new file (mode 0666 under the emissary's umask 0, as os.Create
 * makes it) renamed into place: a symlink planted at its name is replaced, never followed. Its folders are made, with
 * no symlink between `root` and it: one planted on the way (outputs -> /, outputs/parameters/tmp -> /etc) is refused
 * before any folder is made through it.
 */
function writeOutput<T extends void | Promise<void>>(root: string, destination: string, write: (fd: number) => T): T {
  const folder = dirname(destination);
  const realRoot = realpathSync(root);
  const checkNoLink = (existing: string) => {
    const real = realpathSync(existing);
    if (real !== join(realRoot, relative(root, existing))) {
      throw new BatonError(`cannot write ${destination}: ${existing} leads elsewhere (to ${real}), through a symlink in the shared volume`);
    }
  };
  let existing = folder;
  while (!existsSync(existing) && dirname(existing) !== existing) existing = dirname(existing);
  checkNoLink(existing);
  mkdirSync(folder, { recursive: true, mode: 0o755 });
  checkNoLink(folder);
  const { fd, temporary } = createTemporaryBeside(destination, 0o666);
  const finish = (failed: unknown) => {
    closeSync(fd);
    if (failed !== undefined) {
      removeQuietly(temporary);
      throw failed;
    }
    try {
      renameSync(temporary, destination);
    } catch (error) {
      // A folder at the destination (EISDIR), say: the temporary must not stay among the outputs.
      removeQuietly(temporary);
      throw error;
    }
  };
  let result: T;
  try {
    result = write(fd);
  } catch (error) {
    return finish(error ?? new Error("write failed")) as T;
  }
  if (result instanceof Promise) return result.then(() => finish(undefined), (error: unknown) => finish(error ?? new Error("write failed"))) as T;
  finish(undefined);
  return result;
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
