// Where the conformance suites find the real peers (built by `make peers`: scripts/peers/build.sh) and the probe that
// every scenario runs as its command (probe.c, built here once per run).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";

export interface Peer {
  name: string;
  version: string;
  /** The binary. */
  path: string;
  sha256: string;
}

const PEERS_DIR = process.env.BATON_PEERS || join(homedir(), ".cache/baton-peers");

/** The peer named `name` in $BATON_PEERS/peers.tsv (`tekton-entrypoint`, `argoexec`, `argoexec-v3`, `tini`). */
export function peer(name: string): Peer {
  const table = join(PEERS_DIR, "peers.tsv");
  if (!existsSync(table)) throw new Error(`${table} is missing: \`make peers\` builds the peers`);
  const row = readFileSync(table, "utf8")
    .split("\n")
    .slice(1)
    .map((line) => line.split("\t"))
    .find(([peerName]) => peerName === name);
  if (!row) throw new Error(`${table} has no ${name}: \`make peers\` builds it`);
  const [, version, path, sha256] = row;
  return { name, version, path, sha256 };
}

const REPO = resolve(import.meta.dirname, "../..");

/** The probe (probe.c), static, built into build/conformance/ when its source is newer. */
export function probe(): string {
  const source = join(REPO, "test/conformance/probe.c");
  const binary = join(REPO, "build/conformance/probe");
  if (!existsSync(binary) || statSync(binary).mtimeMs < statSync(source).mtimeMs) {
    mkdirSync(join(REPO, "build/conformance"), { recursive: true });
    // A name of this process's own, renamed into place: the suites' files run at once and may build it together.
    const fresh = `${binary}.${process.pid}.new`;
    execFileSync("cc", ["-O2", "-Wall", "-Wextra", "-Werror", "-static", "-o", fresh, source]);
    renameSync(fresh, binary);
  }
  return binary;
}
