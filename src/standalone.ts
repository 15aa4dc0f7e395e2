// Whether baton runs as the standalone build (dist/baton-linux-x64, README "Standalone build") and where its folder is,
// so that `baton init DEST` can copy the whole folder (launcher, lib/baton-node, the loader and libraries), not one file.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { isSea } from "node:sea";

export interface Runtime {
  isSea: boolean;
  execPath: string;
}

// The folder holds ROOT/baton (the launcher) and ROOT/lib/baton-node (Node with baton injected). process.execPath is
// ROOT/lib/ld-linux-x86-64.so.2 when the launcher started it through the loader, ROOT/lib/baton-node when started
// directly on a glibc host, and ROOT/baton where /proc is not mounted (Node then falls back to argv[0], which the
// launcher sets to its own absolute path).
export function standaloneRoot(runtime: Runtime = { isSea: isSea(), execPath: process.execPath }): string | undefined {
  if (!runtime.isSea) return undefined;
  for (const candidate of [dirname(dirname(runtime.execPath)), dirname(runtime.execPath)]) {
    if (existsSync(join(candidate, "baton")) && existsSync(join(candidate, "lib", "baton-node"))) return candidate;
  }
  return undefined;
}
