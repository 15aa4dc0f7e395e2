// A shared run folder written by a hostile step (issue 20): FIFOs, symlinks, devices, huge files and planted
// temporary names at the paths baton opens. Each case runs on the bundle and on the standalone build; each failed on
// the code before src/base/safe-files.ts (BATON_TEST_BUNDLE=<old bundle>): a hang, a followed link, a 16 GB read.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, lstatSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import {
  BATON, IS_ROOT, NO_STANDALONE, STANDALONE, cleanEnv, existsSync, join, readJson, readOr, startBaton, tempDir, type Exit, type StartOptions,
} from "./helpers.js";
import { fullDisk, inMountNamespace } from "../../scripts/bench/namespaces.mjs";

const skipRoot = !IS_ROOT && "needs root (PID namespace, mount namespace, tmpfs)";
const BUILDS = [[undefined, "bundle"], [[STANDALONE], "standalone build"]] as const;

function mkfifo(path: string): void {
  execFileSync("mkfifo", [path]);
}

/** Runs baton; one that has not exited after `ms` (blocked in open(2) on a FIFO) is killed and the test fails. */
async function runWithin(args: string[], options: StartOptions, ms = 30_000): Promise<Exit> {
  const baton = startBaton(args, options);
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      baton.kill();
      reject(new Error(`baton did not exit within ${ms} ms (blocked?)`));
    }, ms);
  });
  try {
    return await Promise.race([baton.exited, hung]);
  } finally {
    clearTimeout(timer);
  }
}

/** A Tekton pod's folders: the root, this step's post file and termination message, and a run() in Tekton's argv. */
function pod(build: readonly string[] | undefined) {
  const dir = tempDir();
  const root = join(dir, "tekton");
  mkdirSync(join(root, "run/0"), { recursive: true });
  mkdirSync(join(root, "results"), { recursive: true });
  const post = join(root, "run/0/out");
  const termination = join(root, "termination");
  const home = join(dir, "home");
  const env = cleanEnv({ BATON_TEKTON_ROOT: root, HOME: home });
  const run = (flags: string[], command: string[], options: StartOptions = {}) =>
    runWithin(["-post_file", post, "-termination_path", termination, ...flags, "-entrypoint", command[0]!, "--", ...command.slice(1)], {
      env,
      ...(build ? { baton: [...build] } : {}),
      ...options,
    });
  const stepResult = (step: string, name: string) => {
    mkdirSync(join(root, `steps/step-${step}/results`), { recursive: true });
    return join(root, `steps/step-${step}/results/${name}`);
  };
  return { dir, root, post, termination, home, env, run, stepResult };
}

