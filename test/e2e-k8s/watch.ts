// Timings finer than the API's whole seconds: the API server's own watch stream, read by this process, each event
// stamped with performance.now() as it arrives (a few ms after the change, the same lag on both sides of a
// comparison). An object is created through the same connection's credentials (admin's), its creation stamped as
// the request is sent.
import { request, type RequestOptions } from "node:https";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { execFileSync } from "node:child_process";
import { REPO, type Json } from "./kube.js";

const K8S = join(REPO, "scripts/k8s");
const envOf = (name: string) => execFileSync("sh", ["-c", `. ./env.sh && printf %s "$${name}"`], { cwd: K8S, encoding: "utf8" });
const STATE = envOf("K8S_STATE");
const API = new URL(envOf("K8S_API"));
let tls: Pick<RequestOptions, "ca" | "cert" | "key"> | undefined;
const credentials = () =>
  (tls ??= {
    ca: readFileSync(join(STATE, "pki/ca.crt")),
    cert: readFileSync(join(STATE, "pki/admin.crt")),
    key: readFileSync(join(STATE, "pki/admin.key")),
  });

function call(method: string, path: string, body?: unknown): Promise<Json> {
  return new Promise((resolve, reject) => {
    const req = request({ host: API.hostname, port: API.port, path, method, ...credentials(), headers: { "content-type": "application/json" } }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (d) => (text += d)).on("end", () => {
        if ((res.statusCode ?? 500) >= 300) reject(new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 300)}`));
        else resolve(JSON.parse(text));
      });
    });
    req.on("error", reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** POSTs an object to a collection (e.g. /api/v1/namespaces/NS/pods); performance.now() just before it is sent. */
export async function create(collection: string, object: unknown): Promise<number> {
  const at = performance.now();
  await call("POST", collection, object);
  return at;
}

export interface WatchEvent {
  at: number;
  type: string;
  object: Json;
}

/**
 * A watch of a collection from its current resourceVersion (listed first, so that no event after `open` resolves is
 * missed), every event kept with its arrival time.
 */
export class Watch {
  readonly events: WatchEvent[] = [];
  private waiters: Array<() => void> = [];
  private close_: () => void = () => {};

  static async open(collection: string): Promise<Watch> {
    const w = new Watch();
    const rv = (await call("GET", collection)).metadata.resourceVersion;
    await new Promise<void>((resolve, reject) => {
      const req = request({ host: API.hostname, port: API.port, path: `${collection}?watch=true&resourceVersion=${rv}`, ...credentials() }, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`watch ${collection}: ${res.statusCode}`));
        let buffer = "";
        res.setEncoding("utf8").on("data", (d: string) => {
          const at = performance.now();
          buffer += d;
          let nl;
          while ((nl = buffer.indexOf("\n")) >= 0) {
            const line = buffer.slice(0, nl);
            buffer = buffer.slice(nl + 1);
            if (line.trim()) w.events.push({ at, ...(JSON.parse(line) as { type: string; object: Json }) });
          }
          for (const wake of w.waiters.splice(0)) wake();
        });
        resolve();
      });
      req.on("error", reject);
      req.end();
      w.close_ = () => req.destroy();
    });
    return w;
  }

  /** The first event (kept or to come) that `done` accepts; an error after `seconds`. */
  async until(done: (e: WatchEvent) => boolean, seconds: number, what: string): Promise<WatchEvent> {
    const deadline = performance.now() + seconds * 1000;
    for (;;) {
      const found = this.events.find(done);
      if (found) return found;
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`${what}: not seen after ${seconds} s`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.close_();
  }
}

/** Median, least and most of some figures. */
export function spread(xs: number[]): { median: number; min: number; max: number } {
  const s = [...xs].sort((a, b) => a - b);
  const median = s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  return { median, min: s[0], max: s[s.length - 1] };
}
