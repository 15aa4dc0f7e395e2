// Builds dist/baton-image.tar (`make image`; docs: "Putting baton into an image"): an OCI image of the standalone
// folder, written here byte by byte, with no container engine, no registry and no daemon. One archive holds
//
//   oci-layout, index.json   an OCI image layout (`skopeo copy oci-archive:`, `podman load`; Docker's containerd store)
//                            whose index.json names one multi-platform image index, one image per --platform
//   manifest.json            the same blobs in `docker save`'s format, for `docker load` on Docker's classic store,
//                            which can tag one image per name: the first platform given
//   blobs/sha256/...         per platform: one gzipped layer, its config, its manifest; the image index
//
// Each image has one layer: the folder at /baton/ (`COPY --from=IMAGE /baton /baton`) and /ko-app/entrypoint, a
// relative symlink to /baton/baton, the path Tekton's controller runs in its `prepare` init container
// (`/ko-app/entrypoint init /ko-app/entrypoint /tekton/bin/entrypoint step-...`): baton's `init` resolves the link,
// finds its own folder and copies launcher and lib/ to /tekton/bin/, so the image can be given unchanged to the
// controller's -entrypoint-image.
//
// Reproducible: the same folders and the same commit give the same bytes, hence the same digest. Every timestamp is
// the commit's time (SOURCE_DATE_EPOCH overrides it), owners are 0:0, modes are 0755 or 0644, entries are sorted, JSON
// keys are written in a fixed order, and gzip runs in the Node that runs this script: `make image` runs it with the
// pinned Node of scripts/sea (zlib's output may change between zlib versions, never between runs of one).
//
// Usage: node scripts/image.mjs --platform=linux/amd64=dist/baton-linux-x64 [--platform=linux/arm64=DIR ...]
//          [--name=ghcr.io/baton-dev/baton] [--source=URL] [--out=dist/baton-image.tar]
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { gzipSync } from "node:zlib";

const root = resolve(dirname(new URL(import.meta.url).pathname), "..");
const { version, license } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));

const platforms = [];
const options = { name: "ghcr.io/baton-dev/baton", source: "https://github.com/baton-dev/baton", out: "dist/baton-image.tar" };
for (const arg of process.argv.slice(2)) {
  const platform = /^--platform=linux\/(amd64|arm64)=(.+)$/.exec(arg);
  const option = /^--(name|source|out)=(.+)$/.exec(arg);
  if (platform) platforms.push({ architecture: platform[1], folder: resolve(root, platform[2]) });
  else if (option) options[option[1]] = option[2];
  else fail(`unknown argument ${arg} (usage: --platform=linux/amd64|arm64=FOLDER... [--name=] [--source=] [--out=])`);
}
if (platforms.length === 0) fail("no --platform=linux/ARCH=FOLDER given");
if (new Set(platforms.map((p) => p.architecture)).size !== platforms.length) fail("a platform is given twice");

const reference = `${options.name}:${version}`;
const revision = git(["rev-parse", "HEAD"]);
const epoch = Number(process.env.SOURCE_DATE_EPOCH ?? git(["log", "-1", "--format=%ct"]) ?? 0);
if (!Number.isInteger(epoch) || epoch < 0) fail(`SOURCE_DATE_EPOCH must be a whole number of seconds, not ${process.env.SOURCE_DATE_EPOCH}`);
const created = new Date(epoch * 1000).toISOString().replace(/\.000Z$/, "Z");

// What ships beside baton's own code (Apache-2.0), as SPDX: Node (MIT), the CEL evaluator's packages in the CEL
// chunk inside lib/baton-node (@bufbuild/cel, cel-spec, protobuf: Apache-2.0; @bufbuild/re2: MIT), glibc
// (LGPL-2.1-or-later), libstdc++ and libgcc_s (GPL-3.0-or-later WITH GCC-exception-3.1). Their texts are in /baton/lib/licenses/.
const licenses = [license, "MIT", "LGPL-2.1-or-later", "GPL-3.0-or-later WITH GCC-exception-3.1"].join(" AND ");
const labels = {
  "org.opencontainers.image.title": "baton",
  "org.opencontainers.image.description": "Entrypoint wrapper for pipeline pods, standalone (no Node or libc needed in the step's image): /baton/baton, and /ko-app/entrypoint for Tekton's -entrypoint-image",
  "org.opencontainers.image.version": version,
  "org.opencontainers.image.revision": revision ?? "unknown",
  "org.opencontainers.image.source": options.source,
  "org.opencontainers.image.licenses": licenses,
  "org.opencontainers.image.created": created,
};

