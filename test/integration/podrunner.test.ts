// The pod runner (scripts/podrunner) and the manifests in examples/: each manifest is valid Kubernetes, and each runs
// here, with the real bundle, to the phase a kubelet would report.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Pod } from "kubernetes-models/v1";
import { Job } from "kubernetes-models/batch/v1";
import { busyboxImageEnv } from "../../scripts/podrunner/busybox.js";
import { featuresAvailable, missingFeatures } from "../../scripts/podrunner/features.js";
import { parseManifest, loadManifest, type PodToRun } from "../../scripts/podrunner/manifest.js";
import { runPod, type ContainerStatus, type PodResult, type RunOptions } from "../../scripts/podrunner/pod.js";
import { drawSvg, drawTerminal } from "../../scripts/podrunner/timeline.js";
import { BATON, IS_ROOT, SKIP_REPEAT_WHEN_QUICK, isRunning, readOr, waitFor } from "./helpers.js";

const REPO = resolve(import.meta.dirname, "../..");
const EXAMPLES = join(REPO, "examples");
const MANIFESTS = readdirSync(EXAMPLES).filter((f) => f.endsWith(".yaml")).sort();
// The host stands in for every image: baton is on the image's PATH (bin/baton runs the bundle), then the host's own
// programs; for the examples, whose images are busybox, busybox's applets come first.
const BIN_PATH = `${join(REPO, "bin")}:${process.env.PATH ?? "/usr/bin:/bin"}`;
const IMAGE_ENV = { PATH: BIN_PATH, HOME: "/root" };
const EXAMPLE_ENV = busyboxImageEnv(join(REPO, "bin"));
const NOT_ROOT = IS_ROOT ? false : "the pod runner needs root (namespaces and mounts)";
const available = featuresAvailable(BATON);

// Every run's volumes, logs and events go under one folder, removed at the end.
const RUNS = mkdtempSync(join(tmpdir(), "podrunner-test-"));
after(() => rmSync(RUNS, { recursive: true, force: true }));
let runs = 0;

function run(pod: PodToRun, options: RunOptions = {}): Promise<PodResult> {
  return runPod(pod, { imageEnv: IMAGE_ENV, deadlineSeconds: 120, runDir: join(RUNS, `${++runs}-${pod.name}`), ...options });
}

function byName(result: PodResult, name: string): ContainerStatus {
  const found = [...result.initContainers, ...result.containers].find((c) => c.name === name);
  assert.ok(found, `container ${name}`);
  return found;
}

function eventOf(status: ContainerStatus, name: string) {
  return status.events.find((e) => e.event === name);
}

/**
 * Every step that waited for a file went on only after the step that writes it had finished its command. `chained`:
 * the pod's manifest has a wait file, so at least one such pair must be found (else the events were never read, and
 * the check below would pass on nothing).
 */
function assertChainInOrder(result: PodResult, chained: boolean): void {
  const all = [...result.initContainers, ...result.containers];
  let pairs = 0;
  for (const waiter of all) {
    for (const ready of waiter.events.filter((e) => e.event === "ready")) {
      const writer = all.find((c) => c.events.some((e) => e.event === "post" && e.file === ready.file));
      if (!writer) continue; // written by something that is not a baton step (a ready probe)
      // "post" is emitted just after the rename, so the waiter may see the file first; "exited" comes before it.
      const exited = eventOf(writer, "exited");
      assert.ok(exited && exited.t <= ready.t, `${waiter.name} went on before ${writer.name}'s command had exited`);
      pairs++;
    }
  }
  if (chained) assert.ok(pairs > 0, "no step was seen waiting for another step's post file: were the events read?");
}

