// The images `make e2e` runs, all made on this machine with no registry:
//  - baton's image, `podman load` of dist/baton-image.tar (`make image`);
//  - busybox: Debian's busybox-static with a link per applet, as the busybox image has them, `podman import`ed under the
//    name the examples use (docker.io/library/busybox:1.35, Debian 12's busybox version), so the manifests name the
//    image a cluster would pull;
//  - busybox with baton copied in: examples/Containerfile (`COPY --from=` baton's image), built by `podman build`;
//  - podman's own pause image, which it builds from catatonit for the first pod.
import { chmodSync, copyFileSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { appletPaths, staticBusybox } from "../../scripts/podrunner/busybox.js";
import { IMAGE_ARCHIVE, Podman, REPO, VERSION, run } from "./podman.js";

export const BATON_IMAGE = `ghcr.io/baton-dev/baton:${VERSION}`;
export const BUSYBOX_IMAGE = "docker.io/library/busybox:1.35";
export const BUSYBOX_BATON_IMAGE = `localhost/busybox-baton:${VERSION}`;

export async function loadBatonImage(podman: Podman): Promise<string> {
  const { stdout } = await podman.podman(["load", "--input", IMAGE_ARCHIVE]);
  return stdout;
}

export async function importBusyboxImage(podman: Podman): Promise<void> {
  const root = podman.folder("busybox-root");
  for (const dir of ["bin", "etc", "root", "tmp"]) mkdirSync(join(root, dir), { recursive: true });
  chmodSync(join(root, "tmp"), 0o1777);
  writeFileSync(join(root, "etc/passwd"), "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false\n");
  writeFileSync(join(root, "etc/group"), "root:x:0:\nnogroup:x:65534:\n");
  copyFileSync(staticBusybox(), join(root, "bin/busybox"));
  chmodSync(join(root, "bin/busybox"), 0o755);
  for (const applet of appletPaths()) {
    if (applet === "bin/busybox") continue;
    mkdirSync(join(root, dirname(applet)), { recursive: true });
    symlinkSync("/bin/busybox", join(root, applet));
  }
  const archive = join(podman.dir, "busybox.tar");
  const tar = await run("tar", ["-C", root, "-cf", archive, "."]);
  if (tar.code !== 0) throw new Error(`tar: ${tar.stderr}`);
  await podman.podman([
    "import", "--change", "ENV=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "--change", 'CMD ["sh"]',
    archive, BUSYBOX_IMAGE,
  ]);
}

/** examples/Containerfile, the docs' `COPY --from` recipe, as written. */
export async function buildBusyboxBatonImage(podman: Podman): Promise<void> {
  await podman.podman(["build", "--quiet", "--tag", BUSYBOX_BATON_IMAGE, "--file", join(REPO, "examples/Containerfile"), join(REPO, "examples")]);
}

export async function allImages(podman: Podman): Promise<void> {
  await loadBatonImage(podman);
  await importBusyboxImage(podman);
  await buildBusyboxBatonImage(podman);
  // podman builds its pause image (catatonit) for the first pod of a storage: here, not in the first test's time.
  await podman.podman(["pod", "create", "--network", "none", "--name", "warm-up"]);
  await podman.podman(["pod", "rm", "--force", "warm-up"]);
}
