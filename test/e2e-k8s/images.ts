// baton's image (`make image`, dist/baton-image.tar) in the cluster's containerd, under the name it is built with.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { CONTAINERD_SOCK, CTR, REPO } from "./kube.js";

const version = (JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { version: string }).version;
export const BATON_IMAGE = `ghcr.io/baton-dev/baton:${version}`;
const ARCHIVE = join(REPO, "dist/baton-image.tar");

export function importBatonImage(): void {
  if (!existsSync(ARCHIVE)) throw new Error(`${ARCHIVE} is missing: make image`);
  execFileSync(CTR, ["--address", CONTAINERD_SOCK, "-n", "k8s.io", "images", "import", ARCHIVE], { stdio: ["ignore", "ignore", "inherit"] });
}
