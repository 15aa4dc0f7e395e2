import { readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";

// The entry of the stack chunk: with BATON_DEBUG=1, src/process/internal-error.ts prints an internal error's stack
// through it, each frame of the bundle or of a chunk mapped to its place in src/ by the source maps that ship beside
// the bundle (dist/*.map; lib/*.map in the standalone folder; scripts/build.mjs). A chunk, so that no step pays for
// this code, and the maps are read only here, once something has gone wrong.

/** The frames of a stack (`at ...` lines), each mapped to src/ where a map says where it is. */
export function sourceStack(stack: string): string {
  return stack
    .split("\n")
    .filter((text) => /^\s+at /.test(text))
    .map(mapFrame)
    .join("\n");
}

/** A frame of the form `at NAME (FILE:LINE:COLUMN)` or `at FILE:LINE:COLUMN`. */
const FRAME = /^(\s+at (?:.*? \()?)(.+):(\d+):(\d+)(\)?)$/;

function mapFrame(frame: string): string {
  const match = FRAME.exec(frame);
  if (!match) return frame;
  const [, head, file, line, column, tail] = match;
  const map = sourceMap(file!);
  // findEntry takes and gives zero-based lines and columns (Node 20 to 24); {} when nothing maps there.
  const entry = map?.findEntry(Number(line) - 1, Number(column) - 1) as { originalSource?: string; originalLine?: number; originalColumn?: number } | undefined;
  if (entry?.originalSource === undefined) return frame;
  return `${head}${entry.originalSource}:${entry.originalLine! + 1}:${entry.originalColumn! + 1}${tail}`;
}

type SourceMap = import("node:module").SourceMap;
const maps = new Map<string, SourceMap | undefined>();

/**
 * The map of a file that runs baton's code -> baton.cjs.map: the bundle (whatever its name: `baton init` copies it as
 * `baton`), or in the standalone build the path its script was read from when it was built (scripts/sea.mjs:
 * `.../build/sea/baton.cjs`). A chunk, `FILE#NAME` with FILE the bundle or the executable (src/process/chunks.ts)
 * -> NAME.map.
 * The maps are beside the bundle, or beside the standalone build's executable (its lib/).
 */
function sourceMap(file: string): SourceMap | undefined {
  const hash = file.lastIndexOf("#");
  const code = hash < 0 ? file : file.slice(0, hash);
  const standalone = process.getBuiltinModule?.("node:sea")?.isSea() === true;
  const ours = standalone ? (hash < 0 ? basename(code) === "baton.cjs" : code === process.execPath) : code === __filename;
  if (!ours) return undefined;
  const folder = dirname(standalone ? process.execPath : __filename);
  const path = join(folder, hash < 0 ? "baton.cjs.map" : `${basename(file.slice(hash + 1))}.map`);
  if (!maps.has(path)) maps.set(path, readSourceMap(path));
  return maps.get(path);
}

function readSourceMap(path: string): SourceMap | undefined {
  try {
    const payload = JSON.parse(readFileSync(path, "utf8"));
    // The map's sources are relative to the build's dist/ folder ("../src/main.ts"): named from the repository's root.
    payload.sources = (payload.sources as string[]).map((source) => source.replace(/^(?:\.\.\/)+/, ""));
    const { SourceMap } = process.getBuiltinModule?.("node:module") ?? (require("node:module") as typeof import("node:module"));
    return new SourceMap(payload);
  } catch {
    return undefined; // no map shipped here: the frame stays as it is
  }
}
