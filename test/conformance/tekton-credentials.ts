// Conformance scenarios: the credential flags, with the secrets the controller mounts under /tekton/creds-secrets;
// every file written under /tekton/creds and $HOME (/tekton/home) is compared byte for byte with its mode. Run by
// tekton.test.ts.
import { step } from "./tekton-basics.js";
import type { Planted, Scenario } from "./tekton-run.js";

/** A secret as the kubelet mounts it, and /tekton/creds, an emptyDir in every step of a pod. */
function secret(name: string, files: Record<string, string>): Record<string, Planted> {
  return { creds: { dir: true }, ...Object.fromEntries(Object.entries(files).map(([file, content]) => [`creds-secrets/${name}/${file}`, content])) };
}

const basic = secret("basic", { username: "foo", password: "Best:Ever@/" });
const ssh = secret("ssh", { "ssh-privatekey": "-----BEGIN KEY-----\nPRIVATE\n-----END KEY-----\n", known_hosts: "github.com ssh-ed25519 AAAA\n" });
const sshNoHosts = secret("bare", { "ssh-privatekey": "PRIVATE2\n" });
const config = secret("config", { ".dockerconfigjson": '{"auths":{"registry.example":{"auth":"Zm9vOmJhcg=="}}}' });
const cfg = secret("cfg", { ".dockercfg": '{"old.example":{"auth":"Zm9vOmJhcg==","email":"a@b.c"}}' });

export const credentials: Scenario[] = [
  { id: "creds-basic-git", args: step(["-basic-git=basic=https://github.com"], "report"), files: basic },
  { id: "creds-basic-git-repository", args: step(["-basic-git=basic=https://github.com/org/repo"], "report"), files: basic },
  {
    id: "creds-basic-git-two",
    args: step(["-basic-git=basic=https://github.com", "-basic-git", "other=https://gitlab.com"], "report"),
    files: { ...basic, ...secret("other", { username: "bar", password: "pw" }) },
  },
  { id: "creds-ssh-git", args: step(["-ssh-git=ssh=github.com"], "report"), files: ssh },
  { id: "creds-ssh-git-no-known-hosts", args: step(["-ssh-git=bare=gitlab.com:2222"], "report"), files: sshNoHosts },
  { id: "creds-ssh-git-two", args: step(["-ssh-git=ssh=github.com", "-ssh-git=bare=gitlab.com"], "report"), files: { ...ssh, ...sshNoHosts } },
  { id: "creds-basic-docker", args: step(["-basic-docker=basic=https://registry.example"], "report"), files: basic },
  { id: "creds-docker-config", args: step(["-docker-config=config"], "report"), files: config },
  { id: "creds-docker-cfg", args: step(["-docker-cfg=cfg"], "report"), files: cfg },
  {
    id: "creds-docker-all",
    args: step(["-basic-docker=basic=https://registry.example", "-docker-config=config", "-docker-cfg=cfg"], "report"),
    files: { ...basic, ...config, ...cfg },
  },
  { id: "creds-missing-secret", args: step(["-basic-git=nobody=https://github.com"], "report"), files: { creds: { dir: true } } },
  {
    id: "creds-no-creds-folder",
    args: step(["-basic-git=basic=https://github.com", "-docker-config=config"], "report"),
    files: Object.fromEntries(Object.entries({ ...basic, ...config }).filter(([path]) => path !== "creds")),
  },
  { id: "creds-malformed-pair", args: step(["-basic-git=basic"], "report"), files: basic },
  { id: "creds-docker-config-not-json", args: step(["-docker-config=bad"], "report"), files: secret("bad", { ".dockerconfigjson": "{nope" }) },
  {
    id: "creds-copied-from-creds",
    args: step([], "report"),
    files: { "creds/.gitconfig": "[user]\n\tname = x\n", "creds/.ssh/id_x": { content: "KEY\n", mode: 0o600 } },
  },
  {
    id: "creds-home-has-files",
    args: step(["-basic-git=basic=https://github.com"], "report"),
    files: { ...basic, "home/.gitconfig": "old\n", "home/.ssh/known_hosts": "old\n" },
  },
];
