import { promises as dns, Resolver } from "node:dns";
import { readFileSync } from "node:fs";
import { isIP } from "node:net";

// The address of a ready probe's host, found without ever queueing. The system resolver (dns.lookup: getaddrinfo, so
// /etc/hosts, nsswitch and the search list) runs in libuv's pool of 4 threads and cannot be cancelled: while a DNS
// server does not answer yet (a pod's DNS not ready), each lookup holds a thread for its full timeout (5 s per name
// and per search domain by default, two tries), a probe every 100 ms queues lookup after lookup behind them, and once
// the name resolves the probe still waits for the queue: readiness came seconds late. So:
// - at most one getaddrinfo per host runs at a time: an attempt joins it instead of starting another, and its answer,
//   however late, serves the next attempt;
// - beside it, when that has not answered within 100 ms, each attempt asks the DNS servers itself with c-ares
//   (dns.Resolver: no thread pool, its own timeout, cancelled when the attempt ends), the search list applied as glibc
//   applies it, so a name is found within one attempt of the DNS answering.

/** One getaddrinfo per host at most; the last answer one gave, kept for the next attempt. */
const running = new Map<string, Promise<void>>();
const lastAnswer = new Map<string, string>();

/** An address for `host` (any family), or undefined when none was found before `signal` aborted. */
export async function findAddress(host: string, timeoutMs: number, signal: AbortSignal): Promise<string | undefined> {
  if (isIP(host) !== 0) return host;
  const kept = lastAnswer.get(host);
  if (kept !== undefined) {
    lastAnswer.delete(host); // used once: a later attempt asks again, in case the address changed
    return kept;
  }
  if (!running.has(host)) {
    const lookup = dns.lookup(host).then(
      (answer) => void lastAnswer.set(host, answer.address),
      () => undefined,
    );
    running.set(host, lookup.finally(() => running.delete(host)));
  }
  const fromSystem = running.get(host)!.then(() => {
    if (signal.aborted) return undefined; // a late answer is kept for the next attempt
    const address = lastAnswer.get(host);
    if (address !== undefined) lastAnswer.delete(host);
    return address;
  });
  // The DNS servers are asked only when the system resolver has not answered at once: a name in /etc/hosts
  // (localhost, the common probe) costs no query, and a pod's DNS sees none for it.
  const fromDns = new Promise<string | undefined>((resolve) => {
    const stop = () => {
      clearTimeout(timer);
      resolve(undefined);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", stop);
      resolve(askDns(host, timeoutMs, signal));
    }, ASK_DNS_AFTER_MS);
    signal.addEventListener("abort", stop, { once: true });
    void fromSystem.then((address) => address !== undefined && stop());
  });
  return firstAddress([fromSystem, fromDns], signal);
}

/** How long the system resolver has to answer before baton asks the DNS servers itself. */
const ASK_DNS_AFTER_MS = 100;

/** The first of `answers` that gives an address; undefined once all gave none, or when `signal` aborts. */
function firstAddress(answers: Promise<string | undefined>[], signal: AbortSignal): Promise<string | undefined> {
  return new Promise((resolve) => {
    let left = answers.length;
    const done = (address: string | undefined) => {
      signal.removeEventListener("abort", aborted);
      resolve(address);
    };
    const aborted = () => done(undefined);
    signal.addEventListener("abort", aborted, { once: true });
    for (const answer of answers) {
      answer.then(
        (address) => (address !== undefined ? done(address) : --left === 0 && done(undefined)),
        () => --left === 0 && done(undefined),
      );
    }
  });
}

/** c-ares, tried name by name in glibc's order: an A or AAAA record, or undefined. Cancelled when `signal` aborts. */
async function askDns(host: string, timeoutMs: number, signal: AbortSignal): Promise<string | undefined> {
  const resolver = new Resolver({ timeout: Math.max(1, timeoutMs), tries: 1 });
  const cancel = () => resolver.cancel();
  signal.addEventListener("abort", cancel, { once: true });
  try {
    for (const name of searchNames(host, readResolvConf())) {
      if (signal.aborted) return undefined;
      const [v4, v6] = await Promise.all([records(resolver, "resolve4", name), records(resolver, "resolve6", name)]);
      const address = v4[0] ?? v6[0];
      if (address !== undefined) return address;
    }
    return undefined;
  } finally {
    signal.removeEventListener("abort", cancel);
  }
}

function records(resolver: Resolver, kind: "resolve4" | "resolve6", name: string): Promise<string[]> {
  return new Promise((resolve) => resolver[kind](name, (error, addresses) => resolve(error ? [] : addresses)));
}

interface ResolvConf {
  search: string[];
  ndots: number;
}

/** The search list and ndots of /etc/resolv.conf (glibc's defaults: no search list, ndots 1). */
export function readResolvConf(text?: string): ResolvConf {
  let content = text;
  if (content === undefined) {
    try {
      content = readFileSync("/etc/resolv.conf", "utf8").slice(0, 64 * 1024);
    } catch {
      content = "";
    }
  }
  const conf: ResolvConf = { search: [], ndots: 1 };
  for (const line of content.split("\n")) {
    const [keyword, ...words] = line.trim().split(/\s+/);
    if (keyword === "search" || keyword === "domain") conf.search = words.filter((w) => w !== "" && !w.startsWith("#"));
    if (keyword === "options") {
      for (const word of words) {
        const ndots = /^ndots:(\d+)$/.exec(word);
        if (ndots) conf.ndots = Math.min(15, Number(ndots[1]));
      }
    }
  }
  return conf;
}

/** The names glibc's res_search tries for `host`: as it is first when it has ndots dots or more, else last. */
export function searchNames(host: string, conf: ResolvConf): string[] {
  if (host.endsWith(".")) return [host];
  const searched = conf.search.map((domain) => `${host}.${domain.replace(/\.$/, "")}`);
  const dots = host.split(".").length - 1;
  return dots >= conf.ndots ? [host, ...searched] : [...searched, host];
}
