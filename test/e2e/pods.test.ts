// baton in a real container runtime: pods under `podman kube play`, with baton's image (`make image`) and busybox
// images made here. Every test checks each container's exit code, the post files and the termination messages.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse, parseAllDocuments } from "yaml";
import { waitFor } from "../integration/helpers.js";
import { allImages } from "./images.js";
import { Podman, REPO } from "./podman.js";
import { PlayedPod, podSpec, type BatonEvent, type ContainerResult, type EnvOverride, type Manifest } from "./pods.js";

const podman = new Podman();
before(() => allImages(podman), { timeout: 300_000 });
after(() => podman.remove());

interface Message {
  key: string;
  value: string;
  type: number;
}

function manifests(file: string): Manifest[] {
  return parseAllDocuments(readFileSync(file, "utf8")).map((d) => d.toJS() as Manifest);
}

async function runToEnd(manifest: Manifest, env: EnvOverride[] = []): Promise<{ pod: PlayedPod; results: Map<string, ContainerResult> }> {
  const pod = new PlayedPod(podman, manifest, env);
  await pod.play();
  return { pod, results: await pod.finish() };
}

function describe(results: Map<string, ContainerResult>): string {
  return [...results.values()].map((c) => `--- ${c.name}: exit ${c.exitCode}\n${c.log}`).join("\n");
}

function exitCodes(results: Map<string, ContainerResult>): Record<string, number | undefined> {
  return Object.fromEntries([...results.values()].map((c) => [c.name, c.exitCode]));
}

function event(c: ContainerResult, name: string): BatonEvent | undefined {
  return c.events.find((e) => e.event === name);
}

function message(c: ContainerResult): Record<string, string> {
  const entries = JSON.parse(c.message) as Message[];
  return Object.fromEntries(entries.map((e) => [e.key, e.value]));
}

/** The post files baton wrote (from its "post" events), found on the host in the pod's volumes. */
async function postFiles(pod: PlayedPod, manifest: Manifest, results: Map<string, ContainerResult>): Promise<Map<string, string>> {
  const spec = podSpec(manifest);
  const found = new Map<string, string>();
  for (const c of results.values()) {
    const mounts = [...(spec.initContainers ?? []), ...spec.containers].find((s) => s.name === c.name)?.volumeMounts ?? [];
    for (const e of c.events.filter((e) => e.event === "post")) {
      const file = String(e.file);
      const mount = mounts.find((m) => file.startsWith(`${m.mountPath}/`));
      assert.ok(mount, `${c.name}'s post file ${file} is on a volume`);
      const onHost = join(await pod.volume(mount.name), file.slice(mount.mountPath.length));
      assert.ok(existsSync(onHost), `${c.name}'s post file ${file} exists`);
      // One line of JSON: the command's exit code and the reason (docs/reference.md, "Post file").
      const post = JSON.parse(readFileSync(onHost, "utf8")) as { exitCode: number; reason: string };
      assert.equal(post.exitCode === 0, !file.endsWith(".err"), `${c.name}'s ${file}: ${JSON.stringify(post)}`);
      found.set(c.name, file);
    }
  }
  return found;
}

/** Every step that waited for another's post file went on only after that step's command had exited. */
function assertChainInOrder(results: Map<string, ContainerResult>): void {
  const all = [...results.values()];
  for (const waiter of all) {
    for (const ready of waiter.events.filter((e) => e.event === "ready")) {
      const writer = all.find((c) => c.events.some((e) => e.event === "post" && e.file === ready.file));
      if (!writer) continue;
      const exited = event(writer, "exited");
      assert.ok(exited && exited.t <= ready.t, `${waiter.name} went on before ${writer.name}'s command had exited`);
    }
  }
}

const EXAMPLES = join(REPO, "examples");

