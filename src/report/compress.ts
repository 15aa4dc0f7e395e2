import { lazyBuiltin } from "../base/builtin.js";

// Tekton's compressed termination message (-compress_termination_message, pkg/termination/write.go and parse.go):
// "tknz:" + base64 without padding of raw DEFLATE (no zlib header) at the best level, used only when shorter than the
// JSON. zlib is loaded only when a step asks for compression or finds a compressed message to merge into.

export const COMPRESSED_PREFIX = "tknz:";
/** The controller inflates at most this much (parse.go); a message that would inflate to more is not one of ours. */
const MAX_INFLATED = 128 * 1024;

type Zlib = typeof import("node:zlib");
let zlib: Zlib | undefined;
function loadZlib(): Zlib {
  zlib ??= lazyBuiltin<Zlib>("node:zlib");
  return zlib;
}

/** The compressed form of `json`; the caller keeps it only when it is shorter. */
export function compress(json: string): string {
  const deflated = loadZlib().deflateRawSync(Buffer.from(json), { level: 9 });
  return COMPRESSED_PREFIX + deflated.toString("base64").replace(/=+$/, "");
}

/** The JSON inside a compressed message, as the controller reads it; throws when it is not valid. */
export function decompress(text: string): string {
  const encoded = text.slice(COMPRESSED_PREFIX.length).trim();
  if (!/^[A-Za-z0-9+/]*$/.test(encoded) || encoded.length % 4 === 1) throw new Error("not unpadded base64");
  const inflated = loadZlib().inflateRawSync(Buffer.from(encoded, "base64"), { maxOutputLength: MAX_INFLATED });
  return inflated.toString("utf8");
}