for (const [build, label] of BUILDS) {
  if (build !== undefined && NO_STANDALONE) {
    test(`${label}: every test of this file`, { skip: NO_STANDALONE }, () => {});
    continue;
  }
  test(`${label}: a FIFO at a $(steps...) result, at the step's own result, at the termination path, at --events: nothing blocks`, async () => {
    {
      const { dir, post, run, stepResult } = pod(build);
      mkfifo(stepResult("a", "r"));
      const exit = await run([], ["sh", "-c", `touch ${dir}/ran`, "$(steps.a.results.r)"]);
      assert.equal(exit.code, 1, exit.stderr);
      assert.match(exit.stderr, /^baton: .*steps\/step-a\/results\/r: a FIFO, not a regular file/m);
      assert.equal(existsSync(join(dir, "ran")), false);
      assert.equal(existsSync(`${post}.err`), true);
    }
    {
      const { root, post, run } = pod(build);
      mkfifo(join(root, "results/r"));
      const exit = await run(["-results", "r"], ["true"]);
      assert.equal(exit.code, 1, exit.stderr);
      assert.match(exit.stderr, /^baton: cannot read result r: a FIFO, not a regular file/m);
      assert.equal(existsSync(`${post}.err`), true);
    }
    {
      const { post, termination, run } = pod(build);
      mkfifo(termination);
      const exit = await run([], ["true"]);
      assert.equal(exit.code, 0, exit.stderr);
      assert.match(exit.stderr, /termination is a FIFO, not a regular file .*; replaced it/);
      assert.equal(lstatSync(termination).isFile(), true);
      assert.match(readFileSync(termination, "utf8"), /"key":"StartedAt"/);
      assert.equal(existsSync(post), true);
    }
    {
      const { dir, post, run } = pod(build);
      mkfifo(join(dir, "events"));
      const exit = await run([], ["true"], { env: cleanEnv({ BATON_TEKTON_ROOT: join(dir, "tekton"), BATON_EVENTS: join(dir, "events") }) });
      assert.equal(exit.code, 0, exit.stderr);
      assert.equal(existsSync(post), true);
    }
  });

  test(`${label}: a FIFO or a symlink in /tekton/creds (copied into $HOME by every step) is not opened: one line, the step runs`, async () => {
    const { dir, root, home, post, run } = pod(build);
    mkdirSync(join(root, "creds/.ssh"), { recursive: true });
    mkfifo(join(root, "creds/.gitconfig"));
    writeFileSync(join(dir, "key"), "ANOTHER-STEPS-KEY");
    symlinkSync(join(dir, "key"), join(root, "creds/.ssh/id_rsa"));
    const exit = await run([], ["touch", join(dir, "ran")]);
    assert.equal(exit.code, 0, exit.stderr);
    assert.match(exit.stderr, /^baton: cannot copy the credential \.gitconfig .*: a FIFO, not a regular file/m);
    assert.match(exit.stderr, /^baton: cannot copy the credential \.ssh .*: a symbolic link, which baton does not follow/m);
    assert.equal(existsSync(join(home, ".ssh/id_rsa")), false);
    assert.equal(existsSync(join(dir, "ran")), true);
    assert.equal(existsSync(post), true);
  });

  test(`${label}: a FIFO at POST.breakpointexit ends the onFailure breakpoint with exit 0 instead of blocking`, async () => {
    const { post, run } = pod(build);
    mkfifo(`${post}.breakpointexit`);
    const exit = await run(["-breakpoint_on_failure"], ["false"]);
    assert.equal(exit.code, 0, exit.stderr);
  });

  test(`${label}: a symlink at --termination-path: its target is neither merged into the message nor written`, async () => {
    const { dir, termination, run } = pod(build);
    const other = JSON.stringify([{ key: "token", value: "ANOTHER-STEPS-RESULT", type: 1 }]);
    writeFileSync(join(dir, "victim"), other);
    symlinkSync(join(dir, "victim"), termination);
    const exit = await run([], ["true"]);
    assert.equal(exit.code, 0, exit.stderr);
    assert.match(exit.stderr, /termination is a symbolic link, which baton does not follow .*; replaced it/);
    assert.equal(readFileSync(join(dir, "victim"), "utf8"), other);
    assert.equal(lstatSync(termination).isFile(), true);
    assert.doesNotMatch(readFileSync(termination, "utf8"), /ANOTHER-STEPS-RESULT/);
  });

  test(`${label}: --stdout-path and --events that are symlinks are not followed: nothing is appended to their targets`, async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "victim"), "VICTIM");
    symlinkSync(join(dir, "victim"), join(dir, "out"));
    symlinkSync(join(dir, "victim"), join(dir, "events"));
    const options = { env: cleanEnv({ BATON_EVENTS: join(dir, "events") }), ...(build ? { baton: [...build] } : {}) };
    const events = await runWithin(["--post-file", join(dir, "p1"), "--", "true"], options);
    assert.equal(events.code, 0, events.stderr);
    assert.equal(existsSync(join(dir, "p1")), true);
    const out = await runWithin(["--post-file", join(dir, "p2"), "--stdout-path", join(dir, "out"), "--", "echo", "hi"], options);
    assert.equal(out.code, 1, out.stderr);
    assert.match(out.stderr, /^baton: cannot open .*\/out for the command's output: a symbolic link, which baton does not follow/m);
    assert.equal(existsSync(join(dir, "p2.err")), true);
    assert.equal(readFileSync(join(dir, "victim"), "utf8"), "VICTIM");
  });

  test(`${label}: a result that is a symlink to /dev/zero, or over 1 MiB: refused at once with one line, never read whole`, async () => {
    // Under a 3 GB address-space limit: the code before read /dev/zero until it died (16 GB without one).
    const limited = { prefix: ["prlimit", "--as=3000000000", "--"] };
    for (const [setUp, why] of [
      [(path: string) => symlinkSync("/dev/zero", path), /a symbolic link, which baton does not follow/],
      [(path: string) => (writeFileSync(path, ""), truncateSync(path, 2 * 1024 * 1024)), /larger than 1048576 bytes/],
    ] as const) {
      const own = pod(build);
      setUp(join(own.root, "results/r"));
      const exit = await own.run(["-results", "r"], ["true"], limited);
      assert.equal(exit.code, 1, exit.stderr);
      assert.match(exit.stderr, new RegExp(`^baton: cannot read result r: ${why.source}`, "m"));
      assert.equal(existsSync(`${own.post}.err`), true);
      const other = pod(build);
      setUp(other.stepResult("a", "r"));
      const substituted = await other.run([], ["echo", "$(steps.a.results.r)"], limited);
      assert.equal(substituted.code, 1, substituted.stderr);
      assert.match(substituted.stderr, why);
      assert.equal(existsSync(`${other.post}.err`), true);
    }
  });

  test(`${label}: a symlink at artifacts/provenance.json does not copy another file into the termination message`, async () => {
    const { dir, root, post, termination, run } = pod(build);
    writeFileSync(join(dir, "key"), "TOP-SECRET-KEY");
    mkdirSync(join(root, "artifacts"), { recursive: true });
    symlinkSync(join(dir, "key"), join(root, "artifacts/provenance.json"));
    const exit = await run([], ["true"]);
    assert.equal(exit.code, 1, exit.stderr);
    assert.match(exit.stderr, /provenance\.json: a symbolic link, which baton does not follow/);
    assert.doesNotMatch(readOr(termination, ""), /TOP-SECRET/);
    assert.equal(existsSync(`${post}.err`), true);
  });

  test(`${label}: credentials never follow a symlink in $HOME, never keep a 0644 file, never print a secret's bytes`, async () => {
    const { dir, root, home, run } = pod(build);
    mkdirSync(join(root, "creds"), { recursive: true });
    mkdirSync(join(root, "creds-secrets/s"), { recursive: true });
    writeFileSync(join(root, "creds-secrets/s/username"), "user");
    writeFileSync(join(root, "creds-secrets/s/password"), "pass");
    writeFileSync(join(root, "creds-secrets/s/ssh-privatekey"), "PRIVATE-KEY");
    mkdirSync(join(home, ".docker"), { recursive: true });
    writeFileSync(join(dir, "victim"), "VICTIM");
    symlinkSync(join(dir, "victim"), join(home, ".docker/config.json"));
    mkdirSync(join(dir, "elsewhere"));
    symlinkSync(join(dir, "elsewhere"), join(home, ".ssh"));
    writeFileSync(join(home, ".git-credentials"), "old\n", { mode: 0o644 });
    chmodSync(join(home, ".git-credentials"), 0o644);
    const exit = await run(["-basic-docker=s=https://r", "-basic-git=s=https://g", "-ssh-git=s=github.com"], ["true"]);
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(readFileSync(join(dir, "victim"), "utf8"), "VICTIM");
    assert.equal(lstatSync(join(home, ".docker/config.json")).isFile(), true);
    assert.match(readFileSync(join(home, ".docker/config.json"), "utf8"), /"auth":/);
    assert.deepEqual(readdirSync(join(dir, "elsewhere")), [], "nothing written through $HOME/.ssh");
    assert.match(exit.stderr, /^baton: cannot copy the credential \.ssh .*\.ssh is a symbolic link/m);
    assert.equal(statSync(join(home, ".git-credentials")).mode & 0o777, 0o600);
    assert.match(readFileSync(join(home, ".git-credentials"), "utf8"), /user:pass@g/);
  });

  test(`${label}: a malformed .dockercfg is named with its path, and none of its bytes; a missing one too`, async () => {
    const { root, run } = pod(build);
    mkdirSync(join(root, "creds-secrets/bad"), { recursive: true });
    mkdirSync(join(root, "creds-secrets/none"), { recursive: true });
    writeFileSync(join(root, "creds-secrets/bad/.dockercfg"), "SECRETBYTES-not-json");
    const exit = await run(["-docker-cfg=bad", "-docker-cfg=none"], ["true"]);
    assert.equal(exit.code, 0, exit.stderr);
    assert.doesNotMatch(exit.stderr, /SECRETBYTES/);
    assert.match(exit.stderr, /creds-secrets\/bad\/\.dockercfg: not valid JSON/);
    const missing = await pod(build).run(["-docker-cfg=none"], ["true"]);
    assert.match(missing.stderr, /cannot read .*creds-secrets\/none\/\.dockercfg: no such file or directory/);
  });

  test(`${label}: --stdout-path at the post file (or POST.err, or POST.baton-wake) is refused: exit 2, POST.err, the command does not run`, async () => {
    for (const suffix of ["", ".err", ".baton-wake"]) {
      const dir = tempDir();
      const post = join(dir, "post");
      const exit = await runWithin(["--post-file", post, `--std${suffix ? "err" : "out"}-path`, post + suffix, "--", "touch", join(dir, "ran")], build ? { baton: [...build] } : {});
      assert.equal(exit.code, 2, exit.stderr);
      assert.match(exit.stderr, /^baton: --std(out|err)-path .* is the post file or one of its companions/);
      assert.equal(existsSync(join(dir, "ran")), false);
      assert.equal(readJson(`${post}.err`).exitCode, 2);
      assert.equal(existsSync(post), false);
    }
  });

  test(`${label}: --wait-file at the step's own post file (or one of its companions) is refused, not waited for ever: exit 2, POST.err`, async () => {
    for (const suffix of ["", ".err", ".baton-live"]) {
      const dir = tempDir();
      const post = join(dir, "post");
      const exit = await runWithin(["--wait-file", post + suffix, "--post-file", post, "--", "touch", join(dir, "ran")], build ? { baton: [...build] } : {});
      assert.equal(exit.code, 2, exit.stderr);
      assert.match(exit.stderr, /^baton: wait file .* is this step's own post file or one of its companions: the step would wait for itself\n$/);
      assert.equal(existsSync(join(dir, "ran")), false);
      assert.equal(readJson(`${post}.err`).exitCode, 2);
    }
  });

  test(`${label}: a working folder whose path is longer than PATH_MAX (getcwd fails: ERANGE) still hands on by relative paths`, async () => {
    // 25 folders of 200 bytes, each made and entered by a name relative to the one before: no system call sees the
    // whole path (a shell's cd would: it keeps the logical path).
    const script = `const { mkdirSync } = require("node:fs"); const { execFileSync } = require("node:child_process");
      const [d, words] = ["d".repeat(200), process.argv.slice(1)];
      for (let i = 0; i < 25; i++) { mkdirSync(d); process.chdir(d); }
      mkdirSync("x");
      const run = (...args) => execFileSync(words[0], [...words.slice(1), ...args], { stdio: "inherit" });
      run("--post-file", "x/a", "--", "true");
      run("--wait-file", "x/a", "--post-file", "x/b", "--", "true");
      console.log(require("node:fs").readdirSync("x").sort().join(" "));`;
    const words = build ? [...build] : [process.execPath, BATON];
    const exit = await runWithin([], { baton: [process.execPath, "-e", script, ...words], cwd: tempDir() });
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(exit.stderr, "", "no internal error (ERANGE from getcwd)");
    assert.match(exit.stdout, /^a a\.baton-live b b\.baton-live\n$/); // the wake FIFOs went with their batons
  });

  test(`${label}: a post name whose debug file's name would be over 255 bytes is refused: exit 2, POST.err`, async () => {
    const dir = tempDir();
    const post = join(dir, "p".repeat(240)); // POST.err is 244 bytes, POST.breakpointexit.err 260
    const exit = await runWithin(["--post-file", post, "--breakpoint-on-failure", "--", "touch", join(dir, "ran")], build ? { baton: [...build] } : {});
    assert.equal(exit.code, 2, exit.stderr);
    assert.match(exit.stderr, /^baton: post file name p+ is too long: p+\.breakpointexit\.err must fit 255 bytes\n$/);
    assert.equal(existsSync(join(dir, "ran")), false);
    assert.equal(readJson(`${post}.err`).exitCode, 2);
  });

  test(`${label}: as PID 1, symlinks planted at the old predictable temporary names (POST's, its liveness file's) are never followed`, { skip: skipRoot }, async () => {
    const dir = tempDir();
    const post = join(dir, "post");
    writeFileSync(join(dir, "victim"), "VICTIM");
    for (let n = 0; n < 4; n++) {
      symlinkSync(join(dir, "victim"), join(dir, `.post.1.${n}.tmp`));
      symlinkSync(join(dir, "victim"), join(dir, `.post.lock.1.${n}.tmp`));
      symlinkSync(join(dir, "victim"), join(dir, `.post.baton-live.1.${n}.tmp`));
    }
    const exit = await runWithin(["--post-file", post, "--", "true"], { pid1: true, ...(build ? { baton: [...build] } : {}) });
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(readFileSync(join(dir, "victim"), "utf8"), "VICTIM");
    assert.equal(readJson(post).reason, "Completed");
  });

  test(`${label}: baton init as PID 1 neither writes nor chmods through a symlink at its old temporary name`, { skip: skipRoot }, async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "victim"), "VICTIM", { mode: 0o600 });
    symlinkSync(join(dir, "victim"), join(dir, ".baton.1.tmp"));
    const exit = await runWithin(["init", join(dir, "baton")], { pid1: true, ...(build ? { baton: [...build] } : {}) });
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(readFileSync(join(dir, "victim"), "utf8"), "VICTIM");
    assert.equal(statSync(join(dir, "victim")).mode & 0o777, 0o600);
    assert.equal(statSync(join(dir, "baton")).mode & 0o777, 0o755);
  });

  test(`${label}: on a full disk the empty POST.err replaces a symlink planted there instead of truncating its target`, { skip: skipRoot }, async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "full"));
    writeFileSync(join(dir, "victim"), "VICTIM");
    const post = join(dir, "full/post");
    // The link is planted before the disk is filled: it takes room too.
    const fill = `mount -t tmpfs -o size=64k tmpfs ${dir}/full && ln -s ${dir}/victim ${post}.err && (head -c 1M /dev/zero > ${dir}/full/filler 2>/dev/null || true)`;
    const check = `{ [ -L ${post}.err ] && echo link || wc -c < ${post}.err; } > ${dir}/after;`;
    const prefix = inMountNamespace(fill, check);
    // A failing command: POST.err is what baton writes, so it is not removed first as a stale opposite.
    const exit = await runWithin(["--post-file", post, "--", "false"], { prefix, ...(build ? { baton: [...build] } : {}) });
    assert.equal(exit.code, 1, exit.stderr);
    assert.match(exit.stderr, /^baton: wrote an empty .*\/full\/post\.err instead/m);
    assert.equal(readFileSync(join(dir, "victim"), "utf8"), "VICTIM");
    assert.equal(readOr(join(dir, "after"), "").trim(), "0");
  });

  test(`${label}: an argument list too long for exec(2) is named as such (E2BIG), not as a command that cannot be executed`, async () => {
    // A step result of 200 KB substituted into one argument: over MAX_ARG_STRLEN (128 KiB), which baton's own argv
    // was not.
    const { post, run, stepResult } = pod(build);
    writeFileSync(stepResult("a", "r"), "x".repeat(200_000));
    const exit = await run([], ["true", "$(steps.a.results.r)"]);
    assert.equal(exit.code, 126, exit.stderr);
    assert.equal(exit.stderr, "baton: the arguments and environment are too long for exec(2): true (E2BIG)\n");
    assert.equal(readJson(`${post}.err`).reason, "CommandNotExecutable");
  });

  test(`${label}: Tekton's cp with a FIFO as SRC is refused at once instead of blocking`, async () => {
    const dir = tempDir();
    mkfifo(join(dir, "src"));
    const exit = await runWithin(["cp", join(dir, "src"), join(dir, "dest")], build ? { baton: [...build] } : {});
    assert.equal(exit.code, 1, exit.stderr);
    assert.match(exit.stderr, /^baton: cannot copy .*\/src to .*\/dest: a FIFO, not a regular file/);
    assert.deepEqual(readdirSync(dir), ["src"], "no temporary file left");
  });

  test(`${label}: baton init under umask 077 makes a copy that another uid can start`, { skip: skipRoot }, async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "bin"), { mode: 0o755 });
    chmodSync(dir, 0o755);
    const dest = join(dir, "bin/baton");
    const prefix = ["sh", "-c", 'umask 077 && exec "$@"', "sh"];
    const exit = await runWithin(["init", dest], { prefix, ...(build ? { baton: [...build] } : {}) });
    assert.equal(exit.code, 0, exit.stderr);
    const start = build ? [dest] : [process.execPath, dest];
    const other = execFileSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", ...start, "--version"], { encoding: "utf8" });
    assert.match(other, /^baton /);
  });

  test(`${label}: baton init onto a full disk says ENOSPC (the standalone build's copy of lib/ said EIO)`, { skip: skipRoot }, async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "full"));
    const prefix = inMountNamespace(fullDisk(`${dir}/full`, "256k"));
    const exit = await runWithin(["init", join(dir, "full/bin/baton")], { prefix, ...(build ? { baton: [...build] } : {}) });
    assert.equal(exit.code, 1, exit.stderr);
    assert.match(exit.stderr, /^baton: cannot copy .*: no space left on device \(ENOSPC\)\n$/);
  });

  test(`${label}: a read-only file system is named as such (EROFS), not as a missing file`, { skip: skipRoot }, async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "ro"));
    const prefix = inMountNamespace(`mount -t tmpfs -o ro tmpfs ${dir}/ro`);
    const options = { prefix, ...(build ? { baton: [...build] } : {}) };
    const post = await runWithin(["--post-file", join(dir, "ro/sub/post"), "--", "true"], options);
    assert.equal(post.code, 2, post.stderr);
    assert.match(post.stderr, /^baton: cannot create folder .*\/ro\/sub for --post-file: read-only file system \(EROFS\)\n$/);
    const init = await runWithin(["init", join(dir, "ro/bin/baton")], options);
    assert.equal(init.code, 1, init.stderr);
    assert.match(init.stderr, /read-only file system \(EROFS\)/);
    const { root, home, run } = pod(build);
    mkdirSync(join(root, "creds-secrets/s"), { recursive: true });
    writeFileSync(join(root, "creds-secrets/s/username"), "u");
    writeFileSync(join(root, "creds-secrets/s/password"), "p");
    mkdirSync(home);
    const creds = await run(["-basic-docker=s=https://r"], ["true"], {
      prefix: inMountNamespace(`mount -t tmpfs -o ro tmpfs ${home}`),
    });
    assert.equal(creds.code, 0, creds.stderr);
    assert.match(creds.stderr, /^baton: cannot copy the credential \.docker .*read-only file system \(EROFS\)/m);
  });
}
