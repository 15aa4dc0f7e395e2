// Root folders like a scratch image: a static busybox from Debian (busybox-static, downloaded with apt-get download and
// unpacked into build/, not installed), for this machine's architecture or another one (arm64: the package lists need
// `dpkg --add-architecture arm64`, which `make sea ARCH=arm64` does).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { resolve } from "node:path";
import { existsSync, join, tempDir } from "./helpers.js";

/** Debian's busybox-static for `debArch` (none: this machine's), downloaded and unpacked once into build/. */
export function staticBusybox(debArch?: string): string {
  const cache = resolve(import.meta.dirname, "../../build", debArch ? `busybox-static-${debArch}` : "busybox-static");
  const busybox = join(cache, "bin/busybox");
  if (existsSync(busybox)) return busybox;
  const download = tempDir();
  const name = debArch ? `busybox-static:${debArch}` : "busybox-static";
  const get = () => execFileSync("apt-get", ["download", "-qq", name], { cwd: download, stdio: "pipe" });
  try {
    get();
  } catch {
    execFileSync("apt-get", ["update", "-qq"], { stdio: "pipe" }); // a fresh machine has no package lists yet
    get();
  }
  const deb = readdirSync(download).find((file) => file.endsWith(".deb"));
  assert.ok(deb, `apt-get download ${name} gave no .deb`);
  rmSync(cache, { recursive: true, force: true });
  execFileSync("dpkg-deb", ["-x", join(download, deb), cache]);
  rmSync(download, { recursive: true, force: true });
  return busybox;
}

/** A root folder: /bin/busybox (static), /baton (a copy of `standaloneDir`), empty /proc and /tmp. */
export function busyboxRoot(standaloneDir: string, debArch?: string): string {
  const root = tempDir();
  for (const dir of ["bin", "proc", "tmp"]) mkdirSync(join(root, dir));
  cpSync(staticBusybox(debArch), join(root, "bin/busybox"));
  cpSync(standaloneDir, join(root, "baton"), { recursive: true });
  return root;
}
