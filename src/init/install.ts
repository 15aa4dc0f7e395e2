import {
  closeSync, constants, existsSync, fchmodSync, lstatSync, mkdirSync, openSync, readdirSync, readlinkSync, readSync, realpathSync, renameSync, rmSync,
  symlinkSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { tektonRoot } from "../cli/step-options.js";
import { BatonError, describeSystemError, usageError } from "../base/errors.js";
import { warn } from "../base/warn.js";
import { ADDON_FILE } from "../addon/load-addon.js";
import { writeFileAtomic } from "../base/atomic-write.js";
import { createTemporaryBeside, makeFolders, openRegularFile, READ_LIMIT, readOpened, removeQuietly, temporaryName, writeAll } from "../base/safe-files.js";
import { standaloneLauncher, standaloneRoot } from "../process/standalone.js";

// `baton init DEST` and Tekton's `init SRC DST [STEP...]`, `cp SRC DST`, `step-init STEP...`, `decode-script FILE`:
// what an init container does to put baton into a shared volume (/tekton/bin) before the steps start.
// Loaded only in these modes, from the init chunk (src/init/load.ts).

/** The bundle's source maps and its chunks' (dist/baton.cjs.map, dist/baton-tekton.cjs.map, ...). */
const SOURCE_MAP = /^baton(?:-[a-z]+)?\.cjs\.map$/;

/** The file that is running now: the bundle (dist/baton.cjs), wherever it was copied to. */
function runningBundle(): string {
  return realpathSync(process.argv[1]!);
}

/**
 * Copies the running baton to `dest`, mode 0755. The one place that knows what "baton" is on disk: the bundle, or in
 * the standalone build its launcher plus the lib/ folder beside it (docs/standalone.md).
 */
export function installBaton(dest: string): void {
  const root = standaloneRoot();
  if (root === undefined) {
    // The bundle carries its chunks inside (src/process/chunks.ts); the optional reaper addon goes beside the copy, where
    // src/addon/load-addon.ts looks for it (the bundle's own folder), and so do the source maps, where BATON_DEBUG's
    // stacks look for them (src/process/source-stack.ts): a stack from a pod's copy names its lines in src/.
    const folder = dirname(runningBundle());
    const addon = join(folder, ADDON_FILE);
    if (existsSync(addon)) copyExecutable(addon, join(dirname(dest), ADDON_FILE));
    copySourceMaps(folder, dirname(dest));
    return copyExecutable(runningBundle(), dest); // last: a step that finds DEST finds the rest
  }
  const launcher = standaloneLauncher(root);
  if (realpathSync(root) !== realpathOrSelf(dirname(dest))) copyLibFolder(join(root, "lib"), join(dirname(dest), "lib"));
  copyExecutable(launcher, dest); // last: a step that finds DEST finds its lib/ complete
}

/**
 * Copies the standalone build's lib/ to `dest` as a whole: into a new temporary folder (mkdir never follows what is
 * there, and its name is unpredictable), then renamed into place, so that files a running baton has mapped are
 * replaced, never rewritten in place.
 */
function copyLibFolder(src: string, dest: string): void {
  const temporary = join(dirname(dest), temporaryName(basename(dest)));
  const previous = join(dirname(dest), temporaryName(basename(dest)));
  try {
    makeFolders(dirname(dest));
    copyFolder(src, temporary);
    if (existsSync(dest)) renameSync(dest, previous);
    renameSync(temporary, dest);
    rmSync(previous, { recursive: true, force: true });
  } catch (error) {
    rmSync(temporary, { recursive: true, force: true });
    throw new BatonError(`cannot copy ${src} to ${dest}: ${describeSystemError(error)}`);
  }
}

/**
 * Our own recursive copy of baton's lib/ (ours, so trusted) into `dest`, which must not exist: not cpSync, whose native
 * copy in Node 22+ reports a full disk as EIO.
 */
function copyFolder(src: string, dest: string): void {
  mkdirSync(dest, { mode: 0o700 });
  // The source's mode exactly, whatever the umask: under umask 077 lib/ would be 0700, and a step of another uid could
  // not start baton. fchmod on the folder just made (O_NOFOLLOW): nothing swapped in its place is changed.
  const fd = openSync(dest, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    fchmodSync(fd, lstatSync(src).mode & 0o7777);
  } finally {
    closeSync(fd);
  }
  for (const name of readdirSync(src)) {
    const from = join(src, name);
    const to = join(dest, name);
    const stats = lstatSync(from);
    if (stats.isDirectory()) copyFolder(from, to);
    else if (stats.isSymbolicLink()) symlinkSync(readlinkSync(from), to);
    else copyContent(from, openSync(to, "wx", stats.mode & 0o7777), stats.mode & 0o7777);
  }
}

// The copy is what every step of the pod runs (lib/baton-node, 109 MB, is mapped by each), and it is run from the page
// cache its writes left. A file system with large folios (ext4 since Linux 6.16, XFS) caches a write in folios as large
// as the write, and a page fault maps the whole folio: written 1 MiB at a time, each waiting step mapped 74 MiB of the
// copy (VmHWM, over row 5's 48 MiB) against 46 MiB of one read from disk, and handed on ~2 ms later, though it started
// ~10 ms sooner (docs/performance.md). Pieces of 64 KiB, the kernel's fault-around window (fault_around_bytes), map the
// same pages as a copy read from disk, in folios that a step's exit unmaps faster than single pages.
const WRITE_BYTES = 64 * 1024;

/**
 * Copies the regular file `src` into the open descriptor `fd`, sets its mode and closes it. `src` is baton's own, or
 * `cp SRC`'s: a symlink there is followed (an image's /usr/bin/x), but a FIFO or a device is refused, never blocks.
 */
function copyContent(src: string, fd: number, mode: number): void {
  try {
    const { fd: input } = openRegularFile(src, { followSymlink: true });
    try {
      const buffer = Buffer.allocUnsafe(WRITE_BYTES);
      for (let n; (n = readSync(input, buffer, 0, buffer.length, null)) > 0; ) writeAll(fd, buffer.subarray(0, n));
    } finally {
      closeSync(input);
    }
    fchmodSync(fd, mode);
  } finally {
    closeSync(fd);
  }
}

function realpathOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * Copies SRC to DEST, mode 0755, through a temporary file and rename, so a step that starts DEST never runs a half
 * copy. Tekton uses 0311 (execute, no read), which works only for a static binary: the bundle is a script that
 * node must read, and the standalone folder holds libraries the loader must read.
 */
export function copyExecutable(src: string, dest: string): void {
  copyFile(src, dest, 0o755);
}

/**
 * A map only names a stack's frames: the first that cannot be copied (a folder in its place, a full disk) is said in
 * one line, the rest are not tried, and init goes on.
 */
function copySourceMaps(from: string, to: string): void {
  try {
    for (const name of readdirSync(from).filter((file) => SOURCE_MAP.test(file))) copyFile(join(from, name), join(to, name), 0o644);
  } catch (error) {
    warn(`${error instanceof BatonError ? error.message : describeSystemError(error)} (BATON_DEBUG's stacks from this copy will not name src/)`);
  }
}

/** Copies SRC to DEST with `mode`, through a temporary file and rename: nobody ever reads a half copy. */
function copyFile(src: string, dest: string, mode: number): void {
  let temporary: string | undefined;
  try {
    makeFolders(dirname(dest));
    const created = createTemporaryBeside(dest, mode);
    temporary = created.temporary;
    copyContent(src, created.fd, mode);
    renameSync(temporary, dest);
  } catch (error) {
    if (temporary !== undefined) removeQuietly(temporary);
    throw new BatonError(`cannot copy ${src} to ${dest}: ${describeSystemError(error)}`);
  }
}

/** SRC is the entrypoint the controller knows of; when that is this baton, install baton (all of it, later). */
function copyFrom(src: string, dest: string): void {
  let isBaton = false;
  try {
    isBaton = realpathSync(src) === runningBundle();
  } catch {
    // SRC does not exist: copyExecutable reports it.
  }
  if (isBaton) installBaton(dest);
  else copyExecutable(src, dest);
}

/**
 * Tekton's step-init: /tekton/steps/<name> and /tekton/steps/<index>, symlinks to /tekton/run/<index>/status, so
 * tools can find a step's metadata by name or position. Links left by an earlier start of the container are replaced.
 */
export function stepInit(steps: readonly string[], tektonRoot: string): void {
  checkStepNames(steps);
  const stepsDir = join(tektonRoot, "steps");
  try {
    makeFolders(stepsDir);
    steps.forEach((step, index) => {
      const status = join(tektonRoot, "run", String(index), "status");
      for (const link of [join(stepsDir, step), join(stepsDir, String(index))]) {
        rmSync(link, { force: true });
        symlinkSync(status, link);
      }
    });
  } catch (error) {
    throw new BatonError(`cannot set up ${stepsDir}: ${describeSystemError(error)}`);
  }
}

/**
 * A step's name becomes a link's name in <root>/steps: a name, never a path. "../../x" would replace a file outside
 * the folder with a link (Tekton's filepath.Join does just that); "", "." and ".." name the folder or its parent, and
 * a NUL cannot be in a file name. A usage error before anything is copied or linked.
 */
function checkStepNames(steps: readonly string[]): void {
  for (const step of steps) {
    if (step === "" || step === "." || step === ".." || step.includes("/") || step.includes("\0")) {
      throw usageError(`invalid step name ${JSON.stringify(step)}: a step's name is a file name in the steps folder, without "/" or NUL, not "", "." or ".."`);
    }
  }
}

/**
 * Tekton's decode-script: the file holds base64 (the controller encodes scripts); decode it, into a new file with the
 * old one's mode renamed over it (Tekton rewrites it in place, through a symlink too).
 */
export function decodeScript(file: string): void {
  try {
    const { fd, stats } = openRegularFile(file);
    let encoded: string;
    try {
      encoded = readOpened(fd, stats, READ_LIMIT.script).toString("utf8").replace(/[\r\n]/g, "");
    } finally {
      closeSync(fd);
    }
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(encoded) || encoded.length % 4 !== 0) {
      throw new BatonError(`cannot decode script ${file}: not base64`);
    }
    writeFileAtomic(file, Buffer.from(encoded, "base64"), stats.mode & 0o7777);
  } catch (error) {
    if (error instanceof BatonError) throw error;
    throw new BatonError(`cannot decode script ${file}: ${describeSystemError(error)}`);
  }
}

