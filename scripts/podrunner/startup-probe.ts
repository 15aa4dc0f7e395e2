// The startupProbe of a native sidecar (an init container with restartPolicy: Always), run as the kubelet runs it:
// the next init container, and the pod's containers, start only once it has succeeded. tcpSocket and httpGet are
// tried from inside the pod's network namespace (the sandbox), as the kubelet reaches the pod's IP; exec probes are
// not run by the local runner (checkStartupProbe refuses them before the pod starts).
import { spawn } from "node:child_process";
import { once } from "node:events";
import type { IContainer, IProbe } from "kubernetes-models/v1";

/** Refuses, before anything starts, a startup probe the runner cannot run. */
export function checkStartupProbe(container: IContainer): void {
  const probe = container.startupProbe;
  if (!probe) return;
  if (!probe.tcpSocket && !probe.httpGet) {
    throw new Error(`container ${container.name}: only tcpSocket and httpGet startup probes are run by the local runner`);
  }
  if (probe.httpGet?.scheme === "HTTPS") throw new Error(`container ${container.name}: HTTPS startup probes are not run by the local runner`);
  portOf(container, probe);
}

function portOf(container: IContainer, probe: IProbe): number {
  const port = probe.tcpSocket?.port ?? probe.httpGet?.port;
  if (typeof port === "number") return port;
  const named = container.ports?.find((p) => p.name === port);
  if (!named) throw new Error(`container ${container.name}: startup probe port ${String(port)} names no port of the container`);
  return named.containerPort;
}

/** One attempt, from a Node started inside the pod's namespaces: exit 0 when the probe succeeds. */
const ATTEMPT = `
const [kind, host, port, path, timeout] = process.argv.slice(1);
const fail = () => process.exit(1);
setTimeout(fail, Number(timeout)).unref();
if (kind === "tcp") {
  require("node:net").connect(Number(port), host, () => process.exit(0)).on("error", fail);
} else {
  require("node:http").get({ host, port: Number(port), path }, (res) => process.exit(res.statusCode >= 200 && res.statusCode < 400 ? 0 : 1)).on("error", fail);
}`;

async function attempt(enter: string[], container: IContainer, probe: IProbe): Promise<boolean> {
  const kind = probe.tcpSocket ? "tcp" : "http";
  const host = probe.tcpSocket?.host ?? probe.httpGet?.host ?? "127.0.0.1";
  const timeoutMs = (probe.timeoutSeconds ?? 1) * 1000;
  const child = spawn(enter[0]!, [...enter.slice(1), process.execPath, "-e", ATTEMPT, kind, host, String(portOf(container, probe)), probe.httpGet?.path ?? "/", String(timeoutMs)], {
    stdio: "ignore",
  });
  const [code] = (await once(child, "close")) as [number | null];
  return code === 0;
}

/**
 * Resolves true once the container counts as started: at once without a startup probe, else when the probe has
 * succeeded; false when it failed failureThreshold times in a row or the container ended first.
 */
export async function startedBy(container: IContainer, enter: string[], ended: Promise<unknown>): Promise<boolean> {
  const probe = container.startupProbe;
  if (!probe) return true;
  let over = false;
  void ended.then(() => (over = true));
  const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
  await sleep((probe.initialDelaySeconds ?? 0) * 1000);
  let failures = 0;
  while (!over) {
    if (await attempt(enter, container, probe)) return !over;
    if (++failures >= (probe.failureThreshold ?? 3)) return false;
    await Promise.race([sleep((probe.periodSeconds ?? 10) * 1000), ended]);
  }
  return false;
}
