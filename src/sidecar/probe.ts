import { request } from "node:http";
import type { LookupAddress } from "node:dns";
import { connect, isIP, type LookupFunction, type Socket } from "node:net";
import { BatonError, usageError } from "../base/errors.js";
import { startCommand } from "../run/run-command.js";
import { findAddress } from "./find-address.js";
import { statOrUndefined } from "../base/files.js";
import { redactPassword } from "../base/redact.js";

// Ready probes: is the sidecar serving yet? Polled until the first success, each attempt bounded by its own timeout,
// so a probe that hangs (a SYN into the void, a server that accepts and never answers) cannot stall the next one.

export type Probe =
  | { kind: "tcp"; text: string; host: string; port: number }
  | { kind: "http"; text: string; url: URL }
  | { kind: "file"; text: string; path: string }
  | { kind: "exec"; text: string; command: string };

/** Time between the end of one failed attempt and the start of the next. */
export const PROBE_INTERVAL_MS = 100;
/** Longest time one attempt may take before it counts as a failure. */
export const PROBE_ATTEMPT_TIMEOUT_MS = 1000;

/** ASCII control characters, which no host name or URL holds. */
export const CONTROL = /[\x00-\x1f\x7f]/;

export function parseProbe(text: string): Probe {
  const bad = (why: string) =>
    usageError(`invalid --ready-probe "${redactPassword(text)}": ${why} (use tcp:HOST:PORT, http://HOST:PORT/PATH, file:PATH or exec:COMMAND)`);
  // A host or URL never holds a control character; Go's url.Parse refuses one, while WHATWG's URL drops a newline or a
  // tab silently and would probe another path than the one given.
  if ((text.startsWith("tcp:") || text.startsWith("http://")) && CONTROL.test(text)) throw bad("a control character in a host or URL");
  if (text.startsWith("tcp:")) {
    const address = text.slice("tcp:".length);
    const colon = address.lastIndexOf(":");
    const host = address.slice(0, colon).replace(/^\[(.*)\]$/, "$1");
    const port = Number(address.slice(colon + 1));
    if (colon <= 0 || host === "") throw bad("no host");
    if (!/^\d+$/.test(address.slice(colon + 1)) || port < 1 || port > 65535) throw bad("the port must be 1-65535");
    return { kind: "tcp", text, host, port };
  }
  if (text.startsWith("http://")) {
    try {
      // text is what the ready file and the events show: without the URL's password.
      return { kind: "http", text: redactPassword(text), url: new URL(text) };
    } catch {
      throw bad("not a URL");
    }
  }
  if (text.startsWith("file:")) {
    const path = text.slice("file:".length);
    if (path === "") throw bad("no path");
    return { kind: "file", text, path };
  }
  if (text.startsWith("exec:")) {
    const command = text.slice("exec:".length);
    if (command.trim() === "") throw bad("no command");
    return { kind: "exec", text, command };
  }
  if (text.startsWith("https://")) throw bad("https is not supported: probe the sidecar's plain-HTTP health port");
  throw bad("unknown kind");
}

/**
 * Probes until the first success. Rejects with `signal.reason` when aborted (the sidecar died, or a stop file
 * appeared first).
 */
export async function pollUntilReady(probe: Probe, signal: AbortSignal): Promise<void> {
  for (;;) {
    signal.throwIfAborted();
    if (await probeOnce(probe, PROBE_ATTEMPT_TIMEOUT_MS, signal)) return;
    signal.throwIfAborted();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, PROBE_INTERVAL_MS);
      signal.addEventListener("abort", done, { once: true });
      function done() {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      }
    });
  }
}

/** One attempt: true on success, false on any failure (refused, timed out, non-2xx, non-zero exit). */
export function probeOnce(probe: Probe, timeoutMs: number, signal: AbortSignal): Promise<boolean> {
  switch (probe.kind) {
    case "tcp":
      return attempt(timeoutMs, signal, (succeed, fail, ended) => {
        let socket: Socket | undefined;
        // The host's address first, found without queueing behind lookups that get no answer (find-address.ts).
        void findAddress(probe.host, timeoutMs, ended).then((address) => {
          if (ended.aborted) return;
          if (address === undefined) return fail();
          socket = connect({ host: address, port: probe.port });
          socket.once("connect", () => succeed());
          socket.once("error", () => fail());
        });
        return () => socket?.destroy();
      });
    case "http":
      return attempt(timeoutMs, signal, (succeed, fail, ended) => {
        // agent: false: no keep-alive socket is left behind to hold baton's event loop open.
        const req = request(probe.url, { method: "GET", agent: false, lookup: lookupWithin(timeoutMs, ended) }, (res) => {
          res.resume();
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) succeed();
          else fail();
        });
        req.once("error", () => fail());
        req.end();
        return () => req.destroy();
      });
    case "file":
      return Promise.resolve(statOrUndefined(probe.path) !== undefined);
    case "exec": {
      let cannotStart: string | undefined;
      return attempt(timeoutMs, signal, (succeed, fail) => {
        // The probe is a command like the sidecar itself: same spawn path, its own process group, killed whole.
        const command = startCommand(["sh", "-c", probe.command], { stdio: "ignore" });
        let over = false;
        void command.done.then((result) => {
          over = true;
          if (result.spawnError) cannotStart = result.spawnError;
          if (result.exitCode === 0) succeed();
          else fail();
        });
        return () => {
          if (!over) command.stop("SIGKILL", 0);
        };
      }).then((ok) => {
        // No sh in the image (or none executable): no later attempt can do better. Say so, and never be ready,
        // instead of failing ten times a second, silently, forever.
        if (cannotStart) throw new BatonError(`--ready-probe ${probe.text}: ${cannotStart}; the sidecar will never be ready`);
        return ok;
      });
    }
  }
}

/** http.request's `lookup`: find-address.ts, as net.connect calls it. */
function lookupWithin(timeoutMs: number, ended: AbortSignal): LookupFunction {
  return (host, options, callback) => {
    void findAddress(host, timeoutMs, ended).then((address) => {
      if (address === undefined) return callback(Object.assign(new Error(`no address for ${host}`), { code: "ENOTFOUND" }), "", 0);
      const family = isIP(address);
      if (options.all) (callback as unknown as (e: null, all: LookupAddress[]) => void)(null, [{ address, family }]);
      else callback(null, address, family);
    });
  };
}

/**
 * Runs one attempt with a timeout; `start` returns how to clean up (called once, whatever the outcome), and gets a
 * signal that aborts when the attempt ends.
 */
function attempt(
  timeoutMs: number,
  signal: AbortSignal,
  start: (succeed: () => void, fail: () => void, ended: AbortSignal) => () => void,
): Promise<boolean> {
  return new Promise((resolve) => {
    let settled = false;
    let cleanUp = () => {};
    const ended = new AbortController();
    const finish = (ok: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      ended.abort();
      cleanUp();
      resolve(ok);
    };
    const onAbort = () => finish(false);
    const timer = setTimeout(() => finish(false), timeoutMs);
    signal.addEventListener("abort", onAbort);
    const stop = start(() => finish(true), () => finish(false), ended.signal);
    if (settled) stop();
    else cleanUp = stop;
  });
}