for (const file of readdirSync(EXAMPLES).filter((f) => f.endsWith(".yaml")).sort()) {
  for (const manifest of manifests(join(EXAMPLES, file))) {
    // podman 4.3 runs an init container with restartPolicy: Always as a plain one, and waits for it to end: a pod with
    // a native sidecar would never start its containers. The pod runner's tests run it instead.
    const native = (podSpec(manifest).initContainers ?? []).some((c) => c.restartPolicy === "Always");
    const skip = native && "a native sidecar (restartPolicy: Always), which podman 4.3 cannot run";
    test(`examples/${file}: every container exits 0, post files in order, termination messages`, { skip, timeout: 180_000 }, async () => {
      const { pod, results } = await runToEnd(manifest);
      try {
        for (const c of results.values()) assert.equal(c.exitCode, 0, describe(results));
        const posts = await postFiles(pod, manifest, results);
        for (const [name, file] of posts) assert.ok(!file.endsWith(".err"), `${name} wrote ${file}`);
        assertChainInOrder(results);
        for (const c of results.values()) {
          if (event(c, "start")?.mode === "sidecar" && c.events.some((e) => e.event === "waiting")) {
            assert.ok(event(c, "stopping"), `sidecar ${c.name} was stopped by its stop file`);
          }
          if (c.name.startsWith("step-") && c.message !== "") assert.match(message(c).StartedAt ?? "", /^\d{4}-\d\d-\d\dT/);
        }
        if (manifest.metadata.name === "build-and-test") {
          const commit = message(results.get("step-fetch")!).commit;
          assert.match(commit ?? "", /^[0-9a-f]{12}$/);
          assert.match(results.get("step-build")!.log, new RegExp(`building commit ${commit}`));
          assert.match(message(results.get("step-build")!).artifact ?? "", /^[0-9a-f]{16}$/);
          assert.match(results.get("step-test")!.log, new RegExp(`tests passed for commit ${commit}`));
        }
        if (manifest.kind === "Job") {
          assert.equal(event(results.get("proxy-stopper")!, "stop-url")?.status, 200);
          assert.match(results.get("istio-proxy")!.log, /quitquitquit received/);
        }
      } finally {
        await pod.remove();
      }
    });
  }
}

test("examples/pipeline-pod.yaml with a failing middle step: .err down the chain, the last step skipped, the sidecar stopped", { timeout: 180_000 }, async () => {
  const [manifest] = manifests(join(EXAMPLES, "pipeline-pod.yaml"));
  const { pod, results } = await runToEnd(manifest!, [{ container: "step-build", name: "BREAK_BUILD", value: "true" }]);
  try {
    assert.deepEqual(exitCodes(results), { prepare: 0, web: 0, "step-fetch": 0, "step-build": 1, "step-test": 1 }, describe(results));
    const posts = await postFiles(pod, manifest!, results);
    assert.deepEqual(Object.fromEntries(posts), {
      "step-fetch": "/tekton/run/0/out",
      "step-build": "/tekton/run/1/out.err",
      "step-test": "/tekton/run/2/out.err",
    });
    const run = await pod.volume("tekton-run");
    assert.ok(!existsSync(join(run, "1/out")) && !existsSync(join(run, "2/out")), "no success post file beside an .err");
    assert.match(results.get("step-build")!.log, /build failed: syntax error in main.sh/);
    assert.equal(event(results.get("step-test")!, "command"), undefined, "step-test did not run its command");
    assert.equal(message(results.get("step-test")!).Reason, "Skipped");
    assert.equal(message(results.get("step-build")!).artifact, undefined, "no result from the failed step");
    assert.ok(event(results.get("web")!, "stopping"), "the sidecar saw the .err stop file");
  } finally {
    await pod.remove();
  }
});

