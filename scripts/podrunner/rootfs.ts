// A container's view of the filesystem, built the way a container runtime would but with the host standing in for the
// image: inside a private mount namespace, a tmpfs becomes the new root, every entry of the host's / is bind-mounted into
// it, /dev is a minimal container /dev, and each volume is bind-mounted at its mountPath. A mountPath that does not exist
// on the host (/tekton/run) is created inside the new root: any host folder on its way is rebuilt on the tmpfs from binds
// of its entries, so the host is never written to. The result is a shell script (kept in the run folder, readable) that
// ends by exec'ing `unshare --pid --fork --mount-proc --root=<new root>` so the command is PID 1 of its own PID namespace.
import { existsSync, lstatSync, readdirSync, readlinkSync, realpathSync } from "node:fs";
import { dirname, join, posix } from "node:path";

export interface BindMount {
  /** Absolute path inside the container. */
  target: string;
  /** Absolute host path. */
  source: string;
  /** True when source is a single file (a termination log), not a folder. */
  file: boolean;
  readOnly: boolean;
}

export interface ContainerRootfs {
  /** Empty host folder on which the new root's tmpfs is mounted (inside the namespace only). */
  root: string;
  mounts: BindMount[];
  workingDir: string;
  /** The command as PID 1 sees it, with its environment (the environment is passed through `env -i`). */
  argv: string[];
  env: [string, string][];
  /** Host file that gets the epoch ms at which the command is exec'd (Kubernetes' startedAt). */
  startedAtFile: string;
}

// Device nodes a container runtime gives every container (runc's default set).
const DEVICES = ["null", "zero", "full", "random", "urandom", "tty"];

export function rootfsScript(spec: ContainerRootfs): string {
  const R = spec.root;
  const lines: string[] = ["set -eu", `R=${q(R)}`, `mount -t tmpfs -o mode=755 podroot "$R"`];

  // Targets are resolved through host symlinks (/var/run -> /run) so nothing is created through a link that leads out.
  const mounts = spec.mounts.map((m) => ({ ...m, target: resolveOnHost(m.target) })).sort((a, b) => depth(a.target) - depth(b.target));
  const workingDir = resolveOnHost(spec.workingDir);
  const rebuilt = new Set<string>(["/"]);
  const missing = [...mounts.map((m) => m.target), workingDir].filter((p) => !underDev(p) && !underOther(p, mounts) && !existsSync(p));
  for (const path of missing) {
    for (let dir = dirname(path); ; dir = dirname(dir)) {
      if (existsSync(dir)) {
        for (let up = dir; ; up = dirname(up)) {
          rebuilt.add(up);
          if (up === "/") break;
        }
        break;
      }
    }
  }
  for (const path of rebuilt) {
    if (path === "/proc" || path === "/sys" || path.startsWith("/proc/") || path.startsWith("/sys/")) {
      throw new Error(`cannot mount a volume under ${path}`);
    }
  }
  // Every process exec'd here costs a few ms (more on a busy machine), so folders are made by one mkdir.
  const tree: Tree = { dirs: [], modes: [], ops: [] };
  populate("/", rebuilt, tree);
  lines.push(`mkdir ${tree.dirs.map((d) => `"$R"${q(d)}`).join(" ")}`);
  for (const [mode, dir] of tree.modes) lines.push(`chmod ${mode} "$R"${q(dir)}`);
  lines.push(...tree.ops);

  lines.push(
    `mount -t tmpfs -o mode=755,nosuid podsdev "$R/dev"`,
    `mkdir "$R/dev/pts" "$R/dev/shm"`,
    ...DEVICES.map((d) => `: > "$R/dev/${d}"; mount --bind /dev/${d} "$R/dev/${d}"`),
    `mount --rbind /dev/pts "$R/dev/pts"`,
    `mount -t tmpfs -o mode=1777,nosuid,nodev shm "$R/dev/shm"`,
    `ln -s pts/ptmx "$R/dev/ptmx"; ln -s /proc/self/fd "$R/dev/fd"`,
    `ln -s /proc/self/fd/0 "$R/dev/stdin"; ln -s /proc/self/fd/1 "$R/dev/stdout"; ln -s /proc/self/fd/2 "$R/dev/stderr"`,
  );

  for (const m of mounts) {
    const at = `"$R"${q(m.target)}`;
    if (m.file) lines.push(`[ -e ${at} ] || { [ -d "$R"${q(dirname(m.target))} ] || mkdir -p "$R"${q(dirname(m.target))}; : > ${at}; }`);
    else lines.push(`[ -d ${at} ] || mkdir -p ${at}`);
    lines.push(`mount --bind ${q(m.source)} ${at}`);
    if (m.readOnly) lines.push(`mount -o remount,bind,ro ${at}`);
  }
  lines.push(`[ -d "$R"${q(workingDir)} ] || mkdir -p "$R"${q(workingDir)}`);

  const env = spec.env.map(([k, v]) => q(`${k}=${v}`));
  lines.push(
    `date +%s%3N > ${q(spec.startedAtFile)}`,
    `exec unshare --pid --fork --mount-proc --kill-child --root="$R" --wd=${q(workingDir)} -- /usr/bin/env -i ${env.join(" ")} ${spec.argv.map(q).join(" ")}`,
  );
  return lines.join("\n") + "\n";
}

interface Tree {
  /** Folders to make, parents first. */
  dirs: string[];
  /** Modes other than 755 of rebuilt folders (/tmp's 1777). */
  modes: [string, string][];
  /** Binds and links, once the folders exist. */
  ops: string[];
}

/** Rebuilds host folder `dir` inside the new root: folders on the way to a missing mountPath are recreated, the rest bound. */
function populate(dir: string, rebuilt: Set<string>, tree: Tree): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = posix.join(dir, entry.name);
    const at = `"$R"${q(path)}`;
    if (path === "/proc" || path === "/dev") {
      tree.dirs.push(path);
    } else if (rebuilt.has(path)) {
      tree.dirs.push(path);
      const mode = (lstatSync(path).mode & 0o7777).toString(8);
      if (mode !== "755") tree.modes.push([mode, path]);
      populate(path, rebuilt, tree);
    } else if (entry.isSymbolicLink()) {
      tree.ops.push(`ln -s ${q(readlinkSync(path))} ${at}`);
    } else if (entry.isDirectory()) {
      tree.dirs.push(path);
      tree.ops.push(`mount --rbind ${q(path)} ${at}`);
    } else {
      tree.ops.push(`: > ${at}; mount --bind ${q(path)} ${at}`);
    }
  }
}

/** The path with its longest existing prefix replaced by that prefix's real path. */
function resolveOnHost(path: string): string {
  const normal = posix.normalize(path);
  let prefix = normal;
  while (!existsSync(prefix)) prefix = dirname(prefix);
  const rest = posix.relative(prefix, normal);
  return join(realpathSync(prefix), rest);
}

function underDev(path: string): boolean {
  return path.startsWith("/dev/");
}

function underOther(path: string, mounts: BindMount[]): boolean {
  return mounts.some((m) => m.target !== path && path.startsWith(m.target.endsWith("/") ? m.target : m.target + "/"));
}

function depth(path: string): number {
  return path.split("/").length;
}

export function q(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
