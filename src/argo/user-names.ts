import { readBounded } from "../base/safe-files.js";

// tar.FileInfoHeader fills a header's user and group names the way Go's os/user does without cgo (argoexec is built
// without): the first entry of /etc/passwd (/etc/group) with that id, "" when there is none or no file.

const cache = new Map<string, string>();
const FILE_LIMIT = 16 * 1024 * 1024;

export function userAndGroupNames(uid: number, gid: number): { user: string; group: string } {
  return { user: lookup("/etc/passwd", 2, 6, uid), group: lookup("/etc/group", 2, 4, gid) };
}

function lookup(file: string, idField: number, minFields: number, id: number): string {
  const key = `${file}:${id}`;
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  let name = "";
  let text = "";
  try {
    text = readBounded(file, FILE_LIMIT, { followSymlink: true }).toString("utf8");
  } catch {
    // no such file: no name
  }
  for (const line of text.split("\n")) {
    // Go's readColonFile skips comments and lines that start with a blank, + or -.
    if (line === "" || "# \t+-".includes(line[0]!)) continue;
    const parts = line.split(":");
    if (parts.length < minFields || parts[0] === "" || parts[idField] !== String(id)) continue;
    name = parts[0]!;
    break;
  }
  cache.set(key, name);
  return name;
}
