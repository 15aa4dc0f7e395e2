import { closeSync, constants, createWriteStream, fstatSync, openSync, type WriteStream } from "node:fs";
import { describeSystemError } from "../base/errors.js";
import { refusalOf, typeName } from "../base/safe-files.js";

// ctr/NAME/stdout and ctr/NAME/combined, opened as Argo opens them (O_APPEND, 0666: a retry appends to the output of
// the attempts before it), but in a shared folder: never through a symlink, never a FIFO or a device.

export function openCaptureFile(path: string): WriteStream {
  const flags = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK;
  let fd: number;
  try {
    fd = openSync(path, flags, 0o666);
  } catch (error) {
    throw new Error(`failed to open ${path}: ${describeSystemError(refusalOf(error))}`);
  }
  const stats = fstatSync(fd);
  if (!stats.isFile()) {
    closeSync(fd);
    throw new Error(`failed to open ${path}: it is ${typeName(stats)}, not a regular file`);
  }
  return createWriteStream(path, { fd, flags: "a" });
}
