// baton mounted from its image (an `image:` volume, Kubernetes' ImageVolume feature: beta in 1.34, on in cluster.sh
// with containerd 2) against the copy an init container makes into an emptyDir (the init-container pattern of
// docs/standalone.md, as Tekton places its entrypoint): a plain Pod either way, a busybox step run by baton. N pods
// a side, one at a time, alternating. Per pod: the time from its creation (the request sent) to the watch's event of
// its phase Succeeded, and what it adds to the node's disk (its kubelet folder, the emptyDir in it, and the
// containerd snapshots of its containers and of its image volume). Printed, not compared: both sides must run the
// step and end Succeeded; each must show its mount (the volume: read-only overlay; the copy: the emptyDir).
import { before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { CONTAINERD_SOCK, CTR, RUNTIME, STATE, freshNamespace, kubectl, type Json } from "./kube.js";
import { BATON_IMAGE, importBatonImage } from "./images.js";
import { Watch, create, spread } from "./watch.js";

const BUSYBOX = "baton.local/busybox:1";
const N = Number(process.env.E2E_K8S_IMAGE_VOLUME_PODS ?? 5);
const run = process.env.E2E_K8S_ONLY === undefined || new RegExp(process.env.E2E_K8S_ONLY).test("image volume");

type Side = "copy" | "volume";
// The step prints the mount baton runs from: its file system type and options, from the container's mountinfo.
const step = (dir: string) => ({
  name: "step",
  image: BUSYBOX,
  command: [`${dir}/baton`, "--"],
  args: ["sh", "-c", `awk -v m=${dir} '$5 == m { print "mount:", $(NF-2), substr($6, 1, 2) }' /proc/self/mountinfo; echo step ran`],
});

function podOf(side: Side, name: string): Json {
  if (side === "copy") {
    return {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name },
      spec: {
        restartPolicy: "Never",
        volumes: [{ name: "baton-bin", emptyDir: {} }],
        initContainers: [{ name: "prepare", image: BATON_IMAGE, command: ["baton", "init", "/baton-bin/baton"], volumeMounts: [{ name: "baton-bin", mountPath: "/baton-bin" }] }],
        containers: [{ ...step("/baton-bin"), volumeMounts: [{ name: "baton-bin", mountPath: "/baton-bin" }] }],
      },
    };
  }
  // The image's /baton folder (the standalone build) at /baton: subPath of an image volume (beta in 1.33).
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name },
    spec: {
      restartPolicy: "Never",
      volumes: [{ name: "baton", image: { reference: BATON_IMAGE, pullPolicy: "IfNotPresent" } }],
      containers: [{ ...step("/baton"), volumeMounts: [{ name: "baton", mountPath: "/baton", subPath: "baton" }] }],
    },
  };
}

const du = (...paths: string[]) => Number(execFileSync("du", ["-scx", "--block-size=1", ...paths], { encoding: "utf8" }).trim().split("\n").pop()!.split(/\s+/)[0]);

/** containerd's snapshots (key -> bytes used) of the k8s.io namespace. */
function snapshotUsage(): Map<string, number> {
  const out = execFileSync(CTR, ["--address", CONTAINERD_SOCK, "-n", "k8s.io", "snapshots", "usage", "-b"], { encoding: "utf8" });
  return new Map(out.split("\n").slice(1).map((l) => l.trim().split(/\s+/)).filter((f) => f.length >= 2).map((f) => [f[0], Number(f[1])]));
}

interface PodFigure {
  side: Side;
  /** ms from the create request to the watch's Succeeded. */
  ms: number;
  /** The pod's kubelet folder (volumes, the emptyDir among them), bytes. */
  podDir: number;
  /** Its containers' writable snapshots, bytes. */
  containers: number;
  log: string;
}

const figures: PodFigure[] = [];
const imageVolumeSnapshots: number[] = [];
let emptyDirBytes = 0;
let failure: Error | undefined;

