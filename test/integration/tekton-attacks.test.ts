// Trying to break Tekton's features on the real bundle, as PID 1: signals while a debug breakpoint waits, a full disk
// under /tekton/creds, odd but valid names, hostile CEL, a compressed message that is not one. Each was tried by hand
// first; each test names what must hold.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { IS_ROOT, cleanEnv, existsSync, fileAppears, handlersInstalled, join, readJson, runBaton, startBaton, tempDir } from "./helpers.js";
import { fullDisk, inMountNamespace } from "../../scripts/bench/namespaces.mjs";

const skipRoot = !IS_ROOT && "needs root (PID namespace, mount namespace, tmpfs)";

function pod() {
  const dir = tempDir();
  const root = join(dir, "tekton");
  mkdirSync(join(root, "run/0"), { recursive: true });
  const post = join(root, "run/0/out");
  const env = cleanEnv({ BATON_TEKTON_ROOT: root, HOME: join(dir, "home") });
  return { dir, root, post, env, base: ["-post_file", post, "-termination_path", join(root, "termination"), "-step_metadata_dir", join(root, "run/0/status")] };
}

test("SIGTERM while waiting at the before-step breakpoint ends the wait: POST.err (Signaled), exit 143, no command", { skip: skipRoot }, async () => {
  const { dir, post, env, base } = pod();
  const step = startBaton([...base, "-debug_before_step", "-entrypoint", "touch", "--", join(dir, "ran")], { env, pid1: true });
  const pid = await step.hostPid();
  await handlersInstalled(pid);
  await fileAppears(join(dir, "tekton/run/0/status/artifacts")); // past the option checks: waiting for the user
  process.kill(pid, "SIGTERM");
  const exit = await step.exited;
  assert.equal(exit.code, 143, exit.stderr);
  assert.equal(readJson(`${post}.err`).reason, "Signaled");
  assert.equal(existsSync(join(dir, "ran")), false);
});

test("SIGTERM while a failed step waits at the onFailure breakpoint ends it: exit 143, no post file (the kubelet's stop)", { skip: skipRoot }, async () => {
  const { root, post, env, base } = pod();
  const step = startBaton([...base, "-breakpoint_on_failure", "-entrypoint", "sh", "--", "-c", "exit 5"], { env, pid1: true });
  const pid = await step.hostPid();
  await fileAppears(join(root, "termination")); // the message is written before the pause
  await handlersInstalled(pid);
  process.kill(pid, "SIGTERM");
  const exit = await step.exited;
  assert.equal(exit.code, 143, exit.stderr);
  assert.match(exit.stderr, /stopped by a signal at the onFailure breakpoint/);
  assert.equal(existsSync(post) || existsSync(`${post}.err`), false);
});

test("credentials onto a full disk: one line each, the step still runs and hands on", { skip: skipRoot }, async () => {
  const { dir, root, post, env } = pod();
  mkdirSync(join(root, "creds"), { recursive: true });
  mkdirSync(join(root, "creds-secrets/s"), { recursive: true });
  writeFileSync(join(root, "creds-secrets/s/username"), "u");
  writeFileSync(join(root, "creds-secrets/s/password"), "p".repeat(100_000));
  // /tekton/creds is a 64 KiB tmpfs, already full, in a mount namespace of baton's own.
  const prefix = inMountNamespace(fullDisk(`${root}/creds`));
  const argv = ["-post_file", post, "-basic-docker=s=https://r", "-basic-git=s=https://g", "-entrypoint", "touch", "--", join(dir, "ran")];
  const exit = await runBaton(argv, { env, prefix });
  assert.equal(exit.code, 0, exit.stderr);
  assert.match(exit.stderr, /^baton: cannot write the docker credentials: .*ENOSPC/m);
  assert.match(exit.stderr, /^baton: cannot write the git credentials: .*ENOSPC/m);
  assert.doesNotMatch(exit.stderr, /\n\s+at |internal error/);
  assert.equal(existsSync(join(dir, "ran")), true);
  assert.equal(existsSync(post), true);
});

test("odd but valid names: a secret, registry and git URL with spaces, quotes and non-ASCII; result names likewise", async () => {
  const { dir, root, post, env } = pod();
  const secret = "my secret-é";
  mkdirSync(join(root, "creds-secrets", secret), { recursive: true });
  writeFileSync(join(root, "creds-secrets", secret, "username"), 'us"er');
  writeFileSync(join(root, "creds-secrets", secret, "password"), "pä ss");
  mkdirSync(join(root, "steps/step-a b/results"), { recursive: true });
  writeFileSync(join(root, "steps/step-a b/results/r é"), "value with spaces");
  const argv = [
    "-post_file", post, `-basic-docker=${secret}=https://reg.example/ü<&>`, `-basic-git=${secret}=https://git.example/org/répo`,
    "-entrypoint", "printf", "--", "%s", "$(steps.a b.results.r é)",
  ];
  const exit = await runBaton(argv, { env });
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(exit.stdout, "value with spaces");
  assert.equal(
    readFileSync(join(dir, "home/.docker/config.json"), "utf8"),
    `{"auths":{"https://reg.example/ü\\u003c\\u0026\\u003e":{"username":"us\\"er","password":"pä ss","auth":"${Buffer.from('us"er:pä ss').toString("base64")}","email":"not@val.id"}}}`,
  );
  assert.equal(readFileSync(join(dir, "home/.git-credentials"), "utf8"), "https://us%22er:p%C3%A4%20ss@git.example/org/répo\n");
  assert.equal(
    readFileSync(join(dir, "home/.gitconfig"), "utf8"),
    `[credential]\n\thelper = store\n[credential "https://git.example/org/répo"]\n\tusername = us"er\n\tuseHttpPath = true\n`,
  );
});

test("hostile CEL: deep nesting, a huge literal, a runaway comprehension end in one line and POST.err, never a crash", async () => {
  const cases = [
    "(".repeat(20_000) + "true" + ")".repeat(20_000),
    `'${"x".repeat(100_000)}' == 'x'`,
    "[1,2,3].all(x, [1,2,3].all(y, [1,2,3].all(z, x + y + z > 100)))",
  ];
  for (const cel of cases) {
    const { post, env } = pod();
    const exit = await runBaton(["-post_file", post, "--when_expressions", JSON.stringify([{ cel }]), "-entrypoint", "true", "--"], { env });
    assert.ok(exit.code === 0 || exit.code === 1, `${cel.slice(0, 30)}: ${exit.code} ${exit.stderr.slice(0, 200)}`);
    assert.doesNotMatch(exit.stderr, /\n\s+at |internal error|RangeError/);
    assert.ok(exit.stderr.split("\n").length <= 2, exit.stderr.slice(0, 300));
    assert.equal(existsSync(post) || existsSync(`${post}.err`), true);
  }
});

test("a termination file that starts with tknz: but is not one: replaced with one line, the step goes on", async () => {
  const { root, base, env } = pod();
  writeFileSync(join(root, "termination"), "tknz:!!not base64!!");
  const exit = await runBaton([...base, "-compress_termination_message", "-entrypoint", "true", "--"], { env });
  assert.equal(exit.code, 0, exit.stderr);
  assert.match(exit.stderr, /did not hold a termination message in Tekton's format; replaced it/);
  assert.match(readFileSync(join(root, "termination"), "utf8"), /^\[\{"key":"StartedAt"/);
});
