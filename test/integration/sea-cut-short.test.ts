// A copy of the standalone folder cut short (a full disk, an interrupted cp): lib/baton-node without its end made the
// loader die of SIGBUS, saying nothing, or say only "cannot read file data". The launcher checks the file against its
// ELF header first (scripts/sea/launcher.c) and says so in one line of baton's.
import { test } from "node:test";
import assert from "node:assert/strict";
import { closeSync, cpSync, openSync, readSync, statSync, writeSync } from "node:fs";
import { NO_STANDALONE, STANDALONE_DIR, join, runBaton, tempDir } from "./helpers.js";

/** The standalone folder copied, its lib/baton-node cut to its first `keep` bytes (or `-keep`: all but the last). */
function cutCopy(keep: number): string {
  const folder = join(tempDir(), "baton");
  cpSync(STANDALONE_DIR, folder, { recursive: true, filter: (source) => !source.endsWith("/lib/baton-node") });
  const whole = join(STANDALONE_DIR, "lib/baton-node");
  const length = keep >= 0 ? keep : statSync(whole).size + keep;
  const input = openSync(whole, "r");
  const output = openSync(join(folder, "lib/baton-node"), "w", 0o755);
  try {
    const buffer = Buffer.allocUnsafe(1 << 20);
    for (let done = 0; done < length; ) {
      const n = readSync(input, buffer, 0, Math.min(buffer.length, length - done), done);
      writeSync(output, buffer, 0, n);
      done += n;
    }
  } finally {
    closeSync(input);
    closeSync(output);
  }
  return folder;
}

for (const [what, keep] of [["4 KiB short of its end", -4096], ["at 1 MiB", 1 << 20], ["at 10 bytes", 10]] as const) {
  test(`the standalone build whose lib/baton-node is cut ${what} says so in one line: exit 127, no SIGBUS`, { skip: NO_STANDALONE }, async () => {
    const folder = cutCopy(keep);
    const exit = await runBaton(["--", "true"], { baton: [join(folder, "baton")] });
    assert.equal(exit.signal, null, exit.stderr);
    assert.equal(exit.code, 127, exit.stderr);
    assert.match(exit.stderr, /^baton: \S+\/lib\/baton-node is cut short \(\d+ bytes of at least \d+\): baton is not installed whole; copy the standalone folder again\n$/);
  });
}
