// Tekton's credential files, byte for byte: the worked examples of Tekton's own tests (pkg/credentials/dockercreds
// and gitcreds creds_test.go at tektoncd/pipeline 3ee1745), run through the module on real files.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { copyCredentialsToHome, readCredentials, writeCredentials, type CredentialFlags } from "../../src/tekton/credentials.js";
import { BatonError } from "../../src/base/errors.js";

function setup(secrets: Record<string, Record<string, string>>) {
  const root = mkdtempSync(join(tmpdir(), "baton-creds-"));
  for (const [secret, files] of Object.entries(secrets)) {
    mkdirSync(join(root, "creds-secrets", secret), { recursive: true });
    for (const [name, content] of Object.entries(files)) writeFileSync(join(root, "creds-secrets", secret, name), content);
  }
  mkdirSync(join(root, "creds"));
  return root;
}

function flags(partial: Partial<CredentialFlags>): CredentialFlags {
  return { basicDocker: [], dockerConfig: [], dockerCfg: [], basicGit: [], sshGit: [], ...partial };
}

function write(root: string, f: Partial<CredentialFlags>): string[] {
  const warnings: string[] = [];
  const secrets = join(root, "creds-secrets");
  writeCredentials(readCredentials(flags(f), secrets), join(root, "creds"), secrets, (m) => warnings.push(m));
  return warnings;
}

const read = (root: string, path: string) => readFileSync(join(root, "creds", path), "utf8");

test("TestFlagHandling: one -basic-docker", () => {
  const root = setup({ foo: { username: "bar", password: "baz" } });
  assert.deepEqual(write(root, { basicDocker: ["foo=https://us.gcr.io"] }), []);
  assert.equal(
    read(root, ".docker/config.json"),
    `{"auths":{"https://us.gcr.io":{"username":"bar","password":"baz","auth":"YmFyOmJheg==","email":"not@val.id"}}}`,
  );
  assert.equal(statSync(join(root, "creds/.docker/config.json")).mode & 0o777, 0o600);
});

test("TestFlagHandlingTwice: registries sorted", () => {
  const root = setup({ foo: { username: "asdf", password: "blah" }, bar: { username: "bleh", password: "belch" } });
  write(root, { basicDocker: ["foo=https://us.gcr.io", "bar=https://eu.gcr.io"] });
  assert.equal(
    read(root, ".docker/config.json"),
    `{"auths":{"https://eu.gcr.io":{"username":"bleh","password":"belch","auth":"YmxlaDpiZWxjaA==","email":"not@val.id"},"https://us.gcr.io":{"username":"asdf","password":"blah","auth":"YXNkZjpibGFo","email":"not@val.id"}}}`,
  );
});

test("TestMultipleFlagHandling: -docker-cfg, -docker-config and -basic-docker merged", () => {
  const root = setup({
    foo: { username: "bar", password: "baz" },
    bar: { ".dockerconfigjson": `{"auths":{"https://index.docker.io/v1":{"auth":"fooisbar"}}}` },
    blubb: { ".dockerconfigjson": `{"auths":{"us.icr.io":{"auth":"fooisblubb"}}}` },
    baz: { ".dockercfg": `{"https://my.registry/v1":{"auth":"fooisbaz"}}` },
    bla: { ".dockercfg": `{"de.icr.io":{"auth":"fooisbla"}}` },
  });
  write(root, { basicDocker: ["foo=https://us.gcr.io"], dockerConfig: ["bar", "blubb"], dockerCfg: ["baz", "bla"] });
  assert.equal(
    read(root, ".docker/config.json"),
    `{"auths":{"de.icr.io":{"auth":"fooisbla"},"https://index.docker.io/v1":{"auth":"fooisbar"},"https://my.registry/v1":{"auth":"fooisbaz"},"https://us.gcr.io":{"username":"bar","password":"baz","auth":"YmFyOmJheg==","email":"not@val.id"},"us.icr.io":{"auth":"fooisblubb"}}}`,
  );
});

test("docker config: fields other than username/password/auth/email are dropped; a later source wins", () => {
  const root = setup({
    a: { ".dockerconfigjson": `{"auths":{"r":{"auth":"x","identitytoken":"t","Email":"e@x"}}}` },
    b: { ".dockercfg": `{"r":{"auth":"old"}}` },
  });
  write(root, { dockerCfg: ["b"], dockerConfig: ["a"] });
  assert.equal(read(root, ".docker/config.json"), `{"auths":{"r":{"auth":"x","email":"e@x"}}}`);
});

