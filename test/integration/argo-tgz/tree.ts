// A folder with every kind of entry an output artifact can hold, with fixed modes and times, for the .tgz vectors.
// `go run make-vectors.go` (beside this file) wrote the expected archives from the same folder with Go's archive/tar
// and compress/gzip, the way Argo's util/archive does; tgz.test.ts... see argo-artifacts.test.ts.
import { execFileSync } from "node:child_process";
import { chmodSync, lutimesSync, mkdirSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Seconds with a fraction: .6 rounds up, .4 down (Go's Time.Round(time.Second)). */
const UP = 1_700_000_000.6;
const DOWN = 1_700_000_100.4;

export const LONG_DIR = "d".repeat(60);
export const LONG_FILE = "f".repeat(60);
export const UNSPLITTABLE = "u".repeat(150);

/** Makes ROOT/out (a folder to archive) and ROOT/single.txt (a file to archive). */
export function makeTree(root: string): void {
  const out = join(root, "out");
  mkdirSync(join(out, "sub", LONG_DIR), { recursive: true });
  writeFileSync(join(out, "a.txt"), "hello\n");
  writeFileSync(join(out, "exec.sh"), "#!/bin/sh\n");
  writeFileSync(join(out, "sub", "deep.bin"), Buffer.alloc(1000, 7));
  writeFileSync(join(out, "sub", LONG_DIR, LONG_FILE), "long\n");
  writeFileSync(join(out, UNSPLITTABLE), "pax\n");
  writeFileSync(join(out, "café.txt"), "non-ascii\n");
  writeFileSync(join(out, "B-upper"), "sorts before a\n");
  symlinkSync("a.txt", join(out, "link"));
  execFileSync("mkfifo", ["-m", "0600", join(out, "fifo")]);
  writeFileSync(join(root, "single.txt"), "one file\n");
  for (const [path, mode] of [
    ["out/a.txt", 0o644], ["out/exec.sh", 0o4755], ["out/sub/deep.bin", 0o600], [`out/sub/${LONG_DIR}/${LONG_FILE}`, 0o640],
    [`out/${UNSPLITTABLE}`, 0o644], ["out/café.txt", 0o644], ["out/B-upper", 0o444], ["out/fifo", 0o600], ["single.txt", 0o640],
    [`out/sub/${LONG_DIR}`, 0o750], ["out/sub", 0o700], ["out", 0o755],
  ] as const) {
    chmodSync(join(root, path), mode);
  }
  for (const path of ["out/a.txt", "out/exec.sh", "out/sub/deep.bin", `out/sub/${LONG_DIR}/${LONG_FILE}`, `out/${UNSPLITTABLE}`, "out/café.txt", "out/B-upper", "out/fifo", "single.txt", `out/sub/${LONG_DIR}`, "out/sub", "out"]) {
    utimesSync(join(root, path), DOWN, path.includes("sub") ? UP : DOWN);
  }
  lutimesSync(join(out, "link"), UP, UP);
}