/** Runs `baton init DEST` or one of Tekton's subcommands; returns baton's exit code. */
export function runInstallCommand(name: string, args: readonly string[], env: NodeJS.ProcessEnv): number {
  // `baton init --help` must not copy baton to a file named --help.
  if (args[0] === "--help" || args[0] === "-h") {
    process.stdout.write("usage: baton init DEST (or Tekton's: init SRC DST [STEP...], cp SRC DST)\n");
    return 0;
  }
  const option = args.find((arg) => arg.length > 1 && arg.startsWith("-"));
  if (option !== undefined) {
    throw usageError(`unknown option ${option} for baton ${name} (a path that starts with "-" can be given as ./${option})`);
  }
  const root = tektonRoot(env);
  switch (name) {
    case "init":
      if (args.length === 1) installBaton(args[0]!);
      else if (args.length >= 2) {
        checkStepNames(args.slice(2));
        copyFrom(args[0]!, args[1]!);
        stepInit(args.slice(2), root);
      } else throw usageError("usage: baton init DEST (or Tekton's: init SRC DST [STEP...])");
      return 0;
    case "cp":
      if (args.length !== 2) throw usageError("usage: baton cp SRC DST");
      copyFrom(args[0]!, args[1]!);
      return 0;
    case "step-init":
      stepInit(args, root);
      return 0;
    case "decode-script":
      if (args.length !== 1) throw usageError("usage: baton decode-script FILE");
      decodeScript(args[0]!);
      return 0;
    default:
      throw usageError(`unknown subcommand ${name}`);
  }
}