test("docker config: a missing or invalid -docker-config file is a warning, and the git credentials are still written", () => {
  const root = setup({ foo: { username: "u", password: "p" }, bad: { ".dockerconfigjson": "{not json" } });
  const warnings = write(root, { dockerConfig: ["missing", "bad"], basicGit: ["foo=https://github.com"] });
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /^cannot write the docker credentials: .*no such file or directory/);
  assert.equal(existsSync(join(root, "creds/.docker")), false);
  assert.equal(read(root, ".git-credentials"), "https://u:p@github.com\n");
});

test("no credentials given: nothing is written", () => {
  const root = setup({});
  write(root, {});
  assert.equal(existsSync(join(root, "creds/.docker")), false);
  assert.equal(existsSync(join(root, "creds/.gitconfig")), false);
});

test("TestBasicFlagHandling", () => {
  const root = setup({ foo: { username: "bar", password: "baz" } });
  write(root, { basicGit: ["foo=https://github.com"] });
  assert.equal(read(root, ".gitconfig"), `[credential]\n\thelper = store\n[credential "https://github.com"]\n\tusername = bar\n`);
  assert.equal(read(root, ".git-credentials"), "https://bar:baz@github.com\n");
  assert.equal(statSync(join(root, "creds/.gitconfig")).mode & 0o777, 0o600);
  assert.equal(statSync(join(root, "creds/.git-credentials")).mode & 0o777, 0o600);
});

test("TestBasicFlagHandlingMixedCredentials: useHttpPath, host-only credentials first", () => {
  const root = setup({
    "repo-specific-creds": { username: "foo", password: "repo-token" },
    "host-wide-creds": { username: "myorguser", password: "host-token" },
  });
  write(root, { basicGit: ["repo-specific-creds=https://github.com/secret-org/private-repo", "host-wide-creds=https://github.com"] });
  assert.equal(
    read(root, ".gitconfig"),
    `[credential]\n\thelper = store\n[credential "https://github.com/secret-org/private-repo"]\n\tusername = foo\n\tuseHttpPath = true\n[credential "https://github.com"]\n\tusername = myorguser\n`,
  );
  assert.equal(read(root, ".git-credentials"), "https://myorguser:host-token@github.com\nhttps://foo:repo-token@github.com/secret-org/private-repo\n");
});

test("TestBasicBackslashInUsername", () => {
  const root = setup({ foo: { username: "foo\\bar\\banana", password: "baz" } });
  write(root, { basicGit: ["foo=https://github.com"] });
  assert.equal(read(root, ".gitconfig"), `[credential]\n\thelper = store\n[credential "https://github.com"]\n\tusername = foo\\\\bar\\\\banana\n`);
  assert.equal(read(root, ".git-credentials"), "https://foo%5Cbar%5Cbanana:baz@github.com\n");
});

test("basic-git userinfo escaping as Go's net/url: @ / ? : and spaces escaped, $&+,;= kept", () => {
  const root = setup({ s: { username: "a b@c", password: "p:/?$&+,;=é" } });
  write(root, { basicGit: ["s=https://example.com:8443/x"] });
  assert.equal(read(root, ".git-credentials"), "https://a%20b%40c:p%3A%2F%3F$&+,;=%C3%A9@example.com:8443/x\n");
});

test("pod builder's 'with service account' case: scheme-less URLs are paths to Go", () => {
  const root = setup({ "multi-creds": { username: "foo", password: "BestEver" } });
  write(root, {
    basicDocker: ["multi-creds=https://docker.io", "multi-creds=https://us.gcr.io"],
    basicGit: ["multi-creds=github.com", "multi-creds=gitlab.com"],
  });
  assert.equal(
    read(root, ".docker/config.json"),
    `{"auths":{"https://docker.io":{"username":"foo","password":"BestEver","auth":"Zm9vOkJlc3RFdmVy","email":"not@val.id"},"https://us.gcr.io":{"username":"foo","password":"BestEver","auth":"Zm9vOkJlc3RFdmVy","email":"not@val.id"}}}`,
  );
  assert.equal(
    read(root, ".gitconfig"),
    `[credential]\n\thelper = store\n[credential "github.com"]\n\tusername = foo\n\tuseHttpPath = true\n[credential "gitlab.com"]\n\tusername = foo\n\tuseHttpPath = true\n`,
  );
  assert.equal(read(root, ".git-credentials"), "//foo:BestEver@github.com\n//foo:BestEver@gitlab.com\n");
});

