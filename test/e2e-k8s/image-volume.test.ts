// baton mounted from its image (an `image:` volume, Kubernetes' ImageVolume feature: beta in 1.34, on in cluster.sh
// with containerd 2) against the copy an init container makes into an emptyDir (the init-container pattern of
// docs/standalone.md, as Tekton places its entrypoint): a plain Pod either way, a busybox step run by baton. N pods a
// side, one at a time, alternating, each left running until the end. Per pod: the time from its creation to its
// step's command running, on the node's clock (/proc/uptime, read here before the create request and by the command
// first thing: 10 ms steps, where the API's times are whole seconds and the kubelet reports a container's state only
// at its next relist, every second), and what it adds to the node's disk while it runs (its kubelet folder, the
// emptyDir in it, the containerd snapshots of its containers and of its image volume). Printed, not compared: both
// sides must run the step; each must show its mount (the volume: read-only overlay; the copy: the emptyDir).
import { before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CONTAINERD_SOCK, CTR, RUNTIME, STATE, freshNamespace, getJson, kubectl, waitUntil, type Json } from "./kube.js";
import { BATON_IMAGE, importBatonImage } from "./images.js";
import { create, spread } from "./watch.js";

const NAME = "image volume";
const BUSYBOX = "baton.local/busybox:1";
const N = Number(process.env.E2E_K8S_IMAGE_VOLUME_PODS ?? 5);
const selected = new RegExp(process.env.E2E_K8S_ONLY ?? "").test(NAME);

type Side = "copy" | "volume";

// The step prints the node's uptime as it starts, then the mount baton runs from (its file system type and options,
// from the container's mountinfo), and stays (its pod's volumes with it) until the namespace goes.
const step = (dir: string) => ({
  name: "step",
  image: BUSYBOX,
  command: [`${dir}/baton`, "--"],
  args: ["sh", "-c", `read up idle < /proc/uptime; echo "started: $up"; awk -v m=${dir} '$5 == m { print "mount:", $(NF-2), substr($6, 1, 2) }' /proc/self/mountinfo; echo step ran; exec sleep 3600`],
});

function podOf(side: Side, name: string): Json {
  const spec =
    side === "copy"
      ? {
          volumes: [{ name: "baton-bin", emptyDir: {} }],
          initContainers: [{ name: "prepare", image: BATON_IMAGE, command: ["baton", "init", "/baton-bin/baton"], volumeMounts: [{ name: "baton-bin", mountPath: "/baton-bin" }] }],
          containers: [{ ...step("/baton-bin"), volumeMounts: [{ name: "baton-bin", mountPath: "/baton-bin" }] }],
        }
      : {
          // The image's /baton folder (the standalone build) at /baton: the subPath of an image volume (beta in 1.33).
          volumes: [{ name: "baton", image: { reference: BATON_IMAGE, pullPolicy: "IfNotPresent" } }],
          containers: [{ ...step("/baton"), volumeMounts: [{ name: "baton", mountPath: "/baton", subPath: "baton" }] }],
        };
  return { apiVersion: "v1", kind: "Pod", metadata: { name }, spec: { restartPolicy: "Never", terminationGracePeriodSeconds: 1, ...spec } };
}

const uptime = () => Number(readFileSync("/proc/uptime", "utf8").split(" ")[0]);
const du = (path: string) => Number(execFileSync("du", ["-sx", "--block-size=1", path], { encoding: "utf8" }).split(/\s+/)[0]);

/** containerd's snapshots (key -> bytes used) of the k8s.io namespace. */
function snapshotUsage(): Map<string, number> {
  const out = execFileSync(CTR, ["--address", CONTAINERD_SOCK, "-n", "k8s.io", "snapshots", "usage", "-b"], { encoding: "utf8" });
  return new Map(out.split("\n").slice(1).map((l) => l.trim().split(/\s+/)).filter((f) => f.length >= 2).map((f) => [f[0], Number(f[1])]));
}

/** The image volumes' snapshots: containerd keys each by its mount point, under its state's image-volumes/. */
const imageVolumes = () => [...snapshotUsage()].filter(([key]) => key.includes("/image-volumes/"));

interface PodFigure {
  side: Side;
  /** Seconds from the create request to the step's command running, on the node's clock. */
  start: number;
  /** Bytes the pod adds to the node's disk while it runs: its kubelet folder, its containers' and its image volume's snapshots. */
  disk: number;
  log: string;
}

