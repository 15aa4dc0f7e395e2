import type { ClientRequest } from "node:http";
import { lazyBuiltin } from "../base/builtin.js";

// One POST of the encoded request to the collector, ended by `deadline` whatever the collector does: a refused or
// silent connection, a slow or endless answer (its body is never read), garbage, 5xx, a redirect (never followed).
// Resolves with a line to say when it did not go through; never rejects. The URL is said with its user name and
// password as xxxxx and without its query (either may hold a token); the headers are never said.

const SHOWN_MAX = 200;

export function sendHttp(url: URL, body: Uint8Array, json: boolean, headers: Record<string, string>, deadline: number, ca?: string): Promise<string | undefined> {
  const full = `${url.protocol}//${url.username || url.password ? "xxxxx@" : ""}${url.host}${url.pathname}`;
  // A line, not a page: an endpoint of any length is shown by its first SHOWN_MAX characters.
  const shown = full.length > SHOWN_MAX ? `${full.slice(0, SHOWN_MAX)}...` : full;
  const notSent = (why: string) => `traces not sent to ${shown}: ${why}`;
  return new Promise((resolve) => {
    let request: ClientRequest | undefined;
    let settled = false;
    const settle = (line: string | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request?.destroy();
      resolve(line);
    };
    const timer = setTimeout(() => settle(notSent(`no answer within the export timeout`)), Math.max(0, deadline - performance.now()));
    try {
      const http = lazyBuiltin<typeof import("node:http")>(url.protocol === "https:" ? "node:https" : "node:http");
      request = http.request(url, {
        method: "POST",
        headers: { ...headers, "content-type": json ? "application/json" : "application/x-protobuf", "content-length": String(body.length) },
        // No connection kept for later: baton exits after this one request.
        agent: false,
        ...(ca !== undefined ? { ca } : {}),
      });
      request.on("response", (response) => {
        const status = response.statusCode ?? 0;
        response.destroy();
        if (status >= 200 && status < 300) settle(undefined);
        else if (status >= 300 && status < 400) settle(notSent(`answered ${status} (redirects are not followed)`));
        else settle(notSent(`answered ${status}`));
      });
      request.on("error", (error: NodeJS.ErrnoException) => settle(notSent(error.code ?? error.message)));
      request.end(body);
    } catch (error) {
      // A header Node refuses, a URL it cannot take: the request never left.
      settle(notSent((error as NodeJS.ErrnoException).code ?? "the request could not be made"));
    }
  });
}
