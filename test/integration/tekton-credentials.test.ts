// Tekton's credential flags on the real bundle and the standalone build, as PID 1: the argument vector the pod builder
// makes for a TaskRun whose ServiceAccount holds a basic-auth secret (TestPodBuild "with service account"), the secret
// mounted under BATON_TEKTON_ROOT/creds-secrets, the files written to BATON_TEKTON_ROOT/creds and copied into $HOME.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { IS_ROOT, NO_STANDALONE, STANDALONE, cleanEnv, existsSync, join, runBaton, tempDir } from "./helpers.js";

/** A pod's /tekton moved under a temporary folder: the ready file, the secrets, the creds emptyDir. */
function pod(secrets: Record<string, Record<string, string>>) {
  const dir = tempDir();
  const root = join(dir, "tekton");
  mkdirSync(join(root, "downward"), { recursive: true });
  writeFileSync(join(root, "downward/ready"), "READY");
  mkdirSync(join(root, "creds"));
  for (const [secret, files] of Object.entries(secrets)) {
    mkdirSync(join(root, "creds-secrets", secret), { recursive: true });
    for (const [name, content] of Object.entries(files)) writeFileSync(join(root, "creds-secrets", secret, name), content);
  }
  const home = join(dir, "home");
  mkdirSync(home);
  return { dir, root, home, env: cleanEnv({ BATON_TEKTON_ROOT: root, HOME: home }) };
}

/** An argument vector of Tekton's pod builder with its /tekton paths moved to `root`. */
function moved(root: string, argv: string[]): string[] {
  return argv.map((word) => word.replace(/(^|=)\/tekton\//, `$1${root}/`));
}

const WITH_SERVICE_ACCOUNT = [
  "-wait_file", "/tekton/downward/ready", "-wait_file_content", "-post_file", "/tekton/run/0/out",
  "-termination_path", "/tekton/termination", "-step_metadata_dir", "/tekton/run/0/status",
  "-basic-docker=multi-creds=https://docker.io", "-basic-docker=multi-creds=https://us.gcr.io",
  "-basic-git=multi-creds=github.com", "-basic-git=multi-creds=gitlab.com",
  "-entrypoint", "cmd", "--",
];

const EXPECTED = {
  ".docker/config.json":
    `{"auths":{"https://docker.io":{"username":"foo","password":"BestEver","auth":"Zm9vOkJlc3RFdmVy","email":"not@val.id"},` +
    `"https://us.gcr.io":{"username":"foo","password":"BestEver","auth":"Zm9vOkJlc3RFdmVy","email":"not@val.id"}}}`,
  ".gitconfig":
    `[credential]\n\thelper = store\n[credential "github.com"]\n\tusername = foo\n\tuseHttpPath = true\n` +
    `[credential "gitlab.com"]\n\tusername = foo\n\tuseHttpPath = true\n`,
  ".git-credentials": "//foo:BestEver@github.com\n//foo:BestEver@gitlab.com\n",
};

for (const [name, baton] of [["bundle", undefined], ["standalone build", [STANDALONE]]] as const) {
  test(`${name}: the pod builder's vector with a ServiceAccount secret writes Tekton's files, copies them to $HOME, runs the step`, { skip: baton && NO_STANDALONE }, async () => {
    const { root, home, env } = pod({ "multi-creds": { username: "foo", password: "BestEver" } });
    // The step's command sees the credentials in $HOME, as git and docker would.
    const argv = moved(root, WITH_SERVICE_ACCOUNT).map((w) => (w === "cmd" ? "sh" : w));
    const exit = await runBaton([...argv, "-c", 'cat "$HOME/.git-credentials"'], { env, pid1: IS_ROOT, ...(baton ? { baton: [...baton] } : {}) });
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(exit.stderr, "");
    assert.equal(exit.stdout, EXPECTED[".git-credentials"]);
    for (const [file, content] of Object.entries(EXPECTED)) {
      assert.equal(readFileSync(join(root, "creds", file), "utf8"), content, file);
      assert.equal(readFileSync(join(home, file), "utf8"), content, `$HOME/${file}`);
      assert.equal(statSync(join(root, "creds", file)).mode & 0o777, 0o600, file);
      assert.equal(statSync(join(home, file)).mode & 0o777, 0o600, `$HOME/${file}`);
    }
    assert.equal(statSync(join(home, ".docker")).mode & 0o777, 0o700);
    assert.equal(existsSync(join(root, "run/0/out")), true);
  });
}

test("a secret file that is missing: exit 2 before anything runs (Tekton's flag parsing), one line, POST.err", async () => {
  const { root, env, dir } = pod({ "multi-creds": { username: "foo" } });
  const argv = moved(root, WITH_SERVICE_ACCOUNT).map((w) => (w === "cmd" ? "touch" : w));
  const exit = await runBaton([...argv, join(dir, "ran")], { env, pid1: IS_ROOT });
  assert.equal(exit.code, 2);
  assert.match(exit.stderr, /^baton: -basic-docker: cannot read .*multi-creds\/password: no such file or directory \(ENOENT\)\n$/);
  assert.equal(existsSync(join(dir, "ran")), false);
  assert.equal(existsSync(join(root, "run/0/out.err")), true);
  assert.equal(existsSync(join(root, "creds/.docker")), false);
});

test("a -docker-config secret that is not JSON: one warning, the rest written, the step runs", async () => {
  const { root, env, home } = pod({ bad: { ".dockerconfigjson": "{nope" }, key: { "ssh-privatekey": "PRIVATE\n", known_hosts: "github.com ssh-ed25519 AAAA" } });
  const argv = [
    "-post_file", join(root, "run/0/out"), "-termination_path", join(root, "termination"),
    "-docker-config=bad", "-ssh-git=key=github.com", "-entrypoint", "true", "--",
  ];
  const exit = await runBaton(argv, { env, pid1: IS_ROOT });
  assert.equal(exit.code, 0, exit.stderr);
  assert.match(exit.stderr, /^baton: cannot write the docker credentials: .*\.dockerconfigjson: .*JSON/);
  assert.equal(exit.stderr.trim().split("\n").length, 1);
  assert.equal(
    readFileSync(join(home, ".ssh/config"), "utf8"),
    `Host github.com\n    HostName github.com\n    Port 22\n    IdentityFile ${root}/creds/.ssh/id_key\n`,
  );
  assert.equal(readFileSync(join(home, ".ssh/id_key"), "utf8"), "PRIVATE\n");
  assert.equal(readFileSync(join(home, ".ssh/known_hosts"), "utf8"), "github.com ssh-ed25519 AAAA");
  assert.equal(statSync(join(home, ".ssh")).mode & 0o777, 0o700);
});

test("Tekton mode without credential flags still copies what is in /tekton/creds; an unwritable $HOME is a warning", async () => {
  const { root, env, home } = pod({});
  writeFileSync(join(root, "creds/.gitconfig"), "[user]\n\tname = x\n");
  const step = ["-post_file", join(root, "run/0/out"), "-entrypoint", "true", "--"];
  const exit = await runBaton(step, { env, pid1: IS_ROOT });
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(readFileSync(join(home, ".gitconfig"), "utf8"), "[user]\n\tname = x\n");
  // $HOME is a file: the copy fails, the step still runs and hands on.
  writeFileSync(join(root, "not-a-dir"), "");
  const bad = await runBaton(step, { env: { ...env, HOME: join(root, "not-a-dir") }, pid1: IS_ROOT });
  assert.equal(bad.code, 0, bad.stderr);
  assert.match(bad.stderr, /^baton: cannot copy the credential \.gitconfig from .* not a directory/);
});
