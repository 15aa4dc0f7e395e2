// Playing Argo's controller and wait container around `baton emissary`: the shared folder ($BATON_ARGO_ROOT, in a
// temporary folder), the environment the controller sets on a user container, and reads of what the emissary leaves.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cleanEnv, join, readOr, startBaton, tempDir, type Baton, type StartOptions } from "./helpers.js";

/** The words the controller puts before the container's own command (workflowpod.go). */
export const EMISSARY = ["emissary", "--loglevel", "info", "--log-format", "text", "--gloglevel", "0", "--"];

export interface ArgoPod {
  root: string;
  /** Writes $BATON_ARGO_ROOT/template, as Argo's init container does. */
  template(json: unknown): void;
  /** Starts one container's emissary. */
  start(name: string, command: string[], env?: NodeJS.ProcessEnv, options?: StartOptions): Baton;
  dir(name: string): string;
  /** ctr/NAME/FILE, or undefined while absent. */
  read(name: string, file: string): string | undefined;
}

export function argoPod(): ArgoPod {
  const root = tempDir();
  const dir = (name: string) => join(root, "ctr", name);
  return {
    root,
    template(json) {
      writeFileSync(join(root, "template"), typeof json === "string" ? json : JSON.stringify(json), { mode: 0o444 });
    },
    start(name, command, env = {}, options = {}) {
      return startBaton([...EMISSARY, ...command], {
        ...options,
        env: cleanEnv({ BATON_ARGO_ROOT: root, ARGO_CONTAINER_NAME: name, ARGO_INCLUDE_SCRIPT_OUTPUT: "false", ...env }),
      });
    },
    dir,
    read(name, file) {
      const path = join(dir(name), file);
      const text = readOr(path, "\u0000missing");
      return text === "\u0000missing" ? undefined : text;
    },
  };
}

/** Writes ctr/NAME/signal as the wait container does (os.WriteFile, 0666). */
export function writeSignal(pod: ArgoPod, name: string, signal: number): void {
  mkdirSync(pod.dir(name), { recursive: true });
  writeFileSync(join(pod.dir(name), "signal"), String(signal), { mode: 0o666 });
}

export function readBytes(path: string): Buffer {
  return readFileSync(path);
}
