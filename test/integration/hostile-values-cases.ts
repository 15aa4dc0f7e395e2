// Hostile values, round three: where a value baton receives ends up (a generated file, a path, a command line) and what
// a control character, "..", a NUL or an out-of-range number does there. Written once, run on each build:
// hostile-input.test.ts (the bundle) and sea-hostile-input.test.ts (the standalone build).
import { test } from "node:test";
import assert from "node:assert/strict";
import { lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { IS_ROOT, cleanEnv, existsSync, join, readJson, runBaton, tempDir } from "./helpers.js";
import { assertOneLine, tektonPod, writeResult } from "./hostile-input-cases.js";
import { argoPod } from "./argo-helpers.js";
import { inMountNamespace, readOnlyFolder } from "../../scripts/bench/namespaces.mjs";

/** A pod's /tekton with one secret mounted under creds-secrets/, and an empty $HOME. */
function credentialsPod(secret: string, files: Record<string, string>) {
  const pod = tektonPod();
  mkdirSync(join(pod.root, "creds-secrets", secret), { recursive: true });
  for (const [name, content] of Object.entries(files)) writeFileSync(join(pod.root, "creds-secrets", secret, name), content);
  const home = join(pod.dir, "home");
  mkdirSync(home);
  return { ...pod, home };
}

export function hostileValueCases(build: string, baton: readonly string[]): void {
  const words = [...baton];

  test(`${build}: an -ssh-git host with a newline (a ProxyCommand line) is refused: exit 2, POST.err, no .ssh/config`, async () => {
    const { dir, root, post, env, base, home } = credentialsPod("gk", { "ssh-privatekey": "KEY\n" });
    const pwned = join(dir, "pwned");
    const argv = [...base, `-ssh-git=gk=github.com\nProxyCommand touch ${pwned}`, "-entrypoint", "touch", "--", join(dir, "ran")];
    const exit = await runBaton(argv, { env, baton: words });
    assert.equal(exit.code, 2, exit.stderr);
    assert.match(exit.stderr, /^baton: -ssh-git: the URL "github\.com\\nProxyCommand touch [^"]+" holds a control character \(U\+000A\)/m);
    assertOneLine(exit.stderr);
    assert.equal(exit.stderr.split("\n").length, 2, exit.stderr);
    assert.equal(readJson(`${post}.err`).reason, "Error");
    for (const file of [join(root, "creds/.ssh/config"), join(home, ".ssh/config"), join(dir, "ran"), pwned]) assert.equal(existsSync(file), false, file);
  });

  for (const [what, flag] of [["a tab", "gk=github.com\tProxyCommand"], ["a space", "gk=github.com ProxyCommand"], ["a quote", 'gk=github.com/a"b']]) {
    test(`${build}: an -ssh-git host with ${what} (a second word in .ssh/config, or the end of .gitconfig's quote) is refused: exit 2, POST.err`, async () => {
      const { dir, root, post, env, base } = credentialsPod("gk", { "ssh-privatekey": "KEY\n" });
      const exit = await runBaton([...base, `-ssh-git=${flag}`, "-entrypoint", "touch", "--", join(dir, "ran")], { env, baton: words });
      assert.equal(exit.code, 2, exit.stderr);
      assert.match(exit.stderr, /^baton: -ssh-git: /m);
      assertOneLine(exit.stderr);
      assert.equal(readJson(`${post}.err`).reason, "Error");
      assert.equal(existsSync(join(root, "creds/.ssh/config")), false);
    });
  }

  test(`${build}: a basic-git username with a newline (a credential helper line for .gitconfig) is refused without quoting it: exit 2, POST.err`, async () => {
    const username = "user\n\thelper = !touch /tmp/pwned-by-username";
    const { dir, root, post, env, base, home } = credentialsPod("bu", { username, password: "s3cret" });
    const exit = await runBaton([...base, "-basic-git=bu=https://github.com", "-entrypoint", "touch", "--", join(dir, "ran")], { env, baton: words });
    assert.equal(exit.code, 2, exit.stderr);
    assert.match(exit.stderr, /^baton: -basic-git: \S+\/creds-secrets\/bu\/username holds a control character \(U\+000A\)/m);
    assert.doesNotMatch(exit.stderr, /helper|pwned/);
    assertOneLine(exit.stderr);
    assert.equal(readJson(`${post}.err`).reason, "Error");
    for (const file of [join(root, "creds/.gitconfig"), join(home, ".gitconfig"), join(dir, "ran")]) assert.equal(existsSync(file), false, file);
  });

  test(`${build}: a basic-docker password with a control character is refused without quoting it: exit 2, POST.err`, async () => {
    const { dir, post, env, base } = credentialsPod("bd", { username: "user", password: "pa\rss" });
    const exit = await runBaton([...base, "-basic-docker=bd=https://index.docker.io", "-entrypoint", "touch", "--", join(dir, "ran")], { env, baton: words });
    assert.equal(exit.code, 2, exit.stderr);
    assert.match(exit.stderr, /^baton: -basic-docker: \S+\/creds-secrets\/bd\/password holds a control character \(U\+000D\)/m);
    assert.doesNotMatch(exit.stderr, /pa.ss/);
    assert.equal(readJson(`${post}.err`).reason, "Error");
  });

  test(`${build}: a secret name with a newline (a line of .ssh/config through IdentityFile) is refused: exit 2, POST.err`, async () => {
    const { dir, post, env, base } = credentialsPod("gk", { "ssh-privatekey": "KEY\n" });
    const exit = await runBaton([...base, "-ssh-git=gk\nProxyCommand x=github.com", "-entrypoint", "touch", "--", join(dir, "ran")], { env, baton: words });
    assert.equal(exit.code, 2, exit.stderr);
    assert.match(exit.stderr, /^baton: -ssh-git: invalid secret name "gk\\nProxyCommand x"$/m);
    assert.equal(readJson(`${post}.err`).reason, "Error");
  });

  test(`${build}: step-init ../../outside/victim is refused: exit 2, the file outside untouched`, async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "outside"));
    writeFileSync(join(dir, "outside/victim"), "keep");
    const env = cleanEnv({ BATON_TEKTON_ROOT: join(dir, "a/tekton") });
    for (const name of ["../../outside/victim", "..", ".", "", "a/b"]) {
      const exit = await runBaton(["step-init", "ok", name], { env, baton: words });
      assert.equal(exit.code, 2, `${JSON.stringify(name)}: ${exit.stderr}`);
      assert.match(exit.stderr, /^baton: invalid step name "[^"]*": a step's name is a file name/m);
      assertOneLine(exit.stderr);
      assert.equal(existsSync(join(dir, "a/tekton/steps/ok")), false, "nothing linked before the check");
    }
    assert.equal(lstatSync(join(dir, "outside/victim")).isFile(), true);
    assert.equal(readFileSync(join(dir, "outside/victim"), "utf8"), "keep");
  });

  test(`${build}: init SRC DST ../x refuses the step name before it copies anything: exit 2`, async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "src"), "#!/bin/sh\n");
    const env = cleanEnv({ BATON_TEKTON_ROOT: join(dir, "tekton") });
    const exit = await runBaton(["init", join(dir, "src"), join(dir, "dst"), "step-a", "../../x"], { env, baton: words });
    assert.equal(exit.code, 2, exit.stderr);
    assert.match(exit.stderr, /^baton: invalid step name "\.\.\/\.\.\/x"/m);
    assert.equal(existsSync(join(dir, "dst")), false);
    assert.equal(existsSync(join(dir, "x")), false);
  });

  test(`${build}: a NUL byte in a result substituted into an argument names the value, not the command nor Node's code`, async () => {
    const { dir, root, post, env, base } = tektonPod();
    writeResult(root, "prev", "r", "a\0b");
    const exit = await runBaton([...base, "-entrypoint", "touch", "--", join(dir, "ran"), "<$(steps.prev.results.r)>"], { env, baton: words });
    assert.equal(exit.code, 1, exit.stderr);
    assert.match(exit.stderr, /^baton: \$\(steps\.prev\.results\.r\): the value substituted into the command's argument 2 holds a NUL byte/m);
    assert.doesNotMatch(exit.stderr, /ERR_|cannot be executed/);
    assertOneLine(exit.stderr);
    assert.equal(readJson(`${post}.err`).reason, "Error");
    assert.equal(existsSync(join(dir, "ran")), false);
  });

  test(`${build}: a NUL byte in a result substituted into the environment names the variable`, async () => {
    const { dir, root, post, env, base } = tektonPod();
    writeResult(root, "prev", "r", "a\0b");
    const exit = await runBaton([...base, "-entrypoint", "touch", "--", join(dir, "ran")], { env: { ...env, V: "$(steps.prev.results.r)" }, baton: words });
    assert.equal(exit.code, 1, exit.stderr);
    assert.match(exit.stderr, /^baton: \$\(steps\.prev\.results\.r\): the value substituted into the environment variable V holds a NUL byte/m);
    assert.equal(readJson(`${post}.err`).reason, "Error");
  });

  test(`${build}: -timeout 0.4ns is 0 for Go, so no timeout: the command runs to its end, POST`, async () => {
    const { post, env, base } = tektonPod();
    const exit = await runBaton([...base, "-timeout", "0.4ns", "-entrypoint", "sh", "--", "-c", "sleep 0.3; echo done"], { env, baton: words });
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(exit.stdout, "done\n");
    assert.equal(readJson(post).reason, "Completed");
  });

  test(`${build}: --timeout 9999999999h is out of Go's range: a usage error, exit 2, POST.err, no command`, async () => {
    const dir = tempDir();
    const post = join(dir, "out");
    const exit = await runBaton(["--timeout", "9999999999h", "--post-file", post, "--", "touch", join(dir, "ran")], { baton: words });
    assert.equal(exit.code, 2, exit.stderr);
    assert.match(exit.stderr, /^baton: invalid --timeout "9999999999h": out of range/m);
    assert.equal(readJson(`${post}.err`).reason, "Error");
    assert.equal(existsSync(join(dir, "ran")), false);
  });

  test(`${build}: a --post-file name that is not UTF-8 gets no POST.err under the decoded (U+FFFD) name, nor under another`, async () => {
    const dir = tempDir();
    const script = `exec "$@" --post-file "$(printf '${dir}/n\\377')" -- touch ${dir}/ran`;
    const exit = await runBaton([], { baton: ["sh", "-c", script, "sh", ...words] });
    assert.equal(exit.code, 2, exit.stderr);
    assert.match(exit.stderr, /^baton: post file ".*" is not UTF-8: baton takes UTF-8 paths only \(nor writes its \.err under another name than the one given\)$/m);
    assertOneLine(exit.stderr);
    const left = readdirSync(dir).filter((name) => name.startsWith("n"));
    assert.deepEqual(left, [], `files left: ${JSON.stringify(left)}`);
  });

  test(`${build}: a sidecar --ready-file name that is not UTF-8 is a usage error, with no .err under the decoded name`, async () => {
    const dir = tempDir();
    const script = `exec "$@" sidecar --stop-file ${dir}/stop --ready-probe tcp:127.0.0.1:1 --ready-file "$(printf '${dir}/r\\377')" -- true`;
    const exit = await runBaton([], { baton: ["sh", "-c", script, "sh", ...words] });
    assert.equal(exit.code, 2, exit.stderr);
    assert.match(exit.stderr, /^baton: ready file ".*" is not UTF-8: baton takes UTF-8 paths only \(nor writes its \.err under another name than the one given\)$/m);
    const left = readdirSync(dir).filter((name) => name.startsWith("r"));
    assert.deepEqual(left, [], `files left: ${JSON.stringify(left)}`);
  });

  for (const [option, value] of [["--stop-url", "http://127.0.0.1:1/quit\r\nX-Evil: 1"], ["--ready-probe", "http://127.0.0.1:1/\nhealth"], ["--ready-probe", "tcp:local\nhost:80"]]) {
    test(`${build}: sidecar ${option} with a control character (a URL parser would drop it silently) is a usage error: exit 2`, async () => {
      const dir = tempDir();
      const ready = option === "--ready-probe" ? ["--ready-file", join(dir, "ready")] : [];
      const exit = await runBaton(["sidecar", "--stop-file", join(dir, "stop"), option, value, ...ready, "--", "sleep", "100"], { baton: words });
      assert.equal(exit.code, 2, exit.stderr);
      assert.match(exit.stderr, new RegExp(`^baton: invalid ${option} .*a control character in a (host or )?URL`, "m"));
      assertOneLine(exit.stderr);
      if (option === "--ready-probe") assert.equal(existsSync(join(dir, "ready.err")), true);
    });
  }

  test(`${build}: BATON_EVENTS=stderr to a reader that stopped reading does not hold baton: --timeout still stops the command, POST.err`, async () => {
    const dir = tempDir();
    // A FIFO whose reader holds it open and reads nothing; the command fills it. An event line (the "stopping" before
    // --timeout's SIGTERM) blocked in write(2) until the reader left: 60 s here.
    const script = [
      `mkfifo ${dir}/errors`,
      `(exec 3< ${dir}/errors; sleep 60) & reader=$!`,
      `BATON_EVENTS=stderr ${words.map((w) => `'${w}'`).join(" ")} --post-file ${dir}/post --timeout 1s --grace-period 1s -- sh -c 'head -c 70000 /dev/zero >&2; exec sleep 1000' 2> ${dir}/errors`,
      `echo $? > ${dir}/rc`,
      `ls ${dir} > ${dir}/seen`,
      "kill $reader",
    ].join("\n");
    const started = Date.now();
    await runBaton([], { baton: ["sh", "-c", script] });
    const took = Date.now() - started;
    assert.equal(readFileSync(join(dir, "rc"), "utf8").trim(), "124");
    assert.ok(took < 30_000, `baton exited ${took} ms after it started (the reader holds on for 60 s)`);
    assert.match(readFileSync(join(dir, "seen"), "utf8"), /^post\.err$/m, "the post file, written while the reader still holds the pipe");
  });

  test(`${build}: an Argo template of 40 MB nested 20 million levels deep is refused at once by its size: exit 64, one line`, async () => {
    const pod = argoPod();
    const work = tempDir();
    const levels = 20_000_000;
    pod.template(`${"[".repeat(levels)}${"]".repeat(levels)}`);
    const started = Date.now();
    const run = await pod.start("main", ["touch", join(work, "ran")], {}, { baton: words }).exited;
    const took = Date.now() - started;
    assert.equal(run.code, 64, run.stderr);
    assert.equal(pod.read("main", "exitcode"), "64");
    assert.match(run.stderr, /^baton: failed to read template: .*template is larger than 1048576 bytes/m);
    assert.equal(run.stderr.split("\n").length, 2, run.stderr);
    // It parsed for 19 s (2 GB) before it failed, and no signal was handled meanwhile.
    assert.ok(took < 3_000, `${took} ms`);
    assert.equal(existsSync(join(work, "ran")), false);
  });

  test(`${build}: an Argo template nested deeper than Go's 10000 levels is refused as Go's encoding/json refuses it: exit 64`, async () => {
    const pod = argoPod();
    const work = tempDir();
    pod.template(`{"outputs":${"[".repeat(10_001)}${"]".repeat(10_001)}}`);
    const run = await pod.start("main", ["touch", join(work, "ran")], {}, { baton: words }).exited;
    assert.equal(run.code, 64, run.stderr);
    assert.match(run.stderr, /^baton: failed to unmarshal template: invalid character '\[' exceeded max depth$/m);
    assert.equal(existsSync(join(work, "ran")), false);
    // 10000 levels are Go's limit, not past it: a template that deep (in a field the emissary does not read) runs.
    const deepest = argoPod();
    deepest.template(`{"x":${"[".repeat(9_999)}${"]".repeat(9_999)}}`);
    const ran = await deepest.start("main", ["touch", join(work, "ran")], {}, { baton: words }).exited;
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(existsSync(join(work, "ran")), true);
  });

  test(`${build}: a value with a newline or an escape sequence quoted in a line of baton's stays in that one line`, async () => {
    const dir = tempDir();
    const post = join(dir, "out");
    const exit = await runBaton(["--post-file", post, "--bogus\nbaton: forged line\x1b[2J", "--", "true"], { baton: words });
    assert.equal(exit.code, 2, exit.stderr);
    assert.equal(exit.stderr, "baton: unknown option --bogus\\nbaton: forged line\\u001b[2J (see baton --help)\n");
    assert.equal(readJson(`${post}.err`).reason, "Error");
  });

  test(`${build}: an Argo args file of 4 MB nested 2 million levels deep is refused as Go refuses it, at once: exit 64`, async () => {
    const pod = argoPod();
    const work = tempDir();
    pod.template({});
    const argsFile = join(work, "args.json");
    writeFileSync(argsFile, `${"[".repeat(2_000_000)}${"]".repeat(2_000_000)}`);
    const started = Date.now();
    const run = await pod.start("main", ["touch", join(work, "ran")], { ARGO_CONTAINER_ARGS_FILE: argsFile }, { baton: words }).exited;
    const took = Date.now() - started;
    assert.equal(run.code, 64, run.stderr);
    assert.match(run.stderr, /^baton: failed to unmarshal container args: invalid character '\[' exceeded max depth$/m);
    assert.ok(took < 3_000, `${took} ms`); // JSON.parse took 1.3 s and 250 MB before it failed on the type
    assert.equal(existsSync(join(work, "ran")), false);
  });

  test(`${build}: Argo outputs: a symlink planted at a parameter's or an artifact's name in the shared volume is replaced, not written through`, async () => {
    const pod = argoPod();
    const work = tempDir();
    const victim = join(tempDir(), "victim");
    writeFileSync(victim, "keep");
    pod.template({ outputs: { parameters: [{ valueFrom: { path: join(work, "p") } }], artifacts: [{ path: join(work, "a") }] } });
    mkdirSync(join(pod.root, "outputs/parameters", work), { recursive: true });
    mkdirSync(join(pod.root, "outputs/artifacts", work), { recursive: true });
    symlinkSync(victim, join(pod.root, "outputs/parameters", work, "p"));
    symlinkSync(victim, join(pod.root, "outputs/artifacts", work, "a.tgz"));
    const run = await pod.start("main", ["sh", "-c", `echo value > ${work}/p; echo art > ${work}/a`], {}, { baton: words }).exited;
    assert.equal(run.code, 0, run.stderr);
    assert.equal(readFileSync(victim, "utf8"), "keep");
    assert.equal(readFileSync(join(pod.root, "outputs/parameters", work, "p"), "utf8"), "value\n");
    assert.equal(lstatSync(join(pod.root, "outputs/artifacts", work, "a.tgz")).isFile(), true);
  });

  test(`${build}: Argo outputs: a folder of the shared volume that is a symlink out of it is refused before anything is made through it: exit 64`, async () => {
    const pod = argoPod();
    const work = tempDir();
    const elsewhere = tempDir();
    pod.template({ outputs: { parameters: [{ valueFrom: { path: join(work, "p") } }] } });
    symlinkSync(elsewhere, join(pod.root, "outputs"));
    const run = await pod.start("main", ["sh", "-c", `echo value > ${work}/p`], {}, { baton: words }).exited;
    assert.equal(run.code, 64, run.stderr);
    assert.match(run.stderr, /^baton: cannot write \S+: \S+\/outputs leads elsewhere \(to \S+\), through a symlink in the shared volume$/m);
    assert.equal(run.stderr.split("\n").length, 2, run.stderr);
    assert.deepEqual(readdirSync(elsewhere), []);
  });

  test(`${build}: a post folder that takes no new file (read-only) is said in one line, not two`, { skip: !IS_ROOT && "needs root (a read-only bind mount)" }, async () => {
    const dir = tempDir();
    const folder = join(dir, "run");
    mkdirSync(folder);
    const exit = await runBaton(["--post-file", join(folder, "out"), "--", "touch", join(dir, "ran")], {
      baton: words, prefix: inMountNamespace(readOnlyFolder(folder)),
    });
    assert.equal(exit.code, 1, exit.stderr);
    assert.match(exit.stderr, /^baton: cannot hand on through \S+\/run\/out: its folder takes no new file \(read-only file system \(EROFS\)\); not running the command\n$/);
    assert.equal(existsSync(join(dir, "ran")), false);
  });
}
