// Debian's busybox-static: the one program of the busybox image that `make e2e` builds, of the tests' image roots
// (test/integration/sea.test.ts), and, through a folder of its applets put first on the PATH, what the examples'
// commands run on in the pod runner, which lets the host stand in for the image (`make demo`, the podrunner tests).
// Downloaded with `apt-get download` and unpacked into build/ once, never installed; for another architecture too
// (arm64: the package lists need `dpkg --add-architecture arm64`, which `make sea ARCH=arm64` does).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";

const CACHE = resolve(import.meta.dirname, "../../build/busybox-static");

/** The path of the static busybox binary for Debian architecture `debArch` (none: this machine's). */
export function staticBusybox(debArch?: string): string {
  const cache = debArch ? `${CACHE}-${debArch}` : CACHE;
  const busybox = join(cache, "bin", "busybox");
  if (existsSync(busybox)) return busybox;
  const download = mkdtempSync(join(tmpdir(), "busybox-static-"));
  const name = debArch ? `busybox-static:${debArch}` : "busybox-static";
  const get = () => execFileSync("apt-get", ["download", "-qq", name], { cwd: download, stdio: "pipe" });
  try {
    try {
      get();
    } catch {
      execFileSync("apt-get", ["update", "-qq"], { stdio: "pipe" }); // a fresh machine has no package lists yet
      get();
    }
    const deb = readdirSync(download).find((name) => name.endsWith(".deb"));
    if (!deb) throw new Error(`apt-get download ${name} gave no .deb`);
    rmSync(cache, { recursive: true, force: true });
    execFileSync("dpkg-deb", ["-x", join(download, deb), cache]);
  } finally {
    rmSync(download, { recursive: true, force: true });
  }
  return busybox;
}

/** Every applet as it sits in the busybox image (sh in /bin, wget in /usr/bin, ...), from `busybox --list-full`. */
export function appletPaths(busybox = staticBusybox()): string[] {
  return execFileSync(busybox, ["--list-full"], { encoding: "utf8" }).split("\n").filter(Boolean);
}

/** A folder of links, one per applet, to put first on a PATH: `sh`, `httpd`, `nc`, `wget` are then busybox's. */
export function busyboxApplets(): string {
  const folder = join(CACHE, "applets");
  if (existsSync(folder)) return folder;
  const busybox = staticBusybox();
  const temporary = `${folder}.${process.pid}.tmp`;
  mkdirSync(temporary, { recursive: true });
  for (const path of appletPaths(busybox)) symlinkSync(busybox, join(temporary, basename(path)));
  try {
    renameSync(temporary, folder);
  } catch (error) {
    rmSync(temporary, { recursive: true, force: true });
    if (!existsSync(folder)) throw error; // else another process made it first
  }
  return folder;
}

/**
 * The environment of an image that the host stands in for: PATH = EXTRA folders first (where baton is), then busybox's
 * applets (the examples' images are busybox), then the host's own programs. Only the containers get it: the runner's
 * own tools (setpriv, nsenter, mount) must stay the host's.
 */
export function busyboxImageEnv(...extra: string[]): Record<string, string> {
  return { PATH: [...extra, busyboxApplets(), process.env.PATH ?? "/usr/bin:/bin"].join(":"), HOME: "/root" };
}
