// The pod sandbox, as the "pause" container is on a node: one process that holds the namespaces every container of the
// pod shares (network with its own loopback, so ports never clash with the host or another pod; hostname; IPC).
// Containers join it with nsenter.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { join } from "node:path";

export class PodSandbox {
  private constructor(
    private readonly holder: ChildProcess,
    private readonly ownNetwork: boolean,
  ) {}

  static async start(hostname: string, warn: (message: string) => void): Promise<PodSandbox> {
    // A network namespace is useless without its loopback up, which takes `ip` (iproute2); without it, share the host's.
    const ownNetwork = hasCommand("ip");
    if (!ownNetwork) warn("no `ip` command (iproute2): the pod shares the host's network");
    const script = `${ownNetwork ? "ip link set lo up && " : ""}{ hostname "$1" 2>/dev/null || echo "$1" > /proc/sys/kernel/hostname; } && echo ready && exec sleep infinity`;
    const namespaces = ownNetwork ? ["--net", "--uts", "--ipc"] : ["--uts", "--ipc"];
    // --pdeathsig: if the runner dies, so does the holder (and with it nothing of the pod is left behind).
    const holder = spawn("setpriv", ["--pdeathsig", "KILL", "--", "unshare", ...namespaces, "--", "sh", "-c", script, "sh", hostname], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    holder.stderr!.on("data", (chunk) => (stderr += chunk));
    const ready = new Promise<void>((resolve, reject) => {
      holder.stdout!.on("data", (chunk: Buffer) => {
        if (chunk.toString().includes("ready")) resolve();
      });
      holder.on("error", reject);
      holder.on("exit", (code) => reject(new Error(`pod sandbox did not start (exit ${code}): ${stderr.trim()}`)));
    });
    await ready;
    return new PodSandbox(holder, ownNetwork);
  }

  /** The command prefix that puts a process into this pod's namespaces. */
  enter(): string[] {
    const ns = `/proc/${this.holder.pid}/ns`;
    return ["nsenter", ...(this.ownNetwork ? [`--net=${ns}/net`] : []), `--uts=${ns}/uts`, `--ipc=${ns}/ipc`, "--"];
  }

  async stop(): Promise<void> {
    if (this.holder.exitCode !== null || this.holder.signalCode !== null) return;
    const exited = once(this.holder, "exit");
    this.holder.kill("SIGKILL");
    await exited;
  }
}

function hasCommand(name: string): boolean {
  const dirs = [...(process.env.PATH ?? "").split(":"), "/usr/sbin", "/sbin"];
  return dirs.some((dir) => dir !== "" && existsSync(join(dir, name)));
}
