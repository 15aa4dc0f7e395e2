// The docs' recipes for baton's image are the files `make e2e` runs: the `COPY --from` Containerfile, the
// init-container pattern (examples/pipeline-pod.yaml) and Tekton's prepare command (test/e2e/pods/); and every image
// reference to baton's image names the version that `make image` tags.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { parse } from "yaml";

const ROOT = resolve(import.meta.dirname, "../..");
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
const { version } = JSON.parse(read("package.json")) as { version: string };
const IMAGE = `ghcr.io/baton-dev/baton:${version}`;

/** The fenced blocks of `lang` in the section of `file` under `heading`. */
function blocks(file: string, heading: string, lang: string): string[] {
  const text = read(file);
  const start = text.indexOf(`\n## ${heading}\n`);
  assert.ok(start >= 0, `${file} has "## ${heading}"`);
  const end = text.indexOf("\n## ", start + 1);
  const section = text.slice(start, end === -1 ? undefined : end);
  return [...section.matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)```", "g"))].map((m) => m[1]!);
}

const meaningful = (text: string) => text.split("\n").map((l) => l.trim()).filter((l) => l !== "" && !l.startsWith("#"));

test("the docs' COPY --from recipe is examples/Containerfile, which make e2e builds", () => {
  const [dockerfile] = blocks("docs/standalone.md", "Putting baton into an image", "dockerfile");
  assert.deepEqual(meaningful(dockerfile ?? ""), meaningful(read("examples/Containerfile")));
});

test("the docs' init-container pattern is taken from examples/pipeline-pod.yaml, line for line and in order", () => {
  const [yaml] = blocks("docs/standalone.md", "Putting baton into an image", "yaml");
  // Without the block (moved, or fenced as another language) the loop below would compare nothing.
  assert.ok(yaml && meaningful(yaml).length > 0, "docs/standalone.md has a yaml block under \"Putting baton into an image\"");
  const example = meaningful(read("examples/pipeline-pod.yaml"));
  let at = 0;
  for (const line of meaningful(yaml)) {
    const found = example.indexOf(line, at);
    assert.ok(found >= 0, `"${line}" is in examples/pipeline-pod.yaml after line ${at}`);
    at = found + 1;
  }
});

test("Tekton's prepare command in the docs is the one the e2e Tekton pod runs, from baton's image", () => {
  const pod = parse(read("test/e2e/pods/tekton-taskrun-pod.yaml")) as {
    spec: { initContainers: { name: string; image: string; command: string[] }[]; containers: { name: string }[] };
  };
  const prepare = pod.spec.initContainers.find((c) => c.name === "prepare")!;
  assert.equal(prepare.image, IMAGE);
  const steps = pod.spec.containers.map((c) => c.name).filter((n) => n.startsWith("step-"));
  assert.deepEqual(prepare.command, ["/ko-app/entrypoint", "init", "/ko-app/entrypoint", "/tekton/bin/entrypoint", ...steps]);
  assert.ok(read("docs/tekton.md").includes("/ko-app/entrypoint init /ko-app/entrypoint /tekton/bin/entrypoint STEP-NAME..."));
});

test(`every reference to baton's image in examples/ names ${IMAGE}`, () => {
  let refs = 0;
  for (const file of readdirSync(join(ROOT, "examples"))) {
    for (const ref of read(`examples/${file}`).matchAll(/ghcr\.io\/baton-dev\/baton:[\w.-]+/g)) {
      assert.equal(ref[0], IMAGE, `examples/${file}`);
      refs++;
    }
  }
  // None found (the image renamed, the pattern no longer matching it): the check above would look at nothing.
  assert.ok(refs > 0, "no reference to ghcr.io/baton-dev/baton:TAG in examples/");
});

test("the docs' Argo recipe is examples/Containerfile.argoexec, which make e2e builds", () => {
  const [dockerfile] = blocks("docs/argo.md", "The recipe: point the controller's executor image at baton's", "dockerfile");
  assert.deepEqual(meaningful(dockerfile ?? ""), meaningful(read("examples/Containerfile.argoexec")));
});
