// Whether baton runs as the standalone build (dist/baton-linux-x64 or -arm64, docs/standalone.md) and where its
// folder is, so that `baton init DEST` can copy the whole folder (launcher, lib/baton-node, the loader and libraries),
// not one file.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";

export interface Runtime {
  isSea: boolean;
  execPath: string;
  /** process.argv[1]: in the standalone build, the launcher's absolute path (it passes it as argv0). */
  argv1: string | undefined;
}

function currentRuntime(): Runtime {
  // node:sea exists from Node 20.12; getBuiltinModule from 20.16 (older: plainly not the standalone build).
  const isSea = process.getBuiltinModule?.("node:sea")?.isSea() ?? false;
  return { isSea, execPath: process.execPath, argv1: process.argv[1] };
}

// The folder holds ROOT/baton (the launcher, under any name once copied) and ROOT/lib/baton-node (Node with baton
// injected). process.execPath is ROOT/lib/ld-linux-x86-64.so.2 (arm64: ld-linux-aarch64.so.1) when the launcher started
// it through the loader, ROOT/lib/baton-node when started directly on a glibc host, and the launcher's path where /proc
// is not mounted (Node then falls back to argv[0], which the launcher sets to its own absolute path).
export function standaloneRoot(runtime: Runtime = currentRuntime()): string | undefined {
  if (!runtime.isSea) return undefined;
  for (const candidate of [dirname(dirname(runtime.execPath)), dirname(runtime.execPath)]) {
    if (existsSync(join(candidate, "lib", "baton-node"))) return candidate;
  }
  return undefined;
}

/** The launcher that started this baton (ROOT/baton, or whatever name a copy gave it); ROOT/baton if started directly. */
export function standaloneLauncher(root: string, runtime: Runtime = currentRuntime()): string {
  const argv1 = runtime.argv1;
  if (argv1 !== undefined && dirname(argv1) === root) return argv1;
  return join(root, "baton");
}
