import { isUtf8 } from "node:buffer";
import { readFileSync } from "node:fs";
import { keptEntryBytes, launcherKept } from "../process/kept-env.js";

// The command gets baton's argv and environment byte for byte. Node decodes both as UTF-8 at start-up: bytes that
// are not UTF-8 become U+FFFD, and a variable whose name is not UTF-8 is dropped from process.env; and its spawn takes
// strings only. So baton reads what the kernel gave it (/proc/self/cmdline and environ, two small reads), once: a
// waiting step while it waits (readGivenBytes), any other just before the spawn. When both are UTF-8, as nearly always,
// nothing else happens. Otherwise the command's words and environment are rebuilt as bytes and started by the addon's
// spawnBytes (start-process.ts). Both files show what the process was started with, whatever baton does to
// process.env since, so reading them early changes nothing.

export interface ExactLaunch {
  argv: Buffer[];
  env: Buffer[];
}

/**
 * The command `words` and baton's current environment as the bytes they came from, or undefined when baton's argv and
 * environment are UTF-8 (the strings are then exact) or /proc cannot be read.
 */
export function exactBytes(words: readonly string[], env: NodeJS.ProcessEnv = process.env): ExactLaunch | undefined {
  readGivenBytes();
  if (kernelBytes === null) return undefined;
  const { cmdline, environ } = kernelBytes!;
  // baton's own arguments are the cmdline's last ones, whatever started Node before them (the standalone launcher
  // puts its loader's words first).
  const given = process.argv.slice(2);
  const raw = split(cmdline).slice(-given.length || Infinity);
  // Variables the standalone launcher renamed (kept-env.ts) are matched under their own names.
  const entries = launcherKept(process.env) ? split(environ).map(keptEntryBytes) : split(environ);
  return { argv: wordBytes(words, given, raw), env: environBytes(entries, env) };
}

/** What the kernel gave baton when they are not both UTF-8; null when they are, or /proc cannot be read. */
let kernelBytes: { cmdline: Buffer; environ: Buffer } | null | undefined;

/**
 * Reads /proc/self/cmdline and environ if not done yet. A waiting step calls this while it waits: the reads and
 * this code's first run would otherwise sit between the previous step's post file and the command's start.
 */
export function readGivenBytes(): void {
  if (kernelBytes !== undefined) return;
  try {
    const cmdline = readFileSync("/proc/self/cmdline");
    const environ = readFileSync("/proc/self/environ");
    kernelBytes = isUtf8(cmdline) && isUtf8(environ) ? null : { cmdline, environ };
  } catch {
    kernelBytes = null; // no /proc: the decoded strings are all there is
  }
}

function split(buffer: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  let start = 0;
  for (let end = buffer.indexOf(0); end !== -1; end = buffer.indexOf(0, start)) {
    parts.push(buffer.subarray(start, end));
    start = end + 1;
  }
  if (start < buffer.length) parts.push(buffer.subarray(start));
  return parts;
}

/**
 * Each command word as the bytes of the argument it came from. The command is the end of baton's argv (after `--`),
 * matched from the last word back; a word from elsewhere (Tekton's -entrypoint) is matched by its text. A word baton
 * made itself (a substitution) is its UTF-8.
 */
function wordBytes(words: readonly string[], given: readonly string[], raw: readonly Buffer[]): Buffer[] {
  const out: Buffer[] = [];
  let j = Math.min(given.length, raw.length) - 1;
  for (let k = words.length - 1; k >= 0; k--) {
    const word = words[k]!;
    if (j >= 0 && given[j] === word) out.unshift(raw[j--]!);
    else {
      const at = given.indexOf(word);
      out.unshift(at !== -1 && at < raw.length ? raw[at]! : Buffer.from(word));
    }
  }
  return out;
}

/**
 * The environment the command gets: each variable as the bytes baton was given, unless baton changed it since (a
 * substitution: its new value in UTF-8); a variable Node dropped (its name is not UTF-8) as it was; those baton added.
 */
function environBytes(entries: readonly Buffer[], env: NodeJS.ProcessEnv): Buffer[] {
  const out: Buffer[] = [];
  const seen = new Set<string>();
  for (const entry of entries) {
    const eq = entry.indexOf(0x3d);
    const name = eq === -1 ? undefined : entry.subarray(0, eq);
    if (name === undefined || !isUtf8(name)) {
      out.push(entry); // not in process.env at all: baton cannot have changed it
      continue;
    }
    const key = name.toString();
    if (seen.has(key)) continue;
    seen.add(key);
    const value = env[key];
    if (value === undefined) continue; // removed by baton
    out.push(value === entry.subarray(eq + 1).toString() ? entry : Buffer.from(`${key}=${value}`));
  }
  for (const [key, value] of Object.entries(env)) if (value !== undefined && !seen.has(key)) out.push(Buffer.from(`${key}=${value}`));
  return out;
}