test("TestSSHFlagHandling", () => {
  const root = setup({ foo: { "ssh-privatekey": "bar", known_hosts: "ssh-rsa blah" } });
  write(root, { sshGit: ["foo=github.com"] });
  const ssh = join(root, "creds/.ssh");
  assert.equal(read(root, ".ssh/config"), `Host github.com\n    HostName github.com\n    Port 22\n    IdentityFile ${ssh}/id_foo\n`);
  assert.equal(read(root, ".ssh/known_hosts"), "ssh-rsa blah");
  assert.equal(read(root, ".ssh/id_foo"), "bar");
  for (const f of ["config", "known_hosts", "id_foo"]) assert.equal(statSync(join(ssh, f)).mode & 0o777, 0o600, f);
  assert.equal(existsSync(join(root, "creds/.gitconfig")), false);
});

test("TestSSHFlagHandlingThrice: identities per host, ports, known_hosts joined without a final newline", () => {
  const root = setup({
    foo: { "ssh-privatekey": "k1", known_hosts: "ssh-rsa aaaa" },
    bar: { "ssh-privatekey": "k2", known_hosts: "ssh-rsa bbbb" },
    baz: { "ssh-privatekey": "k3", known_hosts: "ssh-rsa cccc" },
  });
  write(root, { sshGit: ["foo=github.com", "bar=github.com", "baz=gitlab.example.com:2222"] });
  const ssh = join(root, "creds/.ssh");
  assert.equal(
    read(root, ".ssh/config"),
    `Host github.com\n    HostName github.com\n    Port 22\n    IdentityFile ${ssh}/id_foo\n    IdentityFile ${ssh}/id_bar\n` +
      `Host gitlab.example.com\n    HostName gitlab.example.com\n    Port 2222\n    IdentityFile ${ssh}/id_baz\n`,
  );
  assert.equal(read(root, ".ssh/known_hosts"), "ssh-rsa aaaa\nssh-rsa bbbb\nssh-rsa cccc");
});

test("TestSSHFlagHandlingMultipleReposSameHost: aliases and insteadOf", () => {
  const root = setup({ "repo1-secret": { "ssh-privatekey": "k1" }, "repo2-secret": { "ssh-privatekey": "k2" } });
  write(root, { sshGit: ["repo1-secret=github.com/org/repo1", "repo2-secret=github.com/org/repo2"] });
  const ssh = join(root, "creds/.ssh");
  assert.equal(
    read(root, ".ssh/config"),
    `Host github.com--org--repo1\n    HostName github.com\n    Port 22\n    IdentityFile ${ssh}/id_repo1-secret\n` +
      `Host github.com--org--repo2\n    HostName github.com\n    Port 22\n    IdentityFile ${ssh}/id_repo2-secret\n`,
  );
  assert.equal(
    read(root, ".gitconfig"),
    `[url "git@github.com--org--repo1:org/repo1.git"]\n\tinsteadOf = git@github.com:org/repo1.git\n[url "ssh://github.com--org--repo1/org/repo1.git"]\n\tinsteadOf = ssh://github.com/org/repo1.git\n` +
      `[url "git@github.com--org--repo2:org/repo2.git"]\n\tinsteadOf = git@github.com:org/repo2.git\n[url "ssh://github.com--org--repo2/org/repo2.git"]\n\tinsteadOf = ssh://github.com/org/repo2.git\n`,
  );
  assert.equal(existsSync(join(ssh, "known_hosts")), false);
});

test("TestSSHFlagHandlingRepoSpecificWithCustomPort", () => {
  const root = setup({ myrepo: { "ssh-privatekey": "k" } });
  write(root, { sshGit: ["myrepo=gitlab.example.com:2222/team/project"] });
  assert.match(read(root, ".ssh/config"), /^Host gitlab\.example\.com--team--project\n    HostName gitlab\.example\.com\n    Port 2222\n/);
  assert.equal(
    read(root, ".gitconfig"),
    `[url "git@gitlab.example.com--team--project:team/project.git"]\n\tinsteadOf = git@gitlab.example.com:team/project.git\n` +
      `[url "ssh://gitlab.example.com--team--project/team/project.git"]\n\tinsteadOf = ssh://gitlab.example.com:2222/team/project.git\n`,
  );
});

