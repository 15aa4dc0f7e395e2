import { request } from "node:http";
import { monotonicMs, sleep } from "../base/clock.js";
import { redactPassword } from "../base/redact.js";

// The killer's one job: ask a sidecar baton cannot wrap (an injected Envoy/Istio proxy) to quit, by an HTTP POST such
// as Istio's http://127.0.0.1:15020/quitquitquit. Retried briefly, because the proxy may be busy or restarting its
// admin listener; bounded, because a proxy that is already gone must not keep the pod alive.

/** How long one URL is tried in all, how long one attempt may take, and the pause between attempts. */
export const STOP_URL_DEADLINE_MS = 5000;
export const STOP_URL_ATTEMPT_TIMEOUT_MS = 1000;
export const STOP_URL_RETRY_MS = 250;

export interface StopUrlOutcome {
  url: string;
  /** The last HTTP status it answered with; null if it never answered. */
  status: number | null;
  /** Why the last attempt failed, when it did not answer 2xx. */
  error?: string;
}

export async function postStopUrl(url: URL, deadlineMs = STOP_URL_DEADLINE_MS): Promise<StopUrlOutcome> {
  const deadline = monotonicMs() + deadlineMs;
  let outcome: StopUrlOutcome;
  for (;;) {
    const timeout = Math.max(1, Math.min(STOP_URL_ATTEMPT_TIMEOUT_MS, deadline - monotonicMs()));
    outcome = await postOnce(url, timeout);
    if (outcome.status !== null && outcome.status >= 200 && outcome.status < 300) return outcome;
    if (monotonicMs() + STOP_URL_RETRY_MS >= deadline) return outcome;
    await sleep(STOP_URL_RETRY_MS);
  }
}

function postOnce(url: URL, timeoutMs: number): Promise<StopUrlOutcome> {
  const shown = redactPassword(url.href); // for stderr and the events
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: StopUrlOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve(outcome);
    };
    const req = request(url, { method: "POST", agent: false, headers: { "content-length": "0" } }, (res) => {
      res.resume();
      const status = res.statusCode ?? 0;
      finish(status >= 200 && status < 300 ? { url: shown, status } : { url: shown, status, error: `answered ${status}` });
    });
    req.once("error", (error: NodeJS.ErrnoException) => finish({ url: shown, status: null, error: error.code ?? error.message }));
    const timer = setTimeout(() => finish({ url: shown, status: null, error: `no answer within ${timeoutMs} ms` }), timeoutMs);
    req.end();
  });
}
