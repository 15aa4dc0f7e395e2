// The pod sandbox, as the "pause" container is on a node: one process that holds the namespaces every container of the
// pod shares (network with its own loopback, so ports never clash with the host or another pod; hostname; IPC).
// Containers join it with nsenter.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";

export class PodSandbox {
  private constructor(private readonly holder: ChildProcess) {}

  static async start(hostname: string): Promise<PodSandbox> {
    const script = 'ip link set lo up && hostname "$1" && echo ready && exec sleep infinity';
    // --pdeathsig: if the runner dies, so does the holder (and with it nothing of the pod is left behind).
    const holder = spawn("setpriv", ["--pdeathsig", "KILL", "--", "unshare", "--net", "--uts", "--ipc", "--", "sh", "-c", script, "sh", hostname], {
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
    return new PodSandbox(holder);
  }

  /** The command prefix that puts a process into this pod's namespaces. */
  enter(): string[] {
    const ns = `/proc/${this.holder.pid}/ns`;
    return ["nsenter", `--net=${ns}/net`, `--uts=${ns}/uts`, `--ipc=${ns}/ipc`, "--"];
  }

  async stop(): Promise<void> {
    if (this.holder.exitCode !== null || this.holder.signalCode !== null) return;
    const exited = once(this.holder, "exit");
    this.holder.kill("SIGKILL");
    await exited;
  }
}
