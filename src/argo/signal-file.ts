import { rmSync, unlinkSync } from "node:fs";
import { every } from "../base/clock.js";
import { watchFolderOf } from "../handoff/watch-folder.js";
import { parseGoInt } from "./exitcode-file.js";
import { readBounded, UnsafeFileError } from "../base/safe-files.js";

// ctr/NAME/signal: how Argo's wait container (and a sidecar's own emissary) signals a container without pods/exec
// (cmd/argoexec/commands/signal.go startFileSignalHandler). Whenever the file appears or changes: read a decimal
// signal number, delete the file, signal the command's process group. A file that does not hold a number > 0 yet is
// left alone (it may be half written). What is not a regular file there (a symlink, a FIFO someone made to block the
// reader) is never opened as such: it is removed, so the writer's next write makes a real file.

const SAFETY_POLL_MS = 1000;

export interface SignalFileWatch {
  close(): void;
}

export function watchSignalFile(path: string, deliver: (signal: number) => void, warn: (message: string) => void): SignalFileWatch {
  let closed = false;
  const look = () => {
    if (closed) return;
    let text: string;
    try {
      text = readBounded(path, 64).toString("utf8");
    } catch (error) {
      if (error instanceof UnsafeFileError && error.code !== "EFBIG") {
        try {
          rmSync(path, { force: true });
          warn(`${path} is ${error.message}: removed it`);
        } catch {
          // a folder: it cannot block anyone, and nobody can write a signal there
        }
      }
      return; // absent (the common case), or longer than a number: ignored as Argo ignores what it cannot parse
    }
    const signal = parseGoInt(text);
    if (signal === undefined || signal <= 0) return;
    try {
      unlinkSync(path);
    } catch {
      // already gone: another reader took it
    }
    deliver(signal);
  };
  const watch = watchFolderOf(path, look, warn, () => undefined);
  const poll = every(SAFETY_POLL_MS, look);
  look();
  return {
    close() {
      closed = true;
      watch.close();
      clearInterval(poll);
    },
  };
}
