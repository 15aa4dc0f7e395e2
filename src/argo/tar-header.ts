// One tar header as Go's archive/tar Writer writes it for a header made by tar.FileInfoHeader with no format chosen
// (what Argo's util/archive does): ModTime rounded to the second, access and change times dropped, then USTAR when
// every field fits (a long name split into prefix and name), else PAX (a PaxHeaders.0 record file first).

export interface TarEntry {
  name: string;
  typeflag: string; // "0" file, "2" symlink, "3" char, "4" block, "5" dir, "6" FIFO
  linkname: string;
  mode: number;
  uid: number;
  gid: number;
  uname: string;
  gname: string;
  size: number;
  mtime: number; // seconds
  devmajor: number;
  devminor: number;
}

export const BLOCK = 512;
const NAME_SIZE = 100;
const PREFIX_SIZE = 155;

/** The header blocks for `entry` (one, or three and more with a PAX record file). */
export function tarHeader(entry: TarEntry): Buffer {
  const pax: Record<string, string> = {};
  let ustar = true;
  const text = (value: string, size: number, key: string, splittable = false) => {
    if (isASCII(value) && Buffer.byteLength(value) <= size) return;
    if (!(splittable && splitUSTARPath(value))) ustar = false;
    pax[key] = value;
  };
  const numeric = (value: number, size: number, key: string) => {
    if (fitsInOctal(size, value)) return;
    ustar = false;
    pax[key] = String(value);
  };
  text(entry.name, NAME_SIZE, "path", true);
  text(entry.linkname, NAME_SIZE, "linkpath");
  text(entry.uname, 32, "uname");
  text(entry.gname, 32, "gname");
  numeric(entry.uid, 8, "uid");
  numeric(entry.gid, 8, "gid");
  numeric(entry.size, 12, "size");
  if (ustar) {
    const split = splitUSTARPath(entry.name);
    const block = fields({ ...entry, name: split ? split.suffix : entry.name }, (s) => s);
    if (split) putString(block, 345, PREFIX_SIZE, split.prefix);
    return finish(block);
  }
  const keys = Object.keys(pax).sort();
  const records = keys.map((key) => paxRecord(key, pax[key]!)).join("");
  const slash = entry.name.lastIndexOf("/");
  let recordName = toASCII(`${entry.name.slice(0, slash + 1)}PaxHeaders.0/${entry.name.slice(slash + 1)}`.replace(/^\//, "/"));
  recordName = posixJoinClean(recordName);
  if (recordName.length > NAME_SIZE) recordName = recordName.slice(0, NAME_SIZE);
  recordName = recordName.replace(/\/+$/, "");
  const data = Buffer.from(records, "utf8");
  const recordHeader = Buffer.alloc(BLOCK);
  putString(recordHeader, 0, NAME_SIZE, recordName);
  for (const [offset, size] of [[100, 8], [108, 8], [116, 8]] as const) putOctal(recordHeader, offset, size, 0);
  putOctal(recordHeader, 124, 12, data.length);
  putOctal(recordHeader, 136, 12, 0);
  recordHeader.write("x", 156, "latin1");
  const main = fields(entry, toASCII);
  return Buffer.concat([finish(recordHeader), data, Buffer.alloc(padding(data.length)), finish(main)]);
}

/** Zero bytes that complete `size` bytes of data to a whole block. */
export function padding(size: number): number {
  return (BLOCK - (size % BLOCK)) % BLOCK;
}

function fields(entry: TarEntry, str: (s: string) => string): Buffer {
  const block = Buffer.alloc(BLOCK);
  block.write(entry.typeflag, 156, "latin1");
  putString(block, 0, NAME_SIZE, str(entry.name));
  putString(block, 157, NAME_SIZE, str(entry.linkname));
  putOctal(block, 100, 8, entry.mode);
  putOctal(block, 108, 8, entry.uid);
  putOctal(block, 116, 8, entry.gid);
  putOctal(block, 124, 12, isHeaderOnly(entry.typeflag) ? 0 : entry.size);
  putOctal(block, 136, 12, entry.mtime);
  putString(block, 265, 32, str(entry.uname));
  putString(block, 297, 32, str(entry.gname));
  putOctal(block, 329, 8, entry.devmajor);
  putOctal(block, 337, 8, entry.devminor);
  return block;
}

/** Magic "ustar\0" "00" (USTAR and PAX alike), then the checksum: six octal digits, NUL, space. */
function finish(block: Buffer): Buffer {
  block.write("ustar\u000000", 257, "latin1");
  block.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of block) sum += byte;
  putOctal(block, 148, 7, sum);
  block[155] = 0x20;
  return block;
}

function isHeaderOnly(typeflag: string): boolean {
  return typeflag === "1" || typeflag === "2" || typeflag === "3" || typeflag === "4" || typeflag === "5" || typeflag === "6";
}

/** Go's formatString: the bytes, NUL-terminated when shorter than the field; cut at the field's end. */
function putString(block: Buffer, offset: number, size: number, value: string): void {
  const bytes = Buffer.from(value, "utf8");
  bytes.copy(block, offset, 0, Math.min(size, bytes.length));
  if (bytes.length < size) block[offset + bytes.length] = 0;
  if (bytes.length > size && block[offset + size - 1] === 0x2f) {
    // Go replaces a trailing slash left by the cut with NUL (some readers would take the file for a folder).
    let n = size - 1;
    while (n > 0 && bytes[n - 1] === 0x2f) n--;
    block[offset + n] = 0;
  }
}

/** Go's formatOctal: zero-padded octal with room for a NUL; 0 when the value does not fit. */
function putOctal(block: Buffer, offset: number, size: number, value: number): void {
  const digits = fitsInOctal(size, value) ? value.toString(8) : "0";
  putString(block, offset, size, digits.padStart(size - 1, "0"));
}

function fitsInOctal(size: number, value: number): boolean {
  return value >= 0 && (size >= 12 ? value < 8 ** 11 : value < 8 ** (size - 1));
}

function isASCII(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80 || c === 0) return false;
  }
  return true;
}