for (const file of MANIFESTS) {
  test(`examples/${file} is a valid Kubernetes Pod or Job (kubernetes-models schemas)`, () => {
    for (const pod of loadManifest(join(EXAMPLES, file))) {
      const model = pod.kind === "Pod" ? new Pod(pod.document as never) : new Job(pod.document as never);
      assert.doesNotThrow(() => model.validate());
      for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) assert.ok(c.image, `${c.name} has an image`);
    }
  });

  for (const pod of loadManifest(join(EXAMPLES, file))) {
    const missing = missingFeatures(pod, available);
    const skip = NOT_ROOT || (missing.length > 0 && `needs baton ${missing.join(", ")}, not in this bundle yet`);

    test(`examples/${file} runs to Succeeded, every container exits 0, the steps in order`, { skip, timeout: 180_000 }, async () => {
      const result = await run(pod, { imageEnv: EXAMPLE_ENV });
      const failed = [...result.initContainers, ...result.containers].filter((c) => c.exitCode !== 0);
      assert.deepEqual(failed.map((c) => `${c.name}: ${c.exitCode} ${readFileSync(c.logFile, "utf8")}`), []);
      assert.equal(result.phase, "Succeeded");
      assertChainInOrder(result, /wait[-_]file/.test(JSON.stringify(pod.document)));
      for (const c of result.containers) {
        for (const e of c.events.filter((e) => e.event === "post")) assert.ok(!String(e.file).endsWith(".err"), `${c.name} wrote ${e.file}`);
      }
      for (const c of result.containers.filter((c) => c.events.some((e) => e.event === "start" && e.mode === "sidecar"))) {
        const waitsForStop = c.events.some((e) => e.event === "waiting");
        if (waitsForStop) assert.ok(eventOf(c, "stopping"), `sidecar ${c.name} was stopped by its stop file`);
      }
      if (pod.name === "build-and-test") {
        // The result travels: step-fetch's commit is in its termination message and step-build read it.
        const fetch = byName(result, "step-fetch");
        const commit = (JSON.parse(fetch.message) as { key: string; value: string }[]).find((r) => r.key === "commit")?.value;
        assert.match(commit ?? "", /^[0-9a-f]{12}$/);
        assert.match(readFileSync(byName(result, "step-build").logFile, "utf8"), new RegExp(`building commit ${commit}`));
        assert.ok(eventOf(byName(result, "web"), "stopping"), "the web sidecar was stopped by the last post file");
      }
      if (pod.name === "native-sidecars") {
        // The kubelet's order: the sidecar is up (its startup probe passed) before any step starts, and is stopped
        // only after the last step has ended; baton still chains the steps and carries the result.
        const web = byName(result, "web");
        const steps = result.containers;
        assert.equal(web.sidecar, true);
        assert.ok(steps.every((c) => (c.createdAt ?? 0) >= web.startedAt!), "no step was created before the sidecar started");
        assert.ok(steps.every((c) => c.finishedAt! <= web.finishedAt!), "the sidecar outlived every step");
        const fetch = byName(result, "step-fetch");
        const commit = (JSON.parse(fetch.message) as { key: string; value: string }[]).find((r) => r.key === "commit")?.value;
        assert.match(commit ?? "", /^[0-9a-f]{12}$/);
        assert.match(readFileSync(byName(result, "step-test").logFile, "utf8"), new RegExp(`tests passed for commit ${commit}`));
      }
      if (pod.kind === "Job") {
        const stopUrl = eventOf(byName(result, "proxy-stopper"), "stop-url");
        assert.equal(stopUrl?.status, 200, "the killer reached the proxy's /quitquitquit");
      }
    });

    if (pod.spec.containers.some((c) => c.name === "step-build")) {
      // The failure takes the same path in every example: make check plays it in one (a pod run is ~2.5 s of CPU).
      const once = file === "pipeline-pod.yaml" ? false : SKIP_REPEAT_WHEN_QUICK;
      test(`examples/${file} with a failing step-build ends Failed: the last step skipped, sidecars still stopped`, { skip: skip || once, timeout: 180_000 }, async () => {
        const result = await run(pod, { imageEnv: EXAMPLE_ENV, env: [{ container: "step-build", name: "BREAK_BUILD", value: "true" }] });
        assert.equal(result.phase, "Failed");
        const build = byName(result, "step-build");
        assert.equal(build.exitCode, 1);
        assert.ok(build.events.some((e) => e.event === "post" && String(e.file).endsWith(".err")), "step-build wrote its .err post file");
        const last = byName(result, "step-test");
        assert.notEqual(last.exitCode, 0);
        assert.ok(eventOf(last, "skipped"), "step-test was skipped");
        assert.equal(eventOf(last, "command"), undefined, "step-test did not run its command");
        for (const c of [...result.initContainers, ...result.containers].filter((c) => c.sidecar)) {
          assert.equal(c.exitCode, 0, `native sidecar ${c.name} was stopped after the steps and ended cleanly`);
          assert.ok(c.finishedAt! >= last.finishedAt!, `native sidecar ${c.name} outlived the last step`);
        }
        for (const c of result.containers.filter((c) => !c.name.startsWith("step-"))) {
          assert.equal(c.exitCode, 0, `sidecar ${c.name} stopped cleanly`);
          if (c.events.some((e) => e.event === "start" && e.mode === "sidecar")) assert.ok(eventOf(c, "stopping"), `sidecar ${c.name} saw the .err stop file`);
        }
      });
    }
  }
}

