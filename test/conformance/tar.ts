// Reads a .tgz as what it holds, so that two archives are compared on their entries (names, types, modes, owners,
// times, bytes) and never on their compressed streams, which differ between two DEFLATE encoders by nature.
import { createHash } from "node:crypto";
import { gunzipSync } from "node:zlib";

export interface TarEntry {
  name: string;
  type: string;
  mode: string;
  uid: number;
  gid: number;
  uname: string;
  gname: string;
  mtime: number;
  linkname: string;
  size: number;
  /** The bytes as text when short and printable, else their SHA-256. */
  content: string;
}

const text = (block: Buffer, start: number, length: number) => {
  const field = block.subarray(start, start + length);
  const end = field.indexOf(0);
  return field.subarray(0, end < 0 ? length : end).toString("utf8");
};
const octal = (block: Buffer, start: number, length: number) => Number.parseInt(text(block, start, length).trim() || "0", 8);

/** The entries of a gzip-compressed tar (ustar, with PAX and GNU long-name records applied), in archive order. */
export function readTgz(bytes: Buffer): TarEntry[] {
  const tar = gunzipSync(bytes);
  const entries: TarEntry[] = [];
  let pax: Record<string, string> = {};
  let longName: string | undefined;
  for (let at = 0; at + 512 <= tar.length; ) {
    const header = tar.subarray(at, at + 512);
    if (header.every((b) => b === 0)) break;
    const size = octal(header, 124, 12);
    const type = String.fromCharCode(header[156] || 0x30);
    const body = tar.subarray(at + 512, at + 512 + size);
    at += 512 + Math.ceil(size / 512) * 512;
    if (type === "x") {
      pax = parsePax(body);
      continue;
    }
    if (type === "L") {
      longName = body.toString("utf8").replace(/\0+$/, "");
      continue;
    }
    const prefix = text(header, 345, 155);
    const name = pax.path ?? longName ?? (prefix ? `${prefix}/${text(header, 0, 100)}` : text(header, 0, 100));
    const printable = body.length <= 200 && /^[\x20-\x7e\n\t]*$/.test(body.toString("latin1"));
    entries.push({
      name,
      type,
      mode: octal(header, 100, 8).toString(8).padStart(4, "0"),
      uid: octal(header, 108, 8),
      gid: octal(header, 116, 8),
      uname: text(header, 265, 32),
      gname: text(header, 297, 32),
      mtime: pax.mtime ? Math.floor(Number(pax.mtime)) : octal(header, 136, 12),
      linkname: pax.linkpath ?? text(header, 157, 100),
      size: pax.size ? Number(pax.size) : size,
      content: printable ? body.toString("utf8") : `sha256:${createHash("sha256").update(body).digest("hex")}`,
    });
    pax = {};
    longName = undefined;
  }
  return entries;
}

function parsePax(body: Buffer): Record<string, string> {
  const records: Record<string, string> = {};
  let rest = body.toString("utf8");
  while (rest.length > 0) {
    const space = rest.indexOf(" ");
    const length = Number(rest.slice(0, space));
    if (!(length > 0)) break;
    const record = rest.slice(space + 1, length - 1);
    const equals = record.indexOf("=");
    records[record.slice(0, equals)] = record.slice(equals + 1);
    rest = rest.slice(length);
  }
  return records;
}
