import { closeSync, constants, fstatSync, openSync, writeFileSync } from "node:fs";
import { BatonError, describeSystemError } from "../base/errors.js";
import { readBounded, UnsafeFileError } from "../base/safe-files.js";
import { checkJsonDepth } from "./json-depth.js";

// ARGO_CONTAINER_ARGS_FILE: the controller moves a container's args to its ConfigMap when their JSON is over
// 128 KiB (workflowpod.go); the emissary appends them to the arguments it was given (emissary.go). Then any argument
// that exec() would refuse is written to /tmp/argo_arg_<i>.txt and passed as @/tmp/argo_arg_<i>.txt (the program must
// understand @file). Linux refuses an argument of MAX_ARG_BYTES bytes and more (its limit counts the NUL); Argo
// offloads only those over it, so an argument of exactly 131072 bytes fails there (E2BIG) and is offloaded here.

/** common.MaxEnvVarLen, and Linux's MAX_ARG_STRLEN (which includes the terminating NUL). */
export const MAX_ARG_BYTES = 131072;
/** A ConfigMap holds at most 1 MiB; a file far larger is not the controller's. */
export const ARGS_FILE_LIMIT = 4 * 1024 * 1024;

export function appendArgsFile(args: string[], file: string, offloadFolder = "/tmp"): string[] {
  let data: Buffer;
  try {
    data = readBounded(file, ARGS_FILE_LIMIT, { followSymlink: true }); // a ConfigMap's files are symlinks into ..data/
  } catch (error) {
    // Argo's words ("failed to read container args file F: why"), the why baton's.
    const why = error instanceof UnsafeFileError ? `it is ${error.message}` : describeSystemError(error);
    throw new BatonError(`failed to read container args file ${file}: ${why}`);
  }
  const text = data.toString("utf8");
  checkJsonDepth(text, "failed to unmarshal container args");
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new BatonError(`failed to unmarshal container args: ${(error as Error).message}`);
  }
  if (parsed !== null && !(Array.isArray(parsed) && parsed.every((a) => typeof a === "string"))) {
    throw new BatonError("failed to unmarshal container args: not a JSON array of strings");
  }
  const all = [...args, ...((parsed as string[] | null) ?? [])];
  return all.map((arg, i) => (Buffer.byteLength(arg) >= MAX_ARG_BYTES ? `@${offload(arg, `${offloadFolder}/argo_arg_${i}.txt`, i)}` : arg));
}

/** Writes one long argument to its file (0644, replacing an older one; never through a symlink, never into a FIFO). */
function offload(arg: string, path: string, index: number): string {
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o644);
  } catch (error) {
    throw new BatonError(`failed to write large arg ${index} to file: ${describeSystemError(error)}`);
  }
  try {
    if (!fstatSync(fd).isFile()) throw Object.assign(new Error("not a regular file"), { code: "EINVAL" });
    writeFileSync(fd, arg);
  } catch (error) {
    throw new BatonError(`failed to write large arg ${index} to file: ${describeSystemError(error)}`);
  } finally {
    closeSync(fd);
  }
  return path;
}