const figures: PodFigure[] = [];
let emptyDirBytes = 0;
let volumeSnapshotBytes = 0;
let failure: Error | undefined;

async function runPod(namespace: string, side: Side, i: number): Promise<void> {
  const name = `${side}-${i}`;
  const volumesBefore = new Set(imageVolumes().map(([key]) => key));
  const sent = uptime();
  await create(`/api/v1/namespaces/${namespace}/pods`, podOf(side, name));
  let log = "";
  const deadline = Date.now() + 180_000;
  while (!log.includes("step ran")) {
    if (Date.now() > deadline) throw new Error(`pod ${name}: its step has not run after 180 s: ${JSON.stringify(getJson("pod", name, namespace).status)}`);
    await new Promise((r) => setTimeout(r, 100));
    try {
      log = kubectl(["logs", "-n", namespace, name, "-c", "step"]);
    } catch {
      // not started yet
    }
  }
  const started = Number(/^started: ([\d.]+)$/m.exec(log)?.[1]);
  const pod = getJson("pod", name, namespace);
  const usage = snapshotUsage();
  const ids = [...(pod.status.initContainerStatuses ?? []), ...(pod.status.containerStatuses ?? [])].map((s: Json) => String(s.containerID).replace(/^containerd:\/\//, ""));
  const podDir = join(STATE, "kubelet/pods", pod.metadata.uid);
  const volume = imageVolumes().filter(([key]) => !volumesBefore.has(key)).reduce((sum, [, bytes]) => sum + bytes, 0);
  if (side === "copy") emptyDirBytes = du(join(podDir, "volumes/kubernetes.io~empty-dir/baton-bin"));
  else volumeSnapshotBytes = volume;
  figures.push({ side, start: started - sent, disk: du(podDir) + ids.reduce((sum, id) => sum + (usage.get(id) ?? 0), 0) + volume, log });
}

before(async () => {
  if (!selected || RUNTIME !== "containerd2") return;
  try {
    importBatonImage();
    const namespace = freshNamespace("iv-image-volume");
    await waitUntil("serviceaccount", "default", namespace, () => true, 60);
    try {
      for (let i = 0; i < N; i++) for (const side of ["copy", "volume"] as const) await runPod(namespace, side, i);
    } finally {
      kubectl(["delete", "namespace", namespace, "--wait=false"]);
    }
  } catch (e) {
    failure = e as Error;
  }
}, { timeout: 1_200_000 });

const mib = (b: number) => (b / 1048576).toFixed(b < 1048576 ? 3 : 1);

test(`${NAME}: baton from its image against the copy`, (t) => {
  if (!selected) return t.skip("E2E_K8S_ONLY");
  if (RUNTIME !== "containerd2") return t.skip(`the node's runtime is ${RUNTIME} (containerd 1.6 mounts no image as a volume): BATON_K8S_RUNTIME=containerd2`);
  if (failure) throw failure;
  assert.equal(figures.length, 2 * N);
  for (const f of figures) {
    // The volume: an overlay (the image's snapshot), read-only in the container; the copy: the emptyDir's folder.
    assert.match(f.log, f.side === "volume" ? /^mount: overlay ro$/m : /^mount: \S+ rw$/m, `${f.side}: the mount baton ran from: ${f.log}`);
    assert.ok(f.start > 0 && f.start < 180, `${f.side}: start ${f.start} s`);
  }
  const of = (side: Side) => figures.filter((f) => f.side === side);
  const lines = (["copy", "volume"] as const).map((side) => {
    const start = spread(of(side).map((f) => f.start * 1000));
    const disk = spread(of(side).map((f) => f.disk));
    return `${side}: creation to the step's command (ms) median ${start.median.toFixed(0)} (${start.min.toFixed(0)}-${start.max.toFixed(0)}), node disk a pod (MiB) median ${mib(disk.median)} (${mib(disk.min)}-${mib(disk.max)})`;
  });
  console.log(`e2e-k8s: ${NAME} (${N} pods a side): ${lines.join("; ")}; the copy's emptyDir ${mib(emptyDirBytes)} MiB, an image volume's own snapshot ${mib(volumeSnapshotBytes)} MiB`);
});