test("Tekton's pod for a Task with two steps, a result and a sidecar, with baton as -entrypoint-image", { timeout: 180_000 }, async () => {
  const manifest = parse(readFileSync(join(import.meta.dirname, "pods/tekton-taskrun-pod.yaml"), "utf8")) as Manifest;
  const pod = new PlayedPod(podman, manifest);
  try {
    await pod.play();
    // The controller: READY into the downward file once the sidecar answers (it patches tekton.dev/ready once the
    // sidecar is Running and Ready), as the kubelet projects it: a new file renamed into place.
    const downward = await pod.volume("tekton-internal-downward");
    await podman.podman(["exec", `${pod.name}-sidecar-web`, "sh", "-c", "until wget -q -O /dev/null http://127.0.0.1:8080/greeting; do usleep 50000; done"]);
    writeFileSync(join(downward, ".ready.tmp"), "READY");
    renameSync(join(downward, ".ready.tmp"), join(downward, "ready"));
    // ... and once both steps have ended, it stops the sidecar (Tekton swaps its image for the nop image).
    await podman.podman(["wait", `${pod.name}-step-fetch`, `${pod.name}-step-check`]);
    await podman.podman(["stop", "--time", "10", `${pod.name}-sidecar-web`]);
    const results = await pod.finish();
    assert.deepEqual(exitCodes(results), { prepare: 0, "step-fetch": 0, "step-check": 0, "sidecar-web": 0 }, describe(results));
    const run0 = await pod.volume("tekton-internal-run-0");
    const run1 = await pod.volume("tekton-internal-run-1");
    for (const [dir, n] of [[run0, 0], [run1, 1]] as const) {
      assert.ok(existsSync(join(dir, "out")), `/tekton/run/${n}/out`);
      assert.equal(readFileSync(join(dir, "status/exitCode"), "utf8").trim(), "0", `/tekton/run/${n}/status/exitCode`);
    }
    for (const step of ["step-fetch", "step-check"]) {
      const m = message(results.get(step)!);
      assert.equal(m.greeting, "hello", `${step}'s termination message has the result`);
      assert.match(m.StartedAt ?? "", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    assert.match(results.get("step-fetch")!.log, /fetched hello/);
    assert.match(results.get("step-check")!.log, /checked/);
    assertChainInOrder(results);
    const bin = await pod.volume("tekton-internal-bin");
    assert.ok(existsSync(join(bin, "entrypoint")) && existsSync(join(bin, "lib/baton-node")), "prepare copied baton and its lib/");
  } finally {
    await pod.remove();
  }
});

// `podman pod stop` sends SIGTERM to every container's PID 1, one after another: the step after the stopped one may see
// its .err before its own SIGTERM (skipped: 1) or not (ended while waiting: 143), and the sidecar may see the last .err
// (stopped on purpose: 0) or not (143). Each outcome hands .err on; no command runs after the stopped one.
function stopPod(firstWaitFile: string): string {
  return `
apiVersion: v1
kind: Pod
metadata: { name: stopped }
spec:
  restartPolicy: Never
  volumes:
    - { name: baton-bin, emptyDir: {} }
    - { name: baton-run, emptyDir: {} }
  initContainers:
    - name: place-baton
      image: ghcr.io/baton-dev/baton:0.1.0
      command: ["/baton/baton", "init", "/baton-bin/baton"]
      volumeMounts: [{ name: baton-bin, mountPath: /baton-bin }]
  containers:
    - name: web
      image: busybox:1.35
      command: ["/baton-bin/baton", "sidecar", "--stop-file=/run/steps/1", "--ready-probe=tcp:127.0.0.1:8080", "--ready-file=/run/steps/web", "--"]
      args: ["httpd", "-f", "-p", "127.0.0.1:8080", "-h", "/tmp"]
      volumeMounts: [{ name: baton-bin, mountPath: /baton-bin }, { name: baton-run, mountPath: /run/steps }]
    - name: step-first
      image: busybox:1.35
      command: ["/baton-bin/baton", "--wait-file=${firstWaitFile}", "--wait-file-content", "--post-file=/run/steps/0", "--termination-path=/dev/termination-log", "--"]
      args: ["sleep", "300"]
      volumeMounts: [{ name: baton-bin, mountPath: /baton-bin }, { name: baton-run, mountPath: /run/steps }]
    - name: step-next
      image: busybox:1.35
      command: ["/baton-bin/baton", "--wait-file=/run/steps/0", "--post-file=/run/steps/1", "--termination-path=/dev/termination-log", "--"]
      args: ["echo", "never runs"]
      volumeMounts: [{ name: baton-bin, mountPath: /baton-bin }, { name: baton-run, mountPath: /run/steps }]
`;
}

for (const [when, waitFile, firstEvent] of [
  ["while the first step runs", "/run/steps/web", "command"],
  ["while every step waits", "/run/steps/never", "waiting"],
] as const) {
  test(`podman pod stop ${when}: 143 and .err, the next step never runs, every container ends on SIGTERM`, { timeout: 180_000 }, async () => {
    const manifest = parse(stopPod(waitFile)) as Manifest;
    const pod = new PlayedPod(podman, manifest);
    try {
      await pod.play();
      const seen = (step: string, e: string) => pod.events(step).some((x) => x.event === e) || undefined;
      await waitFor(() => seen("step-first", firstEvent) && seen("step-next", "waiting"), `step-first ${firstEvent}`, 60_000);
      const stopped = Date.now();
      await pod.stop(10);
      const results = await pod.finish();
      assert.ok(Date.now() - stopped < 9_000, "every container ended on SIGTERM, none waited for the SIGKILL");
      const codes = exitCodes(results);
      assert.equal(codes["place-baton"], 0, describe(results));
      assert.equal(codes["step-first"], 143, describe(results));
      assert.ok([143, 1].includes(codes["step-next"]!), `step-next: SIGTERM (143) or skipped (1)\n${describe(results)}`);
      assert.ok([143, 0].includes(codes.web!), `web: SIGTERM (143) or stopped by 1.err (0)\n${describe(results)}`);
      const posts = await postFiles(pod, manifest, results);
      assert.deepEqual(Object.fromEntries(posts), { "step-first": "/run/steps/0.err", "step-next": "/run/steps/1.err" });
      const signal = event(results.get("step-first")!, "signal");
      assert.equal(signal?.signal, "SIGTERM");
      if (firstEvent === "waiting") {
        assert.equal(signal?.to, null, "SIGTERM came while waiting");
        assert.equal(event(results.get("step-first")!, "command"), undefined);
      } else assert.equal(typeof signal?.to, "number", "SIGTERM was forwarded to the command");
      assert.equal(event(results.get("step-next")!, "command"), undefined, "the next step did not run its command");
      for (const step of ["step-first", "step-next"]) assert.match(message(results.get(step)!).StartedAt ?? "", /^\d{4}-/);
    } finally {
      await pod.remove();
    }
  });
}
