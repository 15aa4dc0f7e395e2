// Whether chokidar, with its default options, sees the two wait-file cases a step meets in a pod that fs.watch +
// stat (src/handoff/watch-folder.ts) sees: a wait file whose folder appears only later, and the `..data` symlink swap
// with which Kubernetes updates a downward-API volume. README.md's Dependencies table cites it.
//
//   node scripts/bench/deps.mjs 1 && node scripts/bench/chokidar-cases.mjs    (deps.mjs installs chokidar into .bench/deps)
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const deps = resolve(import.meta.dirname, "../../.bench/deps/node_modules/chokidar");
const { watch } = await import(createRequire(import.meta.url).resolve(deps));
const dir = mkdtempSync(join(tmpdir(), "chokidar-cases-"));
const seen = { "folder appears later": false, "..data swap": false };

const later = join(dir, "run/0/out");
const w1 = watch(later, { ignoreInitial: true }).on("all", () => (seen["folder appears later"] = true));
const volume = join(dir, "downward");
mkdirSync(join(volume, "..1"), { recursive: true });
symlinkSync("..1", join(volume, "..data"));
symlinkSync("..data/ready", join(volume, "ready"));
const w2 = watch(join(volume, "ready"), { ignoreInitial: true }).on("all", () => (seen["..data swap"] = true));
await new Promise((r) => setTimeout(r, 500));

mkdirSync(join(dir, "run/0"), { recursive: true });
writeFileSync(later, "");
mkdirSync(join(volume, "..2"));
writeFileSync(join(volume, "..2/ready"), "1");
symlinkSync("..2", join(volume, "..data_tmp"));
renameSync(join(volume, "..data_tmp"), join(volume, "..data")); // the kubelet's atomic swap
await new Promise((r) => setTimeout(r, 2000));

await Promise.all([w1.close(), w2.close()]);
rmSync(dir, { recursive: true, force: true });
for (const [name, ok] of Object.entries(seen)) console.log(`${name.padEnd(22)} ${ok ? "seen" : "MISSED"} (within 2 s)`);