const MEDIA = {
  index: "application/vnd.oci.image.index.v1+json",
  manifest: "application/vnd.oci.image.manifest.v1+json",
  config: "application/vnd.oci.image.config.v1+json",
  layer: "application/vnd.oci.image.layer.v1.tar+gzip",
};
const blobs = new Map(); // digest -> Buffer

const images = platforms.map(({ architecture, folder }) => {
  const launcher = join(folder, "baton");
  if (!lstatSync(launcher, { throwIfNoEntry: false })?.isFile()) fail(`${launcher} is missing: run \`make sea\` first`);
  checkArchitecture(join(folder, "lib/baton-node"), architecture);
  const layerTar = tar([
    ...folderEntries(folder, "baton"),
    { name: "ko-app/", type: "dir" },
    { name: "ko-app/entrypoint", type: "symlink", target: "../baton/baton" },
  ]);
  const layer = gzipSync(layerTar, { level: 9 });
  const config = {
    created,
    architecture,
    ...(architecture === "arm64" ? { variant: "v8" } : {}),
    os: "linux",
    config: {
      Env: ["PATH=/baton:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
      Entrypoint: ["/baton/baton"],
      WorkingDir: "/",
      Labels: labels,
    },
    rootfs: { type: "layers", diff_ids: [sha256(layerTar)] },
    history: [{ created, created_by: "make image (scripts/image.mjs): /baton/ and /ko-app/entrypoint -> ../baton/baton" }],
  };
  const configDescriptor = addBlob(MEDIA.config, json(config));
  const layerDescriptor = addBlob(MEDIA.layer, layer);
  const manifest = { schemaVersion: 2, mediaType: MEDIA.manifest, config: configDescriptor, layers: [layerDescriptor] };
  const platform = { architecture, os: "linux", ...(architecture === "arm64" ? { variant: "v8" } : {}) };
  return { ...addBlob(MEDIA.manifest, json(manifest)), platform, configDescriptor, layerDescriptor, layerTarSize: layerTar.length };
});

const index = {
  schemaVersion: 2,
  mediaType: MEDIA.index,
  manifests: images.map(({ mediaType, digest, size, platform }) => ({ mediaType, digest, size, platform })),
  annotations: { "org.opencontainers.image.version": version, "org.opencontainers.image.revision": labels["org.opencontainers.image.revision"] },
};
const indexDescriptor = addBlob(MEDIA.index, json(index));
// The layout's own index.json names the image index: by full reference (Docker's containerd store, podman) and by tag
// (the OCI convention that skopeo's `oci-archive:FILE:TAG` reads).
const layoutIndex = {
  schemaVersion: 2,
  mediaType: MEDIA.index,
  manifests: [{
    ...indexDescriptor,
    annotations: { "io.containerd.image.name": reference, "org.opencontainers.image.ref.name": version },
  }],
};
const [first] = images;
const dockerManifest = [{
  Config: blobPath(first.configDescriptor.digest),
  RepoTags: [reference],
  Layers: [blobPath(first.layerDescriptor.digest)],
}];

const archive = tar([
  { name: "blobs/", type: "dir" },
  { name: "blobs/sha256/", type: "dir" },
  ...[...blobs].sort(([a], [b]) => (a < b ? -1 : 1)).map(([digest, data]) => ({ name: blobPath(digest), type: "file", data, mode: 0o644 })),
  { name: "index.json", type: "file", data: json(layoutIndex), mode: 0o644 },
  { name: "manifest.json", type: "file", data: json(dockerManifest), mode: 0o644 },
  { name: "oci-layout", type: "file", data: json({ imageLayoutVersion: "1.0.0" }), mode: 0o644 },
]);
const out = resolve(root, options.out);
// Through a temporary file renamed into place: an interrupted or failed write never leaves a half archive at OUT.
try {
  writeFileSync(`${out}.tmp`, archive);
  renameSync(`${out}.tmp`, out);
} catch (error) {
  rmSync(`${out}.tmp`, { force: true });
  fail(`cannot write ${out}: ${error.code ?? error.message}`);
}

const mb = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;
for (const image of images) {
  console.log(`image.mjs: linux/${image.platform.architecture} ${image.digest}: layer ${mb(image.layerDescriptor.size)} gzipped (${mb(image.layerTarSize)} unpacked)`);
}
console.log(`image.mjs: ${out} (${mb(archive.length)}): ${reference} ${indexDescriptor.digest}`);

// --- helpers ---

function fail(message) {
  process.stderr.write(`image.mjs: ${message}\n`);
  process.exit(2);
}

function git(args) {
  try {
    return execFileSync("git", args, { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return undefined; // not a git checkout (a source tarball): set SOURCE_DATE_EPOCH for a reproducible date
  }
}

function sha256(data) {
  return `sha256:${createHash("sha256").update(data).digest("hex")}`;
}

function json(value) {
  return Buffer.from(JSON.stringify(value));
}

function addBlob(mediaType, data) {
  const digest = sha256(data);
  blobs.set(digest, data);
  return { mediaType, digest, size: data.length };
}

function blobPath(digest) {
  return `blobs/${digest.replace(":", "/")}`;
}

// The ELF header's e_machine (offset 18, little-endian): 0x3e x86-64, 0xb7 AArch64. An image that says arm64 but
// holds x86-64 code would pass every test on this machine and fail on every arm64 node.
function checkArchitecture(file, architecture) {
  const header = readFileSync(file).subarray(0, 20);
  const machine = header.readUInt16LE(18);
  const expected = { amd64: 0x3e, arm64: 0xb7 }[architecture];
  if (header.toString("latin1", 0, 4) !== "\x7fELF" || machine !== expected) {
    fail(`${file} is not a linux/${architecture} program (ELF machine 0x${machine.toString(16)})`);
  }
}

// The folder's entries under PREFIX/, sorted, with modes reduced to 0755 (directories, executables) or 0644.
function folderEntries(folder, prefix) {
  const entries = [{ name: `${prefix}/`, type: "dir" }];
  for (const name of readdirSync(folder).sort()) {
    const path = join(folder, name);
    const stat = lstatSync(path);
    if (stat.isDirectory()) entries.push(...folderEntries(path, `${prefix}/${name}`));
    else if (stat.isSymbolicLink()) entries.push({ name: `${prefix}/${name}`, type: "symlink", target: readlinkSync(path) });
    else if (stat.isFile()) entries.push({ name: `${prefix}/${name}`, type: "file", data: readFileSync(path), mode: stat.mode & 0o111 ? 0o755 : 0o644 });
    else fail(`${path}: not a file, folder or symlink`);
  }
  return entries;
}

// A POSIX ustar archive (the format every OCI tool reads): 512-byte headers, data padded to 512, two zero blocks.
function tar(entries) {
  const blocks = [];
  for (const entry of entries) {
    const header = Buffer.alloc(512);
    const name = Buffer.from(entry.name);
    let prefix = Buffer.alloc(0);
    let short = name;
    if (name.length > 100) {
      // ustar splits a long name at a slash: prefix (155 bytes) + name (100 bytes).
      const cut = entry.name.lastIndexOf("/", entry.name.length - 2);
      prefix = Buffer.from(entry.name.slice(0, cut));
      short = Buffer.from(entry.name.slice(cut + 1));
      if (cut < 0 || prefix.length > 155 || short.length > 100) fail(`name too long for tar: ${entry.name}`);
    }
    const data = entry.type === "file" ? entry.data : Buffer.alloc(0);
    short.copy(header, 0);
    octal(header, 100, 8, entry.type === "file" ? entry.mode : 0o755 + (entry.type === "symlink" ? 0o022 : 0));
    octal(header, 108, 8, 0); // uid
    octal(header, 116, 8, 0); // gid
    octal(header, 124, 12, data.length);
    octal(header, 136, 12, epoch);
    header.write("        ", 148, "latin1"); // checksum field counts as spaces while summing
    header.write({ file: "0", symlink: "2", dir: "5" }[entry.type], 156, "latin1");
    if (entry.type === "symlink") header.write(entry.target, 157, "utf8");
    header.write("ustar\x0000", 257, "latin1");
    header.write("root", 265, "latin1");
    header.write("root", 297, "latin1");
    prefix.copy(header, 345);
    let sum = 0;
    for (const byte of header) sum += byte;
    header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, "latin1");
    blocks.push(header, data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

function octal(header, offset, length, value) {
  header.write(`${value.toString(8).padStart(length - 1, "0")}\0`, offset, "latin1");
}