test("TestSSHFlagHandlingMixedCredentials: the host-wide block first; ssh insteadOf appended after the basic section", () => {
  const root = setup({ repo: { "ssh-privatekey": "k1" }, host: { "ssh-privatekey": "k2" }, basic: { username: "u", password: "p" } });
  write(root, { sshGit: ["repo=github.com/org/repo", "host=github.com"], basicGit: ["basic=https://example.com"] });
  assert.match(read(root, ".ssh/config"), /^Host github\.com\n[^]*Host github\.com--org--repo\n/);
  assert.equal(
    read(root, ".gitconfig"),
    `[credential]\n\thelper = store\n[credential "https://example.com"]\n\tusername = u\n` +
      `[url "git@github.com--org--repo:org/repo.git"]\n\tinsteadOf = git@github.com:org/repo.git\n[url "ssh://github.com--org--repo/org/repo.git"]\n\tinsteadOf = ssh://github.com/org/repo.git\n`,
  );
});

test("parse-time errors are usage errors (Tekton: exit 2): malformed, missing secret file, duplicate URL, bad URL", () => {
  const root = setup({ foo: { username: "u", password: "p" }, k: {} });
  const secrets = join(root, "creds-secrets");
  const usage = (f: Partial<CredentialFlags>, pattern: RegExp) =>
    assert.throws(() => readCredentials(flags(f), secrets), (e: unknown) => e instanceof BatonError && e.exitCode === 2 && pattern.test(e.message));
  usage({ basicDocker: ["bar=baz=blah"] }, /^-basic-docker: expect entries of the form secret=url, got: bar=baz=blah$/);
  usage({ basicGit: ["bar"] }, /^-basic-git: expect entries of the form secret=url, got: bar$/);
  usage({ basicDocker: ["nope=https://x"] }, /^-basic-docker: cannot read .*nope\/username: no such file or directory/);
  usage({ basicGit: ["foo=https://x", "foo=https://x"] }, /^-basic-git: multiple entries for url: https:\/\/x$/);
  usage({ basicDocker: ["foo=r", "foo=r"] }, /multiple entries for url: r/);
  usage({ basicGit: ["foo=:x"] }, /missing protocol scheme/);
  usage({ basicGit: ["foo=10.0.0.1:8080/x"] }, /first path segment in URL cannot contain colon/);
  usage({ sshGit: ["k=github.com"] }, /^-ssh-git: cannot read .*k\/ssh-privatekey/);
  // ssh allows the same URL more than once (several identities); -docker-config names are only collected.
  assert.doesNotThrow(() => readCredentials(flags({ dockerConfig: ["missing"], dockerCfg: ["missing"] }), secrets));
});

test("the copy into $HOME: recursive, folders 0700, files 0600, missing sources and an unset HOME are not errors", () => {
  const root = setup({ foo: { username: "bar", password: "baz", "ssh-privatekey": "key" } });
  write(root, { basicDocker: ["foo=r"], basicGit: ["foo=https://github.com"], sshGit: ["foo=github.com"] });
  const home = join(root, "home");
  const warnings: string[] = [];
  copyCredentialsToHome(join(root, "creds"), home, (m) => warnings.push(m));
  assert.equal(warnings.length, 0, warnings.join("\n"));
  for (const f of [".docker/config.json", ".gitconfig", ".git-credentials", ".ssh/config", ".ssh/id_foo"]) {
    assert.deepEqual(readFileSync(join(home, f)), readFileSync(join(root, "creds", f)), f);
    assert.equal(statSync(join(home, f)).mode & 0o777, 0o600, f);
  }
  assert.equal(statSync(join(home, ".ssh")).mode & 0o777, 0o700);
  copyCredentialsToHome(join(root, "creds"), undefined, (m) => warnings.push(m));
  assert.deepEqual(warnings, ["cannot copy the credentials: $HOME is not defined"]);
  copyCredentialsToHome(join(root, "nothing-here"), undefined, (m) => warnings.push(m));
  assert.equal(warnings.length, 1);
});
