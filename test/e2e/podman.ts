// A real container runtime for `make e2e`: podman (4.3, Debian 12) with a storage of its own under /tmp, removed at
// the end, so that nothing here touches the machine's images, pods or volumes. Two settings that this kind of machine
// needs and a workstation does not: `--runtime runc` (crun refuses cgroups in hybrid mode) and no default ulimits
// (podman's RLIMIT_NOFILE fails without CAP_SYS_RESOURCE). Events go to a file of this storage: every container's exit
// code is read from its "died" event, init containers included (podman removes an init container once it succeeded).
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const REPO = resolve(import.meta.dirname, "../..");
export const VERSION = (JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { version: string }).version;
export const IMAGE_ARCHIVE = join(REPO, "dist/baton-image.tar");

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export function run(program: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<Run> {
  return new Promise((done) => {
    execFile(program, args, { env, encoding: "utf8", maxBuffer: 64 << 20 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
      done({ code, stdout, stderr: error && code === 1 && !stderr ? String(error.message) : stderr });
    });
  });
}

export class Podman {
  readonly dir = mkdtempSync(join(tmpdir(), "baton-e2e-"));
  private readonly env: NodeJS.ProcessEnv;

  constructor() {
    const conf = join(this.dir, "containers.conf");
    writeFileSync(
      conf,
      `[containers]\ndefault_ulimits = []\n[engine]\nevents_logger = "file"\nevents_logfile_path = "${join(this.dir, "events.log")}"\n`,
    );
    this.env = { ...process.env, CONTAINERS_CONF: conf };
  }

  /** podman ARGS against this storage; throws with podman's stderr unless `allowFailure`. */
  async podman(args: readonly string[], allowFailure = false): Promise<Run> {
    const global = ["--root", join(this.dir, "storage"), "--runroot", join(this.dir, "run"), "--runtime", "runc"];
    const result = await run("podman", [...global, ...args], this.env);
    if (result.code !== 0 && !allowFailure) throw new Error(`podman ${args.join(" ")}: exit ${result.code}: ${result.stderr}`);
    return result;
  }

  /** Exit codes of the containers that died since `since` (a podman time), by container name. */
  async exitCodes(since: string): Promise<Map<string, number>> {
    const { stdout } = await this.podman([
      "events", "--since", since, "--stream=false", "--filter", "event=died", "--format", "{{.Name}} {{.ContainerExitCode}}",
    ]);
    const codes = new Map<string, number>();
    for (const line of stdout.split("\n").filter(Boolean)) {
      const [name, code] = line.split(" ");
      codes.set(name!, Number(code));
    }
    return codes;
  }

  /** Removes every pod, container, volume and image of this storage, then the storage itself. */
  async remove(): Promise<void> {
    await this.podman(["pod", "rm", "--all", "--force"], true);
    await this.podman(["rm", "--all", "--force"], true);
    await this.podman(["volume", "rm", "--all", "--force"], true);
    await this.podman(["rmi", "--all", "--force"], true);
    // Not `podman system reset`: it also deletes the machine's network definitions, which other users of podman share.
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** A folder of this run, for files a pod mounts from the host. */
  folder(name: string): string {
    const path = join(this.dir, "host", name);
    mkdirSync(path, { recursive: true });
    return path;
  }
}
