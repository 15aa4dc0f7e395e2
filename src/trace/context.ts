import { readFileSync, readlinkSync } from "node:fs";

// Which trace a baton's spans belong to, and under which parent (docs/tracing.md "One trace per pod"): a valid W3C
// TRACEPARENT wins; without one, the trace id is derived from what every container of one pod shares and no other pod
// has, so that every step and sidecar of the pod lands in one trace with no file written and nothing to race for.

export interface TraceContext {
  traceId: string;
  /** The given TRACEPARENT's parent id: the parent of baton's root span. */
  parentSpanId?: string;
  /** The given TRACESTATE, passed on (only with a valid TRACEPARENT). */
  traceState?: string;
  /** The sampled flag: false records and sends nothing (a parent that said "not sampled"). */
  sampled: boolean;
  /** The flags byte of the given TRACEPARENT (hex), kept in the command's. */
  flags: string;
}

const HEX = /^[0-9a-f]+$/;

/**
 * A TRACEPARENT as W3C Trace Context reads it: version 00 is exactly `00-TRACEID-PARENTID-FLAGS` (55 characters), a
 * later version may go on after a `-`, version ff is invalid, every field lowercase hexadecimal, neither id all zeros.
 * undefined when invalid.
 */
export function parseTraceparent(value: string | undefined): { traceId: string; parentId: string; flags: string } | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (text.length < 55) return undefined;
  const version = text.slice(0, 2);
  if (!HEX.test(version) || version === "ff") return undefined;
  if (version === "00" ? text.length !== 55 : text.length > 55 && text[55] !== "-") return undefined;
  if (text[2] !== "-" || text[35] !== "-" || text[52] !== "-") return undefined;
  const traceId = text.slice(3, 35);
  const parentId = text.slice(36, 52);
  const flags = text.slice(53, 55);
  if (!HEX.test(traceId) || !HEX.test(parentId) || !HEX.test(flags)) return undefined;
  if (/^0+$/.test(traceId) || /^0+$/.test(parentId)) return undefined;
  return { traceId, parentId, flags };
}

/** The context of this baton's spans, from its environment, or else from its pod. */
export function traceContext(env: NodeJS.ProcessEnv): TraceContext {
  const given = parseTraceparent(env.TRACEPARENT);
  if (given !== undefined) {
    const sampled = (Number.parseInt(given.flags, 16) & 1) === 1;
    return { traceId: given.traceId, parentSpanId: given.parentId, sampled, flags: given.flags, ...(env.TRACESTATE ? { traceState: env.TRACESTATE } : {}) };
  }
  return { traceId: podTraceId(env), sampled: true, flags: "01" };
}

/**
 * The trace id of this pod: a 128-bit hash (hash128) of the node's boot id, the pod's network, IPC and UTS namespaces
 * and the pod's name (HOSTNAME). What cannot be read counts as empty; when none of it can, a random id (this baton's
 * spans then are a trace of their own).
 */
export function podTraceId(env: NodeJS.ProcessEnv): string {
  const parts = [readOr("/proc/sys/kernel/random/boot_id"), linkOr("/proc/self/ns/net"), linkOr("/proc/self/ns/ipc"), linkOr("/proc/self/ns/uts")];
  if (parts.every((part) => part === "")) return randomId(16);
  parts.push(env.HOSTNAME ?? "");
  return hash128(parts.join("\n"));
}

const FNV_PRIME = 0x100000001b3n;
const MASK64 = 0xffffffffffffffffn;

/**
 * 32 hex digits from `text`: FNV-1a 64 twice, from two offset bases, each finished by a 64-bit mixer (SplitMix64's) so
 * that close inputs give unrelated ids. Not a cryptographic hash, and none is needed: the inputs are no secret and no
 * one chooses them against it; the id only has to be the same in every container of a pod and differ between pods.
 * node:crypto's SHA-256 would cost every traced step its load (~8 M instructions: docs/performance.md).
 */
export function hash128(text: string): string {
  const bytes = Buffer.from(text, "utf8");
  const half = (basis: bigint): string => {
    let h = basis;
    for (const byte of bytes) h = ((h ^ BigInt(byte)) * FNV_PRIME) & MASK64;
    h = ((h ^ (h >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
    h = ((h ^ (h >> 27n)) * 0x94d049bb133111ebn) & MASK64;
    h ^= h >> 31n;
    return h.toString(16).padStart(16, "0");
  };
  const id = half(0xcbf29ce484222325n) + half(0x84222325cbf29ce4n);
  return /^0+$/.test(id) ? "1".padStart(32, "0") : id;
}

function readOr(file: string): string {
  try {
    return readFileSync(file, "latin1").slice(0, 64).trim();
  } catch {
    return "";
  }
}

function linkOr(file: string): string {
  try {
    return readlinkSync(file);
  } catch {
    return "";
  }
}

/**
 * `bytes` random bytes in hexadecimal, never all zeros. Math.random, as OpenTelemetry's own JavaScript SDK makes its
 * ids: an id must be unique, not secret, and node:crypto's generator would cost every traced step its load.
 */
export function randomId(bytes: number): string {
  for (;;) {
    let hex = "";
    for (let i = 0; i < bytes; i++) hex += Math.floor(Math.random() * 256).toString(16).padStart(2, "0");
    if (!/^0+$/.test(hex)) return hex;
  }
}
