// The real programs baton stands in for, as `make peers` (scripts/peers/build.sh) lists them in $BATON_PEERS/peers.tsv:
// Tekton's entrypoint, Argo's argoexec (4.0 and 3.7) and Debian's tini. The bench runs them beside baton in its own
// temp folders (and Argo's in a mount namespace of the bench's own: argoNamespace below); a peer that is missing has
// its columns skipped, with the reason.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export const PEERS_DIR = process.env.BATON_PEERS || join(homedir(), ".cache/baton-peers");

const KEYS = { "tekton-entrypoint": "tekton", argoexec: "argoexec", "argoexec-v3": "argoexecV3", tini: "tini" };

/**
 * { tekton, argoexec, argoexecV3, tini }: each { path, version, label } when peers.tsv lists it and its file is there,
 * else { missing: why }.
 */
export function findPeers() {
  const table = join(PEERS_DIR, "peers.tsv");
  const peers = Object.fromEntries(Object.values(KEYS).map((key) => [key, { missing: `${table} is missing (make peers)` }]));
  if (!existsSync(table)) return peers;
  for (const key of Object.values(KEYS)) peers[key] = { missing: `not in ${table} (make peers)` };
  for (const line of readFileSync(table, "utf8").split("\n").slice(1)) {
    const [name, version, path] = line.split("\t");
    const key = KEYS[name];
    if (!key) continue;
    peers[key] = existsSync(path)
      ? { path, version, label: `${name} ${version}` }
      : { missing: `${path} is missing (make peers)` };
  }
  return peers;
}

/** The folder Argo's emissary reads and writes: it has no setting for it, so the bench gives it a mount of its own. */
export const ARGO_ROOT = "/var/run/argo";

/**
 * Argo's emissary works in /var/run/argo (the pod's emptyDir), with no way to point it elsewhere. The bench runs itself
 * in a private mount namespace of its own with a tmpfs there: `/run` (which /var/run links to) is covered by a tmpfs in
 * that namespace only, so nothing of the machine's /run is touched or seen. Returns true when this process is the one
 * in that namespace (and /var/run/argo is ready), false when it cannot be (not root, no unshare): Argo's columns are
 * then skipped. Otherwise it re-runs this script in the namespace and exits with its status.
 */
export function argoNamespace(log) {
  if (process.env.BATON_BENCH_MOUNT_NS === "1") {
    mkdirSync(ARGO_ROOT, { recursive: true });
    return true;
  }
  if (process.getuid?.() !== 0) return false;
  if (spawnSync("unshare", ["--mount", "--propagation", "private", "--", "true"]).status !== 0) {
    log("no mount namespace for Argo's emissary (unshare --mount failed): its columns are skipped");
    return false;
  }
  const script = 'mount -t tmpfs -o mode=0755 baton-bench /run || exit 97; exec "$@"';
  const r = spawnSync("unshare", ["--mount", "--propagation", "private", "--", "sh", "-c", script, "sh", process.execPath, ...process.argv.slice(1)], {
    stdio: "inherit",
    env: { ...process.env, BATON_BENCH_MOUNT_NS: "1" },
  });
  if (r.error || r.status === 97) {
    log(`no mount namespace for Argo's emissary (${r.error?.message ?? "the tmpfs on /run failed"}): its columns are skipped`);
    return false;
  }
  process.exit(r.status ?? 1);
}
