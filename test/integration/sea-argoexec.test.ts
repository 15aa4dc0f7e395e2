// The standalone folder's argoexec (scripts/sea/argoexec.c, docs/argo.md): the file an Argo executor image built by
// docs/argo.md's recipe has at /bin/argoexec, which Argo's init container copies into every pod. Here it runs as a
// real process from a folder laid out as that image's /bin: DIR/argoexec, DIR/baton/ (baton's folder, or a script
// that shows what it was given) and DIR/baton/argo/argoexec (Argo's own, a script standing in for it).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync, copyFileSync, cpSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync,
} from "node:fs";
import { IS_ROOT, STANDALONE_DIR, existsSync, join, tempDir } from "./helpers.js";

const ARGOEXEC = join(STANDALONE_DIR, "argoexec");
const skip = !IS_ROOT && "needs root for a private /dev (the termination message)";

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  pid: number;
}

function run(program: string, args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((done) => {
    const child = execFile(program, args, { env, encoding: "utf8" }, (error, stdout, stderr) => {
      done({ code: error ? (typeof error.code === "number" ? error.code : null) : 0, stdout, stderr, pid: child.pid! });
    });
  });
}

/** An executor image's /bin in a temporary folder, and a /var/run/argo beside it. */
function layout(t: { after(fn: () => void): void }, { baton = "script", argo = true } = {}): { bin: string; root: string; env: NodeJS.ProcessEnv } {
  const dir = tempDir();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const bin = join(dir, "bin");
  const root = join(dir, "var-run-argo");
  mkdirSync(root);
  mkdirSync(bin);
  copyFileSync(ARGOEXEC, join(bin, "argoexec"));
  if (baton === "folder") cpSync(STANDALONE_DIR, join(bin, "baton"), { recursive: true });
  else mkdirSync(join(bin, "baton"));
  if (baton === "script") script(join(bin, "baton/baton"), 'echo "baton pid=$$ argv0=$0 args=$*"');
  if (argo) {
    mkdirSync(join(bin, "baton/argo"));
    // What Argo's init does with the binary: the `argoexec` it finds on PATH (emissary/binary.go copyBinary).
    script(join(bin, "baton/argo/argoexec"), 'echo "argo pid=$$ args=$* copies=$(command -v argoexec)"');
  }
  return { bin, root, env: { PATH: `${bin}:/usr/bin:/bin`, BATON_ARGO_ROOT: root } };
}

function script(path: string, body: string): void {
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
}

