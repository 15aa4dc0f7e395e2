// Output artifacts and parameters of the container named `main`, checked against Go: the expected archives in
// argo-tgz/ were written by Go's archive/tar and compress/gzip (argo-tgz/make-vectors.go) from the folder that
// argo-tgz/tree.ts makes, the way Argo's util/archive writes them. Every byte of the tar must be the same.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { IS_ROOT, join, tempDir } from "./helpers.js";
import { argoPod } from "./argo-helpers.js";
import { makeTree } from "./argo-tgz/tree.js";

const VECTORS = join(import.meta.dirname, "argo-tgz");

test("a folder and a file as output artifacts: the tar is byte for byte Go's, the gzip header is Go's", { skip: !IS_ROOT && "the vectors were made as root (uid 0, root's names)" }, async () => {
  const work = tempDir();
  makeTree(work);
  const pod = argoPod();
  pod.template({ outputs: { artifacts: [{ path: join(work, "out") }, { path: join(work, "single.txt") }] } });
  const run = await pod.start("main", ["true"]).exited;
  assert.equal(run.code, 0, run.stderr);
  for (const [source, vector] of [["out", "out.tar"], ["single.txt", "single.tar"]] as const) {
    const tgz = readFileSync(join(pod.root, "outputs/artifacts", work, `${source}.tgz`));
    assert.deepEqual(tgz.subarray(0, 10), readFileSync(join(VECTORS, "gzip-header.bin")), `${source}: Go's gzip header`);
    const tar = gunzipSync(tgz);
    const expected = readFileSync(join(VECTORS, vector));
    for (let block = 0; block < Math.max(tar.length, expected.length) / 512; block++) {
      const [ours, go] = [tar.subarray(block * 512, block * 512 + 512), expected.subarray(block * 512, block * 512 + 512)];
      assert.deepEqual(ours.toString("latin1"), go.toString("latin1"), `${source}: block ${block} differs`);
    }
  }
});

test("outputs: a path under a volume mount is skipped, a missing one is skipped, only `main` saves them", async () => {
  const work = tempDir();
  writeFileSync(join(work, "p"), "v");
  mkdirSync(join(work, "vol"));
  writeFileSync(join(work, "vol", "p"), "on the volume");
  const template = {
    container: { volumeMounts: [{ name: "v", mountPath: join(work, "vol") }] },
    outputs: {
      parameters: [{ valueFrom: { path: join(work, "p") } }, { valueFrom: { path: join(work, "vol", "p") } }, { valueFrom: { path: join(work, "missing") } }],
      artifacts: [{ path: join(work, "vol") }, { path: join(work, "missing") }],
    },
  };
  const pod = argoPod();
  pod.template(template);
  const other = await pod.start("other", ["true"]).exited;
  assert.equal(other.code, 0, other.stderr);
  assert.ok(!existsSync(join(pod.root, "outputs")), "a container not named main saves nothing");
  const run = await pod.start("main", ["true"]).exited;
  assert.equal(run.code, 0, run.stderr);
  assert.equal(readFileSync(join(pod.root, "outputs/parameters", work, "p"), "utf8"), "v");
  assert.ok(!existsSync(join(pod.root, "outputs/parameters", work, "vol")));
  assert.ok(!existsSync(join(pod.root, "outputs/parameters", work, "missing")));
  assert.ok(!existsSync(join(pod.root, "outputs/artifacts")));
});

test("an output that cannot be saved: exit 64, exitcode keeps the command's code", async () => {
  const work = tempDir();
  const pod = argoPod();
  pod.template({ outputs: { parameters: [{ valueFrom: { path: work } }] } }); // a folder as a parameter
  const run = await pod.start("main", ["sh", "-c", "exit 3"]).exited;
  assert.equal(run.code, 64);
  assert.equal(pod.read("main", "exitcode"), "3");
  assert.match(run.stderr, /^baton: failed to copy .*: not a regular file\n$/);
});
