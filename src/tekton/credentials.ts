import { lstatSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { describeSystemError, usageError } from "../base/errors.js";
import { writeFileAtomic } from "../base/atomic-write.js";
import { makeFolders, makeOwnFolder, READ_LIMIT, readBounded, readOptionalText, readTextBounded } from "../base/safe-files.js";
import { goQuote, parseGoUrl, urlHasPath, urlWithUserPassword } from "./go-url.js";
import type { CredentialFlags } from "../cli/step-options.js";

// Tekton's credential initialisation (creds-init, inside its entrypoint since v0.14): the controller mounts each
// secret of the step's ServiceAccount at <root>/creds-secrets/<name>/ and names it in -basic-docker, -docker-config,
// -docker-cfg, -basic-git and -ssh-git. The entrypoint writes <root>/creds/{.docker/config.json, .gitconfig,
// .git-credentials, .ssh/...} from them, byte for byte as below, then copies those four into $HOME, so that git, ssh
// and docker find them. Reading the secrets of the "secret=url" flags happens while the options are checked: a missing
// file is a usage error (Tekton: exit 2), everything else is best effort with a warning, as in Tekton
// (pkg/credentials/{dockercreds,gitcreds,writer} in tektoncd/pipeline). Loaded only when credentials are in play.
// Safer than Tekton (docs/tekton.md#credentials): <root>/creds and $HOME may hold what another step planted, so every
// file is written as a new 0600 file renamed into place (never through a symlink, never keeping an old file's mode),
// into folders that are not symlinks, and the copy into $HOME does not follow symlinks; a secret's own files (the
// kubelet's symlinks into ..data/) are followed, but read only when regular and at most 1 MiB.

export type { CredentialFlags };

interface BasicEntry {
  secret: string;
  username: string;
  password: string;
}
interface SshEntry {
  secret: string;
  privateKey: string;
  knownHosts: string;
}

/** What the "secret=url" flags read from their secrets, in flag order; -docker-config/-docker-cfg are read later. */
export interface Credentials {
  docker: Map<string, BasicEntry>;
  dockerConfig: string[];
  dockerCfg: string[];
  git: Map<string, BasicEntry>;
  ssh: Map<string, SshEntry[]>;
}

/** The names of the files in $HOME that credentials go to (Tekton's CredsInitCredentials). */
export const CREDENTIAL_PATHS = [".docker", ".gitconfig", ".git-credentials", ".ssh"] as const;

export function hasCredentialFlags(flags: CredentialFlags): boolean {
  return Object.values(flags).some((list: string[]) => list.length > 0);
}

/** Reads every secret the flags name; throws a usage error as Tekton's flag parsing fails (exit 2, nothing written). */
export function readCredentials(flags: CredentialFlags, secretsRoot: string): Credentials {
  for (const [flag, names] of [["docker-config", flags.dockerConfig], ["docker-cfg", flags.dockerCfg]] as const) {
    for (const name of names) secretName(flag, name);
  }
  const credentials: Credentials = {
    docker: new Map(),
    dockerConfig: flags.dockerConfig,
    dockerCfg: flags.dockerCfg,
    git: new Map(),
    ssh: new Map(),
  };
  for (const value of flags.basicDocker) {
    const [secret, url] = secretAndUrl("basic-docker", value);
    refuseControl("basic-docker", `the URL ${JSON.stringify(url)}`, url);
    if (credentials.docker.has(url)) throw usageError(`-basic-docker: multiple entries for url: ${url}`);
    credentials.docker.set(url, readBasic("basic-docker", secretsRoot, secret));
  }
  for (const value of flags.basicGit) {
    const [secret, url] = secretAndUrl("basic-git", value);
    if (credentials.git.has(url)) throw usageError(`-basic-git: multiple entries for url: ${url}`);
    const entry = readBasic("basic-git", secretsRoot, secret);
    try {
      parseGoUrl(url);
    } catch (error) {
      throw usageError(`-basic-git: ${(error as Error).message}`);
    }
    credentials.git.set(url, entry);
  }
  for (const value of flags.sshGit) {
    const [secret, url] = secretAndUrl("ssh-git", value);
    sshHost(url);
    const privateKey = readSecretFile("ssh-git", secretsRoot, secret, "ssh-privatekey");
    let knownHosts = "";
    try {
      knownHosts = readSecret(join(secretsRoot, secret, "known_hosts"));
    } catch {
      // optional: any read error means "none", as in Tekton
    }
    const list = credentials.ssh.get(url) ?? [];
    list.push({ secret, privateKey, knownHosts });
    credentials.ssh.set(url, list);
  }
  return credentials;
}

function secretAndUrl(flag: string, value: string): [string, string] {
  const parts = value.split("=");
  if (parts.length !== 2) throw usageError(`-${flag}: expect entries of the form secret=url, got: ${value}`);
  return [secretName(flag, parts[0]!), parts[1]!];
}

/**
 * A secret's folder under creds-secrets/: one path component (Kubernetes names never hold a "/"), no control character
 * (a name of Kubernetes' has none); for -ssh-git, the name of .ssh/id_<name> on an IdentityFile line of .ssh/config,
 * so no white space either (ssh would read a second word there).
 */
function secretName(flag: string, name: string): string {
  const unfit = flag === "ssh-git" ? /[\x00-\x20\x7f]/ : CONTROL;
  if (name === "" || name.includes("/") || name === "." || name === ".." || unfit.test(name)) {
    throw usageError(`-${flag}: invalid secret name ${JSON.stringify(name)}`);
  }
  return name;
}

/**
 * The values that go into .ssh/config, .gitconfig, .git-credentials and .docker/config.json are lines or parts of
 * lines there: a newline in one would write a line of the caller's choosing (a ProxyCommand that ssh runs, a credential
 * helper that git runs). Go's url.Parse refuses ASCII control characters in a URL; baton refuses them in every such
 * value (Tekton writes a URL of -ssh-git, or a username, as it is).
 */
const CONTROL = /[\x00-\x1f\x7f]/;

function refuseControl(flag: string, what: string, value: string): void {
  const found = CONTROL.exec(value);
  if (found) {
    const code = `U+${found[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`;
    throw usageError(`-${flag}: ${what} holds a control character (${code}), which would change the configuration it is written into`);
  }
}

/**
 * The host (and port, and repository path) of -ssh-git, which becomes `Host`, `HostName` and `Port` lines of
 * .ssh/config and [url "..."] sections of .gitconfig: no control character, no white space (ssh would read a second
 * word as another host pattern or refuse the line), no quote or backslash (they would end git's quoted section).
 */
function sshHost(url: string): void {
  refuseControl("ssh-git", `the URL ${JSON.stringify(url)}`, url);
  if (url === "" || /[\s"\\]/.test(url)) {
    throw usageError(`-ssh-git: invalid host ${JSON.stringify(url)}: a host[:port][/path] without white space, quotes or backslashes`);
  }
}

function readBasic(flag: string, root: string, secret: string): BasicEntry {
  const entry = {
    secret,
    username: readSecretFile(flag, root, secret, "username"),
    password: readSecretFile(flag, root, secret, "password"),
  };
  // Named by file, never quoted: a secret's value stays out of the log. A newline at the end (a file written by `echo`)
  // is one too: git would take it as part of the name, or as the end of the credential protocol's line.
  refuseControl(flag, `${join(root, secret, "username")}`, entry.username);
  refuseControl(flag, `${join(root, secret, "password")}`, entry.password);
  return entry;
}

/** A file of a mounted Secret: the kubelet's symlink followed, but only a regular file, at most 1 MiB. */
function readSecret(path: string): string {
  return readTextBounded(path, READ_LIMIT.secret, { followSymlink: true });
}

function readSecretFile(flag: string, root: string, secret: string, key: string): string {
  const path = join(root, secret, key);
  try {
    return readSecret(path);
  } catch (error) {
    throw usageError(`-${flag}: cannot read ${path}: ${describeSystemError(error)}`);
  }
}

/**
 * Writes the credential files into `credsDir` (Tekton: docker first, then git: basic, then ssh). Each part that fails
 * is warned about and skipped, and the step goes on (Tekton logs "Error initializing credentials").
 */
export function writeCredentials(credentials: Credentials, credsDir: string, secretsRoot: string, warn: (m: string) => void): void {
  const parts: [string, () => void][] = [
    ["docker", () => writeDockerConfig(credentials, credsDir, secretsRoot)],
    ["git", () => {
      writeBasicGit(credentials.git, credsDir);
      writeSsh(credentials.ssh, credsDir);
    }],
  ];
  try {
    makeFolders(credsDir); // Tekton mounts an emptyDir there; elsewhere it may not exist yet
  } catch (error) {
    warn(`cannot write the credentials: ${describeError(error)}`);
    return;
  }
  for (const [name, write] of parts) {
    try {
      write();
    } catch (error) {
      warn(`cannot write the ${name} credentials: ${describeError(error)}`);
    }
  }
}

function describeError(error: unknown): string {
  return (error as NodeJS.ErrnoException)?.code ? describeSystemError(error) : (error as Error).message;
}

// ---- docker: .docker/config.json -------------------------------------------------------------------------------

interface DockerAuth {
  username?: string;
  password?: string;
  auth?: string;
  email?: string;
}

function writeDockerConfig(credentials: Credentials, credsDir: string, secretsRoot: string): void {
  const auths = new Map<string, DockerAuth>();
  for (const secret of credentials.dockerCfg) {
    const map = readJsonObject(join(secretsRoot, secret, ".dockercfg"));
    for (const [registry, entry] of Object.entries(map)) auths.set(registry, dockerAuth(entry, registry));
  }
  for (const secret of credentials.dockerConfig) {
    const file = join(secretsRoot, secret, ".dockerconfigjson");
    const config = readJsonObject(file);
    const inner = goField(config, "auths");
    if (inner !== undefined && inner !== null && (typeof inner !== "object" || Array.isArray(inner))) {
      throw new Error(`${file}: "auths" is not an object`);
    }
    for (const [registry, entry] of Object.entries((inner ?? {}) as Record<string, unknown>)) {
      auths.set(registry, dockerAuth(entry, registry));
    }
  }
  for (const [registry, { username, password }] of credentials.docker) {
    auths.set(registry, {
      username,
      password,
      auth: Buffer.from(`${username}:${password}`).toString("base64"),
      email: "not@val.id",
    });
  }
  if (auths.size === 0) return;
  // Tekton's os.MkdirAll(..., os.ModePerm): 0777 less the umask (0755 as a rule); the copy in $HOME is 0700.
  makeOwnFolder(join(credsDir, ".docker"), 0o777);
  writeSecret(join(credsDir, ".docker/config.json"), dockerConfigJson(auths));
}

/** Go's json.Marshal of {"auths": map}: keys sorted, fields in struct order, empty ones omitted except auth. */
export function dockerConfigJson(auths: ReadonlyMap<string, DockerAuth>): string {
  const keys = [...auths.keys()].sort(byBytes);
  const body = keys.map((key) => {
    const a = auths.get(key)!;
    const fields: string[] = [];
    if (a.username) fields.push(`"username":${goJson(a.username)}`);
    if (a.password) fields.push(`"password":${goJson(a.password)}`);
    fields.push(`"auth":${goJson(a.auth ?? "")}`);
    if (a.email) fields.push(`"email":${goJson(a.email)}`);
    return `${goJson(key)}:{${fields.join(",")}}`;
  });
  return `{"auths":{${body.join(",")}}}`;
}

/** Go sorts map keys by bytes; JavaScript's default sort is by UTF-16 units, which differs above U+FFFF. */
function byBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/** Go's encoding/json string: HTML characters and U+2028/2029 escaped as \u00xx. */
export function goJson(value: string): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** A new 0600 file renamed into place: a symlink planted at `path` is replaced, an old file's mode not kept. */
function writeSecret(path: string, content: string | Buffer): void {
  writeFileAtomic(path, content, 0o600);
}

function readJsonObject(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readSecret(file);
  } catch (error) {
    throw new Error(`cannot read ${file}: ${describeError(error)}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON.parse's message: it quotes the start of the text, which is a secret.
    throw new Error(`${file}: not valid JSON`);
  }
  if (parsed === null) return {};
  if (typeof parsed !== "object" || Array.isArray(parsed)) throw new Error(`${file}: not a JSON object`);
  return parsed as Record<string, unknown>;
}

/** Go's json.Unmarshal into {Username, Password, Auth, Email}: field names match case-insensitively; others dropped. */
function dockerAuth(entry: unknown, registry: string): DockerAuth {
  if (entry === null) return {};
  if (typeof entry !== "object" || Array.isArray(entry)) throw new Error(`the entry for ${registry} is not an object`);
  const auth: DockerAuth = {};
  for (const field of ["username", "password", "auth", "email"] as const) {
    const value = goField(entry as Record<string, unknown>, field);
    if (value === undefined || value === null) continue;
    if (typeof value !== "string") throw new Error(`the field ${field} of ${registry} is not a string`);
    auth[field] = value;
  }
  return auth;
}

function goField(object: Record<string, unknown>, name: string): unknown {
  if (Object.hasOwn(object, name)) return object[name];
  let found: unknown;
  for (const [key, value] of Object.entries(object)) if (key.toLowerCase() === name) found = value;
  return found;
}

// ---- git over https: .gitconfig and .git-credentials -----------------------------------------------------------

function writeBasicGit(entries: ReadonlyMap<string, BasicEntry>, credsDir: string): void {
  if (entries.size === 0) return;
  let config = "[credential]\n\thelper = store\n";
  for (const [url, { username }] of entries) {
    const name = username.replaceAll("\\", "\\\\");
    config += `[credential ${goQuote(url)}]\n\tusername = ${name}\n${urlHasPath(url) ? "\tuseHttpPath = true\n" : ""}`;
  }
  writeSecret(join(credsDir, ".gitconfig"), config);
  // Host-wide credentials first, as fallbacks; repository-specific ones after (a stable sort).
  const urls = [...entries.keys()];
  const ordered = [...urls.filter((u) => !urlHasPath(u)), ...urls.filter((u) => urlHasPath(u))];
  const lines = ordered.map((url) => {
    const { username, password } = entries.get(url)!;
    return urlWithUserPassword(url, username, password);
  });
  writeSecret(join(credsDir, ".git-credentials"), `${lines.join("\n")}\n`);
}

// ---- git over ssh: .ssh/{config,known_hosts,id_<secret>} and insteadOf in .gitconfig ----------------------------

function writeSsh(entries: ReadonlyMap<string, SshEntry[]>, credsDir: string): void {
  if (entries.size === 0) return;
  const sshDir = join(credsDir, ".ssh");
  makeOwnFolder(sshDir, 0o777); // as .docker above
  const urls = [...entries.keys()];
  const ordered = [...urls.filter((u) => parseSshUrl(u).path === ""), ...urls.filter((u) => parseSshUrl(u).path !== "")];
  let config = "";
  const knownHosts: string[] = [];
  let insteadOf = "";
  for (const url of ordered) {
    const { host, port, path } = parseSshUrl(url);
    let alias = host;
    if (path !== "") {
      const trimmed = path.replace(/^\//, "");
      alias = `${host}--${trimmed.replaceAll("/", "--")}`;
      insteadOf += `[url "git@${alias}:${trimmed}.git"]\n\tinsteadOf = git@${host}:${trimmed}.git\n`;
      insteadOf += port === "22"
        ? `[url "ssh://${alias}/${trimmed}.git"]\n\tinsteadOf = ssh://${host}/${trimmed}.git\n`
        : `[url "ssh://${alias}/${trimmed}.git"]\n\tinsteadOf = ssh://${host}:${port}/${trimmed}.git\n`;
    }
    config += `Host ${alias}\n    HostName ${host}\n    Port ${port}\n`;
    for (const entry of entries.get(url)!) {
      const identity = join(sshDir, `id_${entry.secret}`);
      writeSecret(identity, entry.privateKey);
      config += `    IdentityFile ${identity}\n`;
      if (entry.knownHosts !== "") knownHosts.push(entry.knownHosts);
    }
  }
  writeSecret(join(sshDir, "config"), config);
  if (knownHosts.length > 0) writeSecret(join(sshDir, "known_hosts"), knownHosts.join("\n"));
  if (insteadOf !== "") {
    // Tekton appends to .gitconfig; here the whole file is written anew (what is there, then the insteadOf lines).
    const gitconfig = join(credsDir, ".gitconfig");
    writeSecret(gitconfig, (readOptionalText(gitconfig, READ_LIMIT.secret) ?? "") + insteadOf);
  }
}

/** "host[:port][/repo/path]": the port from Go's net.SplitHostPort, 22 without one. */
export function parseSshUrl(raw: string): { host: string; port: string; path: string } {
  const slash = raw.indexOf("/");
  const path = slash === -1 ? "" : raw.slice(slash);
  const hostPort = slash === -1 ? raw : raw.slice(0, slash);
  const split = splitHostPort(hostPort);
  return split ? { ...split, path } : { host: hostPort, port: "22", path };
}

/** Go's net.SplitHostPort; undefined where it returns an error. */
function splitHostPort(hostport: string): { host: string; port: string } | undefined {
  const colon = hostport.lastIndexOf(":");
  if (colon === -1) return undefined;
  let host: string;
  if (hostport.startsWith("[")) {
    const end = hostport.indexOf("]");
    if (end === -1 || end + 1 !== colon) return undefined;
    host = hostport.slice(1, end);
    if (host.includes("]") || hostport.slice(end + 1, colon).length) return undefined;
  } else {
    host = hostport.slice(0, colon);
    if (host.includes(":") || host.includes("[") || host.includes("]")) return undefined;
  }
  const port = hostport.slice(colon + 1);
  if (hostport.indexOf("]", colon) !== -1 || port.includes("[")) return undefined;
  return { host, port };
}

// ---- the copy into $HOME ---------------------------------------------------------------------------------------

/** True when `credsDir` holds any of the four credential paths: only then is there anything to copy. */
export function hasCredentialFiles(credsDir: string): boolean {
  let names: string[];
  try {
    names = readdirSync(credsDir);
  } catch {
    return false;
  }
  return names.some((name) => (CREDENTIAL_PATHS as readonly string[]).includes(name));
}

/**
 * Copies .docker, .gitconfig, .git-credentials and .ssh from `credsDir` into `home`, recursively: folders 0700, files
 * 0600, new files renamed into place. A failure is warned about per path and skipped, as in Tekton's
 * CopyCredsToHome; unlike Tekton, a symlink (in the source or the destination) is not followed but refused.
 */
export function copyCredentialsToHome(credsDir: string, home: string | undefined, warn: (m: string) => void): void {
  try {
    if (!statSync(credsDir).isDirectory()) return;
  } catch {
    return;
  }
  if (!home) {
    warn("cannot copy the credentials: $HOME is not defined");
    return;
  }
  for (const name of CREDENTIAL_PATHS) {
    try {
      copyTree(join(credsDir, name), join(home, name));
    } catch (error) {
      warn(`cannot copy the credential ${name} from ${credsDir} to ${home}: ${describeError(error)}`);
    }
  }
}

function copyTree(source: string, destination: string): void {
  let info;
  try {
    info = lstatSync(source);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  if (info.isDirectory()) {
    makeOwnFolder(destination, 0o700);
    for (const name of readdirSync(source)) copyTree(join(source, name), join(destination, name));
    return;
  }
  // Tekton's os.Open follows a symlink here: one planted in <root>/creds would copy any file the step can read.
  writeSecret(destination, readBounded(source, READ_LIMIT.secret));
}