function toASCII(s: string): string {
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80 && c !== 0) out += s[i];
  }
  return out;
}

/** Go's splitUSTARPath: a name over 100 bytes cut at a slash into prefix (<= 155) and name (<= 100). */
function splitUSTARPath(name: string): { prefix: string; suffix: string } | undefined {
  let length = name.length;
  if (length <= NAME_SIZE || !isASCII(name)) return undefined;
  if (length > PREFIX_SIZE + 1) length = PREFIX_SIZE + 1;
  else if (name[length - 1] === "/") length--;
  const i = name.lastIndexOf("/", length - 1);
  const suffixLength = name.length - i - 1;
  if (i <= 0 || suffixLength > NAME_SIZE || suffixLength === 0 || i > PREFIX_SIZE) return undefined;
  return { prefix: name.slice(0, i), suffix: name.slice(i + 1) };
}

/** Go's formatPAXRecord: "LEN key=value\n", LEN counting itself. */
function paxRecord(key: string, value: string): string {
  const body = Buffer.byteLength(key) + Buffer.byteLength(value) + 3;
  let size = body + String(body).length;
  let record = `${size} ${key}=${value}\n`;
  if (Buffer.byteLength(record) !== size) {
    size = Buffer.byteLength(record);
    record = `${size} ${key}=${value}\n`;
  }
  return record;
}

/** path.Join's cleaning of the record file's name (dir + "PaxHeaders.0" + file). */
function posixJoinClean(p: string): string {
  const absolute = p.startsWith("/");
  const parts: string[] = [];
  for (const part of p.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length > 0 && parts[parts.length - 1] !== "..") parts.pop();
      else if (!absolute) parts.push("..");
    } else parts.push(part);
  }
  const joined = (absolute ? "/" : "") + parts.join("/");
  return joined === "" ? "." : joined;
}
