// Argo Workflows under `podman kube play` (docs/argo.md): the executor image built by examples/Containerfile.argoexec,
// as written, on a stand-in for Argo's own executor image (test/e2e/argo/: its `init` and `wait` do with the files what
// Argo's do), and the pod Argo's controller builds for a container set (test/e2e/pods/argo-container-set-pod.yaml).
// The images are made here: nothing is pulled.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { importBusyboxImage, loadBatonImage } from "./images.js";
import { Podman, REPO, run } from "./podman.js";
import { PlayedPod, type ContainerResult, type Manifest } from "./pods.js";

/** The image examples/Containerfile.argoexec starts from, which the stand-in is tagged as in this test's storage. */
const ARGO_IMAGE = /^ARG ARGOEXEC_IMAGE=(\S+)$/m.exec(readFileSync(join(REPO, "examples/Containerfile.argoexec"), "utf8"))![1]!;
/** The executor image the pod names, built from the recipe. */
const EXECUTOR_IMAGE = "localhost/argoexec-baton:e2e";
const MANIFEST = join(import.meta.dirname, "pods/argo-container-set-pod.yaml");
const STANDALONE = join(REPO, "dist/baton-linux-x64");

const podman = new Podman();
before(async () => {
  await loadBatonImage(podman);
  await importBusyboxImage(podman);
  await podman.podman(["build", "--quiet", "--tag", ARGO_IMAGE, join(import.meta.dirname, "argo")]);
  await podman.podman(["build", "--quiet", "--tag", EXECUTOR_IMAGE, "--file", join(REPO, "examples/Containerfile.argoexec"), join(REPO, "examples")]);
}, { timeout: 300_000 });
after(() => podman.remove());

const sha256 = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");
const mode = (file: string) => (statSync(file).mode & 0o777).toString(8);

function describe(results: Map<string, ContainerResult>): string {
  return [...results.values()].map((c) => `--- ${c.name}: exit ${c.exitCode}\n${c.log}`).join("\n");
}

test("the recipe's executor image: baton's argoexec at /bin/argoexec, its folder at /bin/baton/, Argo's own at /bin/baton/argo/argoexec", async () => {
  const files = await podman.podman([
    "run", "--rm", "--network", "none", "--entrypoint", "/bin/sh", EXECUTOR_IMAGE, "-c",
    "sha256sum /bin/argoexec /bin/baton/lib/baton-node /bin/baton/argo/argoexec; /bin/baton/baton --version",
  ]);
  const sums = Object.fromEntries(files.stdout.trim().split("\n").slice(0, 3).map((line) => line.split(/\s+/).reverse()));
  assert.equal(sums["/bin/argoexec"], sha256(join(STANDALONE, "argoexec")));
  assert.equal(sums["/bin/baton/lib/baton-node"], sha256(join(STANDALONE, "lib/baton-node")));
  assert.equal(sums["/bin/baton/argo/argoexec"], sha256(join(import.meta.dirname, "argo/argoexec")), "Argo's own (the stand-in)");
  assert.match(files.stdout, /\nbaton \d+\.\d+\.\d+\n$/);
});

test("Argo's pod for a container set a -> b -> c, a -> main, and a sidecar: b fails, c does not run, main's result, parameter and artifact reach the wait container, the sidecar stops itself", { timeout: 240_000 }, async () => {
  const manifest = parse(readFileSync(MANIFEST, "utf8")) as Manifest;
  const pod = new PlayedPod(podman, manifest);
  try {
    await pod.play();
    const results = await pod.finish();
    const codes = Object.fromEntries([...results.values()].map((c) => [c.name, c.exitCode]));
    // c's dependency failed: Argo's emissary puts the dependency's code in c's exitcode file and exits 64. The sidecar
    // was stopped by its own emissary once a, b, c and main had their exitcode: SIGTERM to `sleep`.
    assert.deepEqual(codes, { init: 0, wait: 0, a: 0, b: 3, c: 64, main: 0, web: 143 }, describe(results));

    const argo = await pod.volume("var-run-argo");
    // The init container: Argo's init copied the argoexec it found on PATH (baton's) and wrote the template; baton's
    // argoexec had copied its folder, with Argo's own argoexec, first.
    assert.equal(sha256(join(argo, "argoexec")), sha256(join(STANDALONE, "argoexec")));
    assert.equal(mode(join(argo, "argoexec")), "555");
    const template = manifest.spec as { initContainers: { env: { name: string; value?: string }[] }[] };
    assert.equal(readFileSync(join(argo, "template"), "utf8"), template.initContainers[0]!.env.find((e) => e.name === "ARGO_TEMPLATE")!.value);
    assert.equal(mode(join(argo, "template")), "444");
    assert.equal(sha256(join(argo, "baton/lib/baton-node")), sha256(join(STANDALONE, "lib/baton-node")));
    assert.equal(sha256(join(argo, "baton/argo/argoexec")), sha256(join(import.meta.dirname, "argo/argoexec")));

    // The files the emissary leaves, as Argo's does (c's holds its failed dependency's code).
    const exitcodes = Object.fromEntries(["a", "b", "c", "main", "web"].map((n) => [n, readFileSync(join(argo, "ctr", n, "exitcode"), "utf8")]));
    assert.deepEqual(exitcodes, { a: "0", b: "3", c: "3", main: "0", web: "143" });
    for (const n of ["a", "b", "c", "main", "web"]) assert.equal(mode(join(argo, "ctr", n)), "777", `ctr/${n}`);
    assert.equal(readFileSync(join(argo, "ctr/main/stdout"), "utf8"), "the result\n");
    assert.equal(readFileSync(join(argo, "ctr/a/stdout"), "utf8"), "from a\n");
    assert.match(readFileSync(join(argo, "ctr/b/combined"), "utf8"), /b fails/);
    assert.equal(readFileSync(join(argo, "outputs/parameters/tmp/answer"), "utf8"), "42\n");
    const tgz = join(argo, "outputs/artifacts/tmp/report.tgz");
    const listing = await run("tar", ["-tzf", tgz]);
    // Argo's util/archive tarDir: entries named from the path's base name, in filepath.Walk's (lexical) order, folders
    // with no trailing slash.
    assert.deepEqual(listing.stdout.trim().split("\n"), ["report", "report/hello.txt", "report/sub", "report/sub/deep.txt"]);
    assert.equal((await run("tar", ["-xzOf", tgz, "report/sub/deep.txt"])).stdout, "deep\n");

    // What the wait container read: every exitcode complete the moment it appeared, the result, the parameter, the
    // artifact.
    assert.deepEqual(results.get("wait")!.log.trim().split("\n").map((line) => line.trimEnd()), [
      "exitcode a '0'",
      "exitcode b '3'",
      "exitcode c '3'",
      "exitcode main '0'",
      "result 'the result'",
      "parameter answer '42'",
      "artifact report report report/hello.txt report/sub report/sub/deep.txt",
    ], describe(results));

    // The order: b and main started after a had ended and its exitcode was complete; c never ran.
    const order = readFileSync(join(await pod.volume("workspace"), "order"), "utf8").trim().split("\n").filter((l) => l !== "web start");
    assert.equal(order[0], "a start");
    assert.equal(order[1], "a end");
    assert.deepEqual(order.slice(2).sort(), ["b start, a exitcode 0", "main start, a exitcode 0"], order.join("\n"));
    assert.match(results.get("b")!.log, /b fails/);
  } finally {
    await pod.remove();
  }
});