function sha256(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

/** Every file under `dir`, relative, with its mode, sorted. */
function listing(dir: string, prefix = ""): string[] {
  return readdirSync(dir).sort().flatMap((name) => {
    const path = join(dir, name);
    const mode = (lstatSync(path).mode & 0o7777).toString(8);
    return lstatSync(path).isDirectory() ? [`${prefix}${name}/ ${mode}`, ...listing(path, `${prefix}${name}/`)] : [`${prefix}${name} ${mode}`];
  });
}

test("emissary and kill go to baton's folder, everything else to Argo's own argoexec, by exec (same pid), argv unchanged", async (t) => {
  const { bin, env } = layout(t);
  const cases: [string[], RegExp][] = [
    [["emissary", "--loglevel", "info", "--log-format", "text", "--gloglevel", "0", "--", "sh", "-c", "echo hi"],
      /^baton pid=(\d+) argv0=.*\/bin\/baton\/baton args=emissary --loglevel info --log-format text --gloglevel 0 -- sh -c echo hi\n$/],
    [["kill", "15", "1"], /^baton pid=(\d+) argv0=\S+ args=kill 15 1\n$/],
    [["wait", "--loglevel", "info"], /^argo pid=(\d+) args=wait --loglevel info /],
    [["artifact-plugin-init", "--plugin-name", "x"], /^argo pid=(\d+) args=artifact-plugin-init --plugin-name x /],
    [["version"], /^argo pid=(\d+) args=version /],
    [[], /^argo pid=(\d+) args= /],
  ];
  for (const [args, expected] of cases) {
    for (const program of [join(bin, "argoexec"), "argoexec"]) {
      const result = await run(program, args, env);
      assert.equal(result.code, 0, result.stderr);
      const match = expected.exec(result.stdout);
      assert.ok(match, `${args.join(" ")}: ${result.stdout}`);
      assert.equal(Number(match[1]), result.pid, "exec, not a child: the container's PID 1 stays PID 1");
    }
  }
});

test("init copies baton's folder (with Argo's own argoexec) to /var/run/argo/baton, read-only for all, then runs Argo's init", async (t) => {
  const { bin, root, env } = layout(t, { baton: "folder" });
  const init = await run("argoexec", ["init", "--loglevel", "info"], env);
  assert.equal(init.code, 0, init.stderr);
  assert.equal(init.stderr, "");
  // Argo's own init ran next, with its arguments, and found this file as `argoexec` on PATH: the one it copies.
  assert.match(init.stdout, new RegExp(`^argo pid=${init.pid} args=init --loglevel info copies=${join(bin, "argoexec")}\n$`));
  assert.deepEqual(readdirSync(root), ["baton"], "no temporary folder left");
  const copied = join(root, "baton");
  const files = listing(copied);
  assert.deepEqual(files.map((f) => f.split(" ")[0]), listing(join(bin, "baton")).map((f) => f.split(" ")[0]));
  for (const file of files) {
    const [name, mode] = file.split(" ");
    const expected = name!.endsWith("/") ? "755" : statSync(join(bin, "baton", name!)).mode & 0o111 ? "555" : "444";
    assert.equal(mode, expected, name);
  }
  for (const file of ["baton", "argoexec", "lib/baton-node", "argo/argoexec"]) {
    assert.equal(sha256(join(copied, file)), sha256(join(bin, "baton", file)), file);
  }
  // The copy runs: its launcher finds its lib/ where the init put it.
  const version = await run(join(copied, "baton"), ["--version"], {});
  assert.match(version.stdout, /^baton \d+\.\d+\.\d+/, version.stderr);

  // An init run again in the same pod keeps the complete copy it finds.
  const inode = statSync(join(copied, "lib/baton-node")).ino;
  const again = await run("argoexec", ["init"], env);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(statSync(join(copied, "lib/baton-node")).ino, inode);
});

test("init with an image not built by the recipe: exit 64, one line, nothing copied, Argo's init not run", async (t) => {
  for (const [options, missing] of [
    [{ argo: false }, /\/bin\/baton\/argo\/argoexec: No such file or directory \(the executor image is not built by docs\/argo\.md's recipe\)/],
    [{ baton: "none" }, /\/bin\/baton\/baton: No such file or directory/],
  ] as const) {
    const { root, env } = layout(t, options);
    const init = await run("argoexec", ["init"], env);
    assert.equal(init.code, 64);
    assert.equal(init.stdout, "");
    assert.match(init.stderr, /^baton: argoexec: [^\n]*\n$/);
    assert.match(init.stderr, missing);
    assert.deepEqual(readdirSync(root), []);
  }
});

test("init when /var/run/argo/baton is something else than a folder: exit 64, nothing followed", async (t) => {
  const { root, env } = layout(t);
  const elsewhere = join(root, "..", "elsewhere");
  mkdirSync(elsewhere);
  symlinkSync(elsewhere, join(root, "baton"));
  const init = await run("argoexec", ["init"], env);
  assert.equal(init.code, 64);
  assert.match(init.stderr, /^baton: argoexec: .*\/baton is there and is not a folder\n$/);
  assert.deepEqual(readdirSync(elsewhere), []);
});

/** argoexec in a mount namespace whose /dev is a fresh tmpfs holding an empty termination-log, as the kubelet mounts. */
async function withPrivateDev(args: string[], env: NodeJS.ProcessEnv): Promise<Run & { message: string }> {
  const script = 'mount -t tmpfs tmpfs /dev && : > /dev/termination-log || exit 99; "$@"; code=$?; cat /dev/termination-log; echo; exit $code';
  const result = await run("unshare", ["--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh", ...args], env);
  const lines = result.stdout.split("\n");
  return { ...result, message: lines.at(-2) ?? "", stdout: lines.slice(0, -2).join("\n") };
}

test("emissary when baton cannot run: exit 64, one line, the termination message, and 64 in the exitcode file (nothing waits forever)", { skip }, async (t) => {
  const { bin, root, env } = layout(t, { baton: "none" });
  const result = await withPrivateDev([join(bin, "argoexec"), "emissary", "--", "true"], { ...env, ARGO_CONTAINER_NAME: "main" });
  assert.equal(result.code, 64, result.stderr);
  assert.match(result.stderr, /^baton: argoexec: cannot run .*\/bin\/baton\/baton: No such file or directory\n$/);
  assert.equal(result.message, result.stderr.trimEnd());
  assert.equal(readFileSync(join(root, "ctr/main/exitcode"), "utf8"), "64");
  assert.equal(statSync(join(root, "ctr/main/exitcode")).mode & 0o777, 0o644);
  assert.equal(statSync(join(root, "ctr/main")).mode & 0o777, 0o777, "Argo's mode: containers of other users write there");
  assert.deepEqual(readdirSync(join(root, "ctr/main")), ["exitcode"]);
});

test("emissary when baton cannot run and ctr/NAME is another container's symlink: not followed", { skip }, async (t) => {
  const { bin, root, env } = layout(t, { baton: "none" });
  const elsewhere = join(root, "..", "elsewhere");
  mkdirSync(elsewhere);
  mkdirSync(join(root, "ctr"));
  symlinkSync(elsewhere, join(root, "ctr/main"));
  const result = await withPrivateDev([join(bin, "argoexec"), "emissary", "--", "true"], { ...env, ARGO_CONTAINER_NAME: "main" });
  assert.equal(result.code, 64);
  assert.deepEqual(readdirSync(elsewhere), []);
  assert.ok(lstatSync(join(root, "ctr/main")).isSymbolicLink());
  assert.ok(!existsSync(join(root, "exitcode")));
});

test("with baton's real folder: the pod's copy runs `emissary` (the command, its exitcode file; Argo's own under it for a resource template) and `kill` (the signal reaches PID)", async (t) => {
  const { bin, root, env } = layout(t, { baton: "folder" });
  const init = await run(join(bin, "argoexec"), ["init"], env);
  assert.equal(init.code, 0, init.stderr);
  // What Argo's init does next: the argoexec it found on PATH, copied to /var/run/argo/argoexec; every container runs it.
  copyFileSync(join(bin, "argoexec"), join(root, "argoexec"));
  writeFileSync(join(root, "template"), JSON.stringify({ name: "main", container: { image: "x" } }));
  const emissary = await run(join(root, "argoexec"), ["emissary", "--loglevel", "info", "--", "sh", "-c", "echo from the command; exit 7"], {
    ...env, ARGO_CONTAINER_NAME: "step",
  });
  assert.equal(emissary.code, 7, emissary.stderr);
  assert.equal(emissary.stdout, "from the command\n");
  assert.equal(readFileSync(join(root, "ctr/step/exitcode"), "utf8"), "7");

  // A resource template's main container, in the executor image: `emissary -- argoexec resource ...`; the emissary finds
  // this argoexec on PATH, which hands `resource` to Argo's own.
  const resource = await run(join(root, "argoexec"), ["emissary", "--", "argoexec", "resource", "create"], { ...env, ARGO_CONTAINER_NAME: "main" });
  assert.equal(resource.code, 0, resource.stderr);
  assert.match(resource.stdout, /^argo pid=\d+ args=resource create /);

  const sleeper = execFile("sleep", ["60"]);
  const ended = new Promise<NodeJS.Signals | null>((done) => sleeper.on("exit", (_code, signal) => done(signal)));
  const kill = await run(join(root, "argoexec"), ["kill", "15", String(sleeper.pid)], env);
  assert.equal(kill.code, 0, kill.stderr);
  assert.equal(kill.stdout, `killing ${sleeper.pid} with terminated\n`);
  assert.equal(await ended, "SIGTERM");
});

test("as users other than root: init as 8737 under umask 077 (Argo's nonroot executor image), emissary as 65534 (a step's image)", { skip: !IS_ROOT && "needs root to change users" }, async (t) => {
  const { bin, root, env } = layout(t, { baton: "folder" });
  // What the kubelet gives: an emptyDir writable by everyone; the image's files owned by root, readable by all.
  chmodSync(join(root, ".."), 0o755);
  chmodSync(root, 0o777);
  const as = (uid: number, args: string[], extra: NodeJS.ProcessEnv = {}) =>
    run("setpriv", [`--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", ...args], { ...env, ...extra });
  // Under umask 077 too: the modes are set, not left to the umask.
  const init = await as(8737, ["/bin/sh", "-c", 'umask 077; exec "$0" init', join(bin, "argoexec")]);
  assert.equal(init.code, 0, init.stderr);
  assert.equal(statSync(join(root, "baton")).uid, 8737);
  copyFileSync(join(bin, "argoexec"), join(root, "argoexec"));
  writeFileSync(join(root, "template"), JSON.stringify({ name: "main", container: { image: "x" } }));
  const emissary = await as(65534, [join(root, "argoexec"), "emissary", "--", "sh", "-c", "id -u"], { ARGO_CONTAINER_NAME: "main" });
  assert.equal(emissary.code, 0, emissary.stderr);
  assert.equal(emissary.stdout, "65534\n");
  assert.equal(readFileSync(join(root, "ctr/main/exitcode"), "utf8"), "0");
});

test("init on a full volume: exit 64, one line naming the file, no /var/run/argo/baton, Argo's init not run", { skip }, async (t) => {
  const { bin, root, env } = layout(t, { baton: "folder" });
  // A 4 MiB tmpfs as /var/run/argo, in a mount namespace of its own: the 111 MB folder does not fit.
  const script = 'mount -t tmpfs -o size=4m tmpfs "$1" || exit 99; shift; "$@"; code=$?; ls -A "$BATON_ARGO_ROOT"; exit $code';
  const init = await run("unshare", ["--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh", root, join(bin, "argoexec"), "init"], env);
  assert.equal(init.code, 64, init.stderr);
  assert.match(init.stderr, /^baton: argoexec: cannot copy \S+ to .*: No space left on device\n$/);
  assert.doesNotMatch(init.stdout, /^baton$/m, "no ROOT/baton: a container never finds half a folder");
  assert.doesNotMatch(init.stdout, /^argo /m, "Argo's init did not run");
});