async function runPod(watch: Watch, namespace: string, side: Side, i: number): Promise<void> {
  const name = `${side}-${i}`;
  const sent = await create(`/api/v1/namespaces/${namespace}/pods`, podOf(side, name));
  const ended = await watch.until((e) => e.object.metadata?.name === name && ["Succeeded", "Failed"].includes(e.object.status?.phase), 180, `pod ${name}`);
  const pod = ended.object;
  assert.equal(pod.status.phase, "Succeeded", `${name}: ${JSON.stringify(pod.status)}`);
  const usage = snapshotUsage();
  const ids = [...(pod.status.initContainerStatuses ?? []), ...(pod.status.containerStatuses ?? [])].map((s: Json) => String(s.containerID).replace(/^containerd:\/\//, ""));
  const podDir = join(STATE, "kubelet/pods", pod.metadata.uid);
  if (side === "copy") emptyDirBytes = du(join(podDir, "volumes/kubernetes.io~empty-dir/baton-bin"));
  figures.push({
    side,
    ms: ended.at - sent,
    podDir: du(podDir),
    containers: ids.reduce((sum, id) => sum + (usage.get(id) ?? 0), 0),
    log: kubectl(["logs", "-n", namespace, name, "-c", "step"]),
  });
}

before(async () => {
  if (!run || RUNTIME !== "containerd2") return;
  try {
    importBatonImage();
    const namespace = freshNamespace("iv-image-volume");
    const watch = await Watch.open(`/api/v1/namespaces/${namespace}/pods`);
    const before = snapshotUsage();
    try {
      for (let i = 0; i < N; i++) for (const side of ["copy", "volume"] as const) await runPod(watch, namespace, side, i);
      // The image volumes' snapshots (containerd keys them by their mount point, under its state's image-volumes/),
      // one a pod: what is left after the pods of both sides.
      for (const [key, bytes] of snapshotUsage()) if (key.includes("/image-volumes/") && !before.has(key)) imageVolumeSnapshots.push(bytes);
    } finally {
      watch.close();
      kubectl(["delete", "namespace", namespace, "--wait=false"]);
    }
  } catch (e) {
    failure = e as Error;
  }
}, { timeout: 1_200_000 });

const mib = (b: number) => (b / 1048576).toFixed(b < 1048576 ? 3 : 1);

test("image volume: baton from its image against the copy", (t) => {
  if (!run) return t.skip("E2E_K8S_ONLY");
  if (RUNTIME !== "containerd2") return t.skip(`the node's runtime is ${RUNTIME} (containerd 1.6 mounts no image as a volume): BATON_K8S_RUNTIME=containerd2`);
  if (failure) throw failure;
  const of = (side: Side) => figures.filter((f) => f.side === side);
  for (const f of figures) {
    assert.match(f.log, /step ran/, `${f.side}: the step's log`);
    // The volume: an overlay (the image's snapshot), read-only in the container; the copy: the emptyDir's folder.
    assert.match(f.log, f.side === "volume" ? /^mount: overlay ro$/m : /^mount: \S+ rw$/m, `${f.side}: the mount baton ran from: ${f.log}`);
  }
  assert.equal(imageVolumeSnapshots.length, N, "one image-volume snapshot a volume pod");
  const lines = (["copy", "volume"] as const).map((side) => {
    const ms = spread(of(side).map((f) => f.ms));
    const perPod = of(side).map((f) => f.podDir + f.containers + (side === "volume" ? Math.max(...imageVolumeSnapshots) : 0));
    return `${side}: start to Succeeded (ms) median ${ms.median.toFixed(0)} (${ms.min.toFixed(0)}-${ms.max.toFixed(0)}), node disk a pod (MiB) ${mib(spread(perPod).median)}`;
  });
  console.log(`e2e-k8s: image volume (${N} pods a side): ${lines.join("; ")}; the copy's emptyDir ${mib(emptyDirBytes)} MiB, an image volume's own snapshot ${mib(Math.max(...imageVolumeSnapshots))} MiB`);
});
