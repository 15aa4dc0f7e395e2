import { every } from "../base/clock.js";
import { describeSystemError } from "../base/errors.js";
import { statOrUndefined } from "../base/files.js";
import { watchFolderOf, type FolderWatch } from "../handoff/watch-folder.js";

// ARGO_DEBUG_PAUSE_BEFORE / _AFTER: the emissary waits until the user creates ctr/NAME/before (or after), whatever it
// is (Argo: util/file WaitForCreate).

const SAFETY_POLL_MS = 1000;

export function waitForMarker(path: string, signal: AbortSignal, warn: (message: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    // Declared before the closures that use them: the folder watch can refuse (a folder on the way not searchable)
    // while it is being made, before watchFolderOf has returned.
    let done = false;
    let watch: FolderWatch | undefined;
    let poll: NodeJS.Timeout | undefined;
    const finish = (settle: () => void) => {
      if (done) return;
      done = true;
      watch?.close();
      clearInterval(poll);
      signal.removeEventListener("abort", onAbort);
      settle();
    };
    const look = () => statOrUndefined(path) && finish(resolve);
    const onAbort = () => finish(() => reject(signal.reason));
    watch = watchFolderOf(path, look, warn, (folder, error) =>
      finish(() => reject(new Error(`cannot watch ${folder}: ${describeSystemError(error)}`))),
    );
    if (done) return watch.close(); // refused at once
    poll = every(SAFETY_POLL_MS, look);
    signal.addEventListener("abort", onAbort);
    if (signal.aborted) onAbort();
    else look();
  });
}
