// dist/baton.cjs copied alone into an empty folder, as a user does to put it into an image: it carries its chunks
// (Tekton's features, the CEL evaluator, `baton init`) inside itself (src/process/chunks.ts), so everything works with nothing
// beside it; a damaged payload is one line and POST.err. Damage that changes the file's size is refused before anything
// runs (its guard: test/integration/bundle-cut-short.test.ts), so each damage here keeps the size.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { BATON, IS_ROOT, cleanEnv, existsSync, join, readJson, runBaton, tempDir } from "./helpers.js";

/** A folder that holds only a copy of the bundle; returns the copy's path. */
function bundleAlone(text: string | Buffer = readFileSync(BATON)): string {
  const folder = join(tempDir(), "alone");
  mkdirSync(folder);
  writeFileSync(join(folder, "baton.cjs"), text, { mode: 0o755 });
  return join(folder, "baton.cjs");
}

/**
 * The bundle's text with the base64 of one chunk (its line without the `//`) changed by `damage`, then padded with `=`
 * (where Node's base64 decoding stops) to its length: the file keeps its size.
 */
function damaged(name: string, damage: (base64: string) => string): string {
  const lines = readFileSync(BATON, "latin1").split("\n");
  const mark = lines.findIndex((line) => line.startsWith(`//@baton-chunk ${name} `));
  assert.notEqual(mark, -1, `${name} in the bundle's payload`);
  const base64 = lines[mark + 1]!.slice(2);
  const changed = damage(base64);
  assert.ok(changed.length <= base64.length);
  lines[mark + 1] = `//${changed.padEnd(base64.length, "=")}`;
  return lines.join("\n");
}

/** The bundle's text with the mark of the chunk NAME naming another (same length): its payload cannot be found. */
function markRenamed(name: string): string {
  const text = readFileSync(BATON, "latin1");
  const mark = `\n//@baton-chunk ${name} `;
  assert.ok(text.includes(mark));
  return text.replace(mark, `\n//@baton-chunk ${name.slice(0, -1)}x `);
}

test("the bundle alone: baton init DEST, then DEST runs a step, a CEL when (true and false) and Tekton credentials, as PID 1", async () => {
  const bundle = bundleAlone();
  const dir = tempDir();
  const dest = join(dir, "tekton/bin/baton");
  const init = await runBaton(["init", dest], { baton: [process.execPath, bundle], pid1: IS_ROOT });
  assert.equal(init.code, 0, init.stderr);
  assert.deepEqual(readdirSync(join(dir, "tekton/bin")), ["baton"], "the bundle is all there is to copy");
  assert.deepEqual(readFileSync(dest), readFileSync(BATON));
  const baton = { baton: [process.execPath, dest], pid1: IS_ROOT };

  const plain = await runBaton(["--post-file", join(dir, "plain"), "--", "echo", "plain"], baton);
  assert.equal(plain.code, 0, plain.stderr);
  assert.equal(plain.stdout, "plain\n");

  for (const [cel, runs] of [["'a' == 'a'", true], ["'a' == 'b'", false]] as const) {
    const post = join(dir, `cel-${runs}`);
    const exit = await runBaton(["-post_file", post, "-when_expressions", JSON.stringify([{ cel }]), "-entrypoint", "echo", "--", "ran"], baton);
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(exit.stdout, runs ? "ran\n" : "", cel);
    assert.equal(existsSync(post), true, cel);
    assert.doesNotMatch(exit.stderr, /cannot load/);
  }

  // Tekton's pod builder's vector for a basic-auth secret (as in tekton-credentials.test.ts).
  const root = join(dir, "tekton");
  mkdirSync(join(root, "creds-secrets/git-creds"), { recursive: true });
  writeFileSync(join(root, "creds-secrets/git-creds/username"), "foo");
  writeFileSync(join(root, "creds-secrets/git-creds/password"), "BestEver");
  mkdirSync(join(root, "creds"));
  const home = join(dir, "home");
  mkdirSync(home);
  const creds = await runBaton(
    ["-post_file", join(root, "run/0/out"), "-basic-git=git-creds=github.com", "-entrypoint", "sh", "--", "-c", 'cat "$HOME/.git-credentials"'],
    { ...baton, env: cleanEnv({ BATON_TEKTON_ROOT: root, HOME: home }) },
  );
  assert.equal(creds.code, 0, creds.stderr);
  assert.equal(creds.stdout, "//foo:BestEver@github.com\n");
  assert.equal(readFileSync(join(root, "creds/.git-credentials"), "utf8"), "//foo:BestEver@github.com\n");
});

const flip = (at: number) => (line: string) => line.slice(0, at) + (line[at] === "A" ? "B" : "A") + line.slice(at + 1);

for (const [what, name, text] of [
  ["a changed character", "baton-cel.cjs", () => damaged("baton-cel.cjs", flip(500))],
  ["a cut line", "baton-cel.cjs", () => damaged("baton-cel.cjs", (line) => line.slice(0, line.length >> 1))],
  ["an empty line", "baton-cel.cjs", () => damaged("baton-cel.cjs", () => "")],
  // What the digest catches: a payload that decompresses, but to other code (here: the init chunk under the CEL mark).
  ["another chunk's text", "baton-cel.cjs", () => damaged("baton-cel.cjs", () => readFileSync(BATON, "latin1").split("\n").find((_, i, all) => all[i - 1]?.startsWith("//@baton-chunk baton-init.cjs "))!.slice(2))],
  ["a mark that names no chunk", "baton-tekton.cjs", () => markRenamed("baton-tekton.cjs")],
  ["a changed character in the Tekton chunk", "baton-tekton.cjs", () => damaged("baton-tekton.cjs", flip(100))],
] as const) {
  test(`a damaged payload (${what}): a step that needs it fails with one line and POST.err; a plain step runs`, async () => {
    const bundle = bundleAlone(text());
    const dir = tempDir();
    const when = JSON.stringify([{ cel: "'a' == 'a'" }]);
    const exit = await runBaton(["-post_file", join(dir, "post"), "-when_expressions", when, "-entrypoint", "echo", "--", "ran"], {
      baton: [process.execPath, bundle],
      pid1: IS_ROOT,
    });
    assert.equal(exit.code, 1);
    assert.equal(exit.stdout, "");
    const problem = ({ "a mark that names no chunk": "its payload is not in the file", "another chunk's text": "its payload is damaged" } as Record<string, string>)[what] ?? "[^\\n]+";
    // Alone, the bundle has no addon beside it: the liveness lock, taken as the step starts, is skipped with one line.
    const noLock = "(?:baton: cannot hold the liveness lock [^\\n]+\\n)?";
    assert.match(exit.stderr, new RegExp(`^${noLock}baton: cannot load ${name.replace(".", "\\.")} from ${bundle}: ${problem}: baton is not installed whole\\n$`));
    assert.equal(readJson(join(dir, "post.err")).exitCode ?? 1, 1);
    const plain = await runBaton(["--post-file", join(dir, "plain"), "--", "true"], { baton: [process.execPath, bundle] });
    assert.equal(plain.code, 0, plain.stderr);
  });
}
