// Root folders like a scratch image: a static busybox from Debian (scripts/podrunner/busybox.ts), for this machine's
// architecture or another one, and the standalone folder.
import { cpSync, mkdirSync } from "node:fs";
import { staticBusybox } from "../../scripts/podrunner/busybox.js";
import { join, tempDir } from "./helpers.js";

/** A root folder: /bin/busybox (static), /baton (a copy of `standaloneDir`), empty /proc and /tmp. */
export function busyboxRoot(standaloneDir: string, debArch?: string): string {
  const root = tempDir();
  for (const dir of ["bin", "proc", "tmp"]) mkdirSync(join(root, dir));
  cpSync(staticBusybox(debArch), join(root, "bin/busybox"));
  cpSync(standaloneDir, join(root, "baton"), { recursive: true });
  return root;
}
