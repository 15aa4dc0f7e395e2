// Where the program and the payload lie in dist/baton.cjs (scripts/build.mjs writes it, scripts/bundle-guard.cjs runs
// it): the last line, `//baton-end START LENGTH`, says where the program's commented lines are. Read by scripts/sea.mjs
// (the standalone build carries the program as its main script and the payload as an asset) and by the tests.

/** The payload's first line (src/process/chunks.ts reads the chunks after it). */
export const PAYLOAD_START = "//baton-chunks\n";

/**
 * The bundle's text (latin1) -> `program`, the JavaScript the guard compiles (its first line empty, where the `#!`
 * line was: lines and columns as in baton.cjs.map), and `payload`, from PAYLOAD_START to the end mark (exclusive).
 */
export function bundleLayout(text) {
  const endAt = text.lastIndexOf("\n//baton-end ", text.length - 2) + 1;
  const end = /^\/\/baton-end (\d+) (\d+)\n$/.exec(text.slice(endAt));
  const payloadAt = text.lastIndexOf(`\n${PAYLOAD_START}`, endAt) + 1;
  if (endAt === 0 || end === null || payloadAt === 0) throw new Error("not a bundle of this build: no end mark or payload");
  const start = Number(end[1]);
  const commented = text.slice(start, start + Number(end[2]));
  return { program: commented.replaceAll("\n//", "\n"), payload: text.slice(payloadAt, endAt) };
}