const PROBE_POD = `
apiVersion: v1
kind: Pod
metadata: { name: probe }
spec:
  restartPolicy: Never
  volumes: [{ name: run, emptyDir: {} }]
  initContainers:
    - name: prepare
      image: busybox
      command: ["sh", "-c", "echo prepared > /tekton/run/prepared"]
      volumeMounts: [{ name: run, mountPath: /tekton/run }]
  containers:
    - name: look
      image: busybox
      command: ["sh", "-c"]
      args:
        - echo "pid=$$$$ host=$(hostname)"; cat /tekton/run/prepared; echo "$(GREETING)" > /dev/termination-log
      env: [{ name: GREETING, value: "all good" }]
      volumeMounts: [{ name: run, mountPath: /tekton/run }]
    - name: other
      image: busybox
      command: ["sh", "-c", "echo pid=$$$$; exit 3"]
      terminationMessagePath: /var/run/podrunner-test/message
      terminationMessagePolicy: FallbackToLogsOnError
`;

test("the runner: PID 1 each, an emptyDir at a path the host lacks, termination messages, the host untouched", { skip: NOT_ROOT, timeout: 60_000 }, async () => {
  const [pod] = parseManifest(PROBE_POD);
  const hostHad = ["/tekton", "/run/podrunner-test"].filter((p) => existsSync(p));
  const result = await run(pod!);
  assert.equal(result.phase, "Failed"); // "other" exits 3
  assert.equal(byName(result, "prepare").exitCode, 0);
  const look = byName(result, "look");
  assert.equal(look.exitCode, 0);
  assert.equal(readFileSync(look.logFile, "utf8"), "pid=1 host=probe\nprepared\n");
  assert.equal(look.message, "all good\n");
  const other = byName(result, "other");
  assert.equal(other.exitCode, 3);
  assert.equal(other.reason, "Error");
  assert.equal(other.message, "pid=1\n"); // nothing written to the message file: the log tail stands in
  for (const path of ["/tekton", "/run/podrunner-test"].filter((p) => !hostHad.includes(p))) {
    assert.ok(!existsSync(path), `the runner made ${path} inside the containers only, not on the host`);
  }

  const lines = drawTerminal(result, { color: false });
  for (const name of ["prepare (init)", "look", "other"]) assert.ok(lines.some((l) => l.startsWith(name)), `a bar for ${name}`);
  const svg = drawSvg(result);
  assert.match(svg, /^<svg [^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  for (const name of ["prepare (init)", "look", "other", "Failed"]) assert.ok(svg.includes(name), `the SVG names ${name}`);
});

test("a failing init container fails the pod, and no container starts", { skip: NOT_ROOT, timeout: 60_000 }, async () => {
  const [pod] = parseManifest(`
apiVersion: v1
kind: Pod
metadata: { name: init-fails }
spec:
  restartPolicy: Never
  initContainers:
    - { name: first, image: busybox, command: ["sh", "-c", "exit 7"] }
    - { name: second, image: busybox, command: ["true"] }
  containers:
    - { name: main, image: busybox, command: ["true"] }
`);
  const result = await run(pod!);
  assert.equal(result.phase, "Failed");
  assert.equal(byName(result, "first").exitCode, 7);
  for (const name of ["second", "main"]) {
    assert.equal(byName(result, name).startedAt, undefined);
    assert.equal(byName(result, name).reason, "PodInitializing");
  }
});

test("activeDeadlineSeconds: SIGTERM to each PID 1, SIGKILL after the grace period, pod Failed with DeadlineExceeded", { skip: NOT_ROOT, timeout: 60_000 }, async () => {
  const [pod] = parseManifest(`
apiVersion: v1
kind: Pod
metadata: { name: deadline }
spec:
  restartPolicy: Never
  activeDeadlineSeconds: 1
  terminationGracePeriodSeconds: 1
  containers:
    - { name: stubborn, image: busybox, command: ["sh", "-c", "trap '' TERM; sleep 60"] }
    - { name: polite, image: busybox, command: ["sleep", "60"] }
`);
  const result = await run(pod!, { deadlineSeconds: undefined });
  assert.equal(result.phase, "Failed");
  assert.equal(result.reason, "DeadlineExceeded");
  assert.equal(byName(result, "stubborn").exitCode, 137);
  // sleep as PID 1 has no SIGTERM handler, so the kernel ignores SIGTERM for it: it too goes on to SIGKILL.
  assert.equal(byName(result, "polite").exitCode, 137);
});

test("the podrunner command prints the live view and the timeline, and exits by the expected phase", { skip: NOT_ROOT || (missingFeatures(loadManifest(join(EXAMPLES, "steps-pod.yaml"))[0]!, available).length > 0 && "needs step mode"), timeout: 120_000 }, async () => {
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/podrunner/main.ts", "--quiet-logs", "--expect", "Failed", "--env", "step-build:BREAK_BUILD=true", "examples/steps-pod.yaml"], {
    cwd: REPO,
    env: { ...process.env, PATH: BIN_PATH, NO_COLOR: "1", TMPDIR: RUNS },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (out += d));
  const code = await new Promise<number | null>((done) => child.on("close", done));
  assert.equal(code, 0, out);
  assert.match(out, /step-build +command exited, code 1/);
  assert.match(out, /step-test +skipped: found \/baton\/run\/1\/out\.err/);
  assert.match(out, /^step-test +│.*│ skipped, exit 1/m);
  assert.match(out, /pod three-steps: Failed/);
  const svg = /^timeline: (.+\.svg)$/m.exec(out)?.[1];
  assert.ok(svg && existsSync(svg), "the SVG path is printed and the file exists");
});

test("a runner that is killed leaves no container and no pod sandbox behind", { skip: NOT_ROOT, timeout: 60_000 }, async (t) => {
  const runDir = join(RUNS, "killed");
  const manifest = join(RUNS, "killed.yaml");
  writeFileSync(manifest, `
apiVersion: v1
kind: Pod
metadata: { name: killed-runner }
spec:
  restartPolicy: Never
  containers:
    - { name: forever, image: busybox, command: ["sleep", "3600"] }
`);
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/podrunner/main.ts", "--run-dir", runDir, manifest], {
    cwd: REPO,
    env: { ...process.env, NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
  t.after(() => void child.kill("SIGKILL"));
  await waitFor(() => (/forever +container started/.test(out) ? true : undefined), "the container to start");
  // The pod's processes: the container's (its command line names the run folder) and every process in the pod's
  // network namespace (the sandbox holder among them).
  const pids = () => readdirSync("/proc").filter((p) => /^\d+$/.test(p));
  // "started" is written just before `unshare --fork`: the test kills the runner once the command runs, as a runner
  // killed between the fork and the child's PR_SET_PDEATHSIG leaves that child behind (the runner's own window).
  await waitFor(() => (pids().some((p) => readOr(`/proc/${p}/cmdline`, "") === "sleep\x003600\x00") ? true : undefined), "the command to run");
  const netns = (pid: string) => {
    try {
      return readlinkSync(`/proc/${pid}/ns/net`);
    } catch {
      return undefined;
    }
  };
  const container = pids().filter((p) => readOr(`/proc/${p}/cmdline`, "").includes(join(runDir, "killed-runner", "containers")));
  assert.ok(container.length > 0, "the container runs");
  const podNet = netns(container[0]!);
  assert.notEqual(podNet, netns(String(process.pid)), "the pod has a network namespace of its own");
  const ours = new Set([...container, ...pids().filter((p) => netns(p) === podNet)]);
  // Looked for again at each look: a process of the pod started after the first look counts too.
  const alive = () => [...new Set([...ours, ...pids().filter((p) => netns(p) === podNet)])].filter(isRunning);
  const exited = new Promise((done) => child.on("close", done));
  child.kill("SIGKILL");
  await exited;
  await waitFor(() => (alive().length === 0 ? true : undefined), "every process of the pod to be gone");
});

test("native sidecars: the next container waits for the startup probe; a sidecar's own exit code does not fail the pod", { skip: NOT_ROOT, timeout: 60_000 }, async () => {
  const [pod] = parseManifest(`
apiVersion: v1
kind: Pod
metadata: { name: native }
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  volumes: [{ name: run, emptyDir: {} }]
  initContainers:
    - name: server
      image: python:3.12-slim
      restartPolicy: Always
      startupProbe: { tcpSocket: { port: 7380 }, periodSeconds: 1, failureThreshold: 20 }
      command: ["sh", "-c", "sleep 1; date +%s%N > /run/x/listening; exec python3 -m http.server --bind 127.0.0.1 7380"]
      volumeMounts: [{ name: run, mountPath: /run/x }]
  containers:
    - name: main
      image: busybox
      command: ["sh", "-c", "date +%s%N > /run/x/main; python3 -c 'import urllib.request; urllib.request.urlopen(\\"http://127.0.0.1:7380/\\")'"]
      volumeMounts: [{ name: run, mountPath: /run/x }]
`);
  const result = await run(pod!);
  const server = byName(result, "server");
  const main = byName(result, "main");
  assert.equal(main.exitCode, 0, readFileSync(main.logFile, "utf8"));
  assert.equal(server.sidecar, true);
  assert.equal(server.exitCode, 137); // as PID 1 without a handler python ignores SIGTERM: SIGKILL after the grace period
  assert.equal(result.phase, "Succeeded");
  const volume = join(result.runDir, "volumes/run");
  assert.ok(BigInt(readFileSync(join(volume, "main"), "utf8")) > BigInt(readFileSync(join(volume, "listening"), "utf8")), "main started after the probe saw the port");
  assert.ok(server.finishedAt! >= main.finishedAt!);
  assert.ok(drawTerminal(result, { color: false }).some((l) => l.startsWith("server (sidecar)")), "the timeline labels the native sidecar");
});

test("native sidecars: a startup probe that never passes fails the pod, and no container starts", { skip: NOT_ROOT, timeout: 60_000 }, async () => {
  const [pod] = parseManifest(`
apiVersion: v1
kind: Pod
metadata: { name: never-started }
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  initContainers:
    - name: silent
      image: busybox
      restartPolicy: Always
      startupProbe: { httpGet: { path: /, port: 7381 }, periodSeconds: 1, failureThreshold: 2 }
      command: ["sleep", "1000"]
  containers:
    - { name: main, image: busybox, command: ["true"] }
`);
  const result = await run(pod!);
  assert.equal(result.phase, "Failed");
  assert.equal(byName(result, "main").reason, "PodInitializing");
  assert.equal(byName(result, "main").startedAt, undefined);
  assert.ok(byName(result, "silent").finishedAt, "the sidecar was stopped");
});

test("the runner refuses restartPolicy on a regular container and exec startup probes, as it cannot run them", { skip: NOT_ROOT }, async () => {
  const [onContainer] = parseManifest(`
apiVersion: v1
kind: Pod
metadata: { name: bad }
spec:
  restartPolicy: Never
  containers: [{ name: main, image: busybox, restartPolicy: Always, command: ["true"] }]
`);
  await assert.rejects(run(onContainer!), /restartPolicy is for init containers only/);
  const [execProbe] = parseManifest(`
apiVersion: v1
kind: Pod
metadata: { name: bad }
spec:
  restartPolicy: Never
  initContainers: [{ name: s, image: busybox, restartPolicy: Always, command: ["sleep", "9"], startupProbe: { exec: { command: ["true"] } } }]
  containers: [{ name: main, image: busybox, command: ["true"] }]
`);
  await assert.rejects(run(execProbe!), /only tcpSocket and httpGet startup probes/);
});
