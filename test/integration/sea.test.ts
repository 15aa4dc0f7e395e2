// The standalone folder from `make sea` (dist/baton-linux-x64) as an image gets it: started in a root that holds only
// a static busybox (no Node, no glibc), with a hostile NODE_OPTIONS, poked with SIGUSR1, in sidecar mode (code the
// bundle loads lazily), and copied by `baton init`. Reaping with the shipped addon: reaper.test.ts.
import { test, before } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import {
  BATON, IS_ROOT, STANDALONE, STANDALONE_DIR, catches, cleanEnv, eventSeen, existsSync, join, readJson, readOr, runBaton,
  listeningPorts, startBaton, tempDir, waitFor,
} from "./helpers.js";
import { busyboxRoot as makeBusyboxRoot } from "./busybox-root.js";

const skip = !IS_ROOT && "needs root for a PID namespace and a root folder";
const { version } = JSON.parse(readFileSync(resolve(import.meta.dirname, "../../package.json"), "utf8")) as { version: string };

before(() => {
  assert.ok(existsSync(STANDALONE), `${STANDALONE} is missing: run \`make sea\``);
});

/** A root folder like a scratch image: /bin/busybox (static), /baton (the copied folder), empty /proc and /tmp. */
const busyboxRoot = () => makeBusyboxRoot(STANDALONE_DIR);

/** A program's absolute path on this machine (for a child whose PATH is the test root's). */
function hostProgram(name: string): string {
  return execFileSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" }).trim();
}


test("the standalone baton prints its version", async () => {
  const exit = await runBaton(["--version"], { baton: [STANDALONE] });
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(exit.stdout, `baton ${version}\n`);
  assert.equal(exit.stderr, "");
});

test("the folder carries the licences of what it ships: baton's, Node's, glibc's, libstdc++'s, libgcc's and the CEL packages'", () => {
  const licenses = join(STANDALONE_DIR, "lib/licenses");
  assert.deepEqual(readdirSync(licenses).sort(), ["baton", "bufbuild-cel", "bufbuild-re2", "libc6", "libgcc-s1", "libstdc++6", "node"]);
  assert.match(readFileSync(join(licenses, "bufbuild-cel"), "utf8"), /^@bufbuild\/cel [\d.]+: Apache-2\.0\n/);
  assert.match(readFileSync(join(licenses, "bufbuild-re2"), "utf8"), /MIT License/);
  assert.equal(readFileSync(join(licenses, "baton"), "utf8"), readFileSync(resolve(import.meta.dirname, "../../LICENSE"), "utf8"));
  assert.match(readFileSync(join(licenses, "baton"), "utf8"), /Apache License\s+Version 2\.0, January 2004[\s\S]*END OF TERMS AND CONDITIONS/);
  assert.match(readFileSync(join(licenses, "node"), "utf8"), /Node\.js is licensed for use as follows/);
  for (const pkg of ["libc6", "libgcc-s1", "libstdc++6"]) assert.match(readFileSync(join(licenses, pkg), "utf8"), /[Cc]opyright/, pkg);
});

test("a three-step chain runs, each step as PID 1, in a root with only a static busybox", { skip }, async (t) => {
  const root = busyboxRoot();
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const shared = join(root, "tmp"); // the pod's shared volume, /tmp inside the root
  const step = (name: string, wait: string | undefined, options: Parameters<typeof startBaton>[1], path?: string) => {
    const baton = startBaton(
      [
        ...(wait ? ["--wait-file", `/tmp/${wait}`] : []),
        "--post-file", `/tmp/${name}`,
        "--", "/bin/busybox", "sh", "-c", `echo "${name} parent=$PPID" >> /tmp/log`,
      ],
      { baton: ["/baton/baton"], ...options, env: cleanEnv({ BATON_EVENTS: `/tmp/events-${name}`, ...(path ? { PATH: path } : {}) }) },
    );
    t.after(() => baton.kill());
    return baton;
  };
  // Later steps start first, so they really wait. Step 3 enters the root with chroot and no /proc mounted, and is
  // started by name: the launcher cannot read /proc/self/exe and finds its folder through PATH.
  const third = step(
    "three", "two",
    { prefix: [hostProgram("unshare"), "--pid", "--fork", "--kill-child", hostProgram("chroot"), root], baton: ["baton"] },
    "/bin:/baton",
  );
  const second = step("two", "one", { pid1: true, root });
  await eventSeen(join(shared, "events-three"), "waiting");
  await eventSeen(join(shared, "events-two"), "waiting");
  const first = step("one", undefined, { pid1: true, root });

  for (const [name, baton] of [["one", first], ["two", second], ["three", third]] as const) {
    const exit = await baton.exited;
    assert.equal(exit.code, 0, `step ${name}: ${exit.stderr}`);
    assert.equal(readJson(join(shared, name)).exitCode, 0);
  }
  assert.equal(readFileSync(join(shared, "log"), "utf8"), "one parent=1\ntwo parent=1\nthree parent=1\n");
  assert.deepEqual(readdirSync(root).sort(), ["baton", "bin", "proc", "tmp"], "the root holds no Node and no libc");
  assert.deepEqual(readdirSync(join(root, "bin")), ["busybox"]);
});

test("NODE_OPTIONS from the image changes nothing for baton and reaches the command intact", async () => {
  const env = cleanEnv({ NODE_OPTIONS: "--require /nonexistent.js", STEP: "x" });
  // The same environment breaks a plain Node (here: the bundle), so the test shows what the standalone build avoids.
  const plain = await runBaton(["--", "true"], { env });
  assert.notEqual(plain.code, 0);
  assert.match(plain.stderr, /nonexistent\.js/);

  const exit = await runBaton(["--", "env"], { baton: [STANDALONE], env });
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(exit.stderr, "");
  const childEnv = Object.fromEntries(exit.stdout.trim().split("\n").map((line) => line.split(/=(.*)/s).slice(0, 2)));
  assert.deepEqual(childEnv, env, "the command gets baton's environment unchanged (no LD_LIBRARY_PATH added)");
});

test("a waiting standalone baton turns V8's baseline compiler off through its addon, and says nothing of it", async () => {
  // The addon finds V8's SetFlagsFromString among the stripped binary's exported symbols (src/process/baseline-compiler.ts).
  const dir = tempDir();
  const events = join(dir, "events.jsonl");
  const baton = startBaton(["--wait-file", join(dir, "prev"), "--post-file", join(dir, "post"), "--", "true"], {
    baton: [STANDALONE],
    env: cleanEnv({ BATON_EVENTS: events }),
  });
  const trimmed = await eventSeen(events, "trimmed");
  assert.equal(trimmed.compilerOff, true);
  writeFileSync(join(dir, "prev"), "");
  const exit = await baton.exited;
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(exit.stderr, "");
});

test("SIGUSR1 to the standalone baton reaches the command and opens no inspector port", { skip }, async (t) => {
  // Control: the same probe sees the inspector that SIGUSR1 opens in a plain Node (any free port).
  const node = spawn(process.execPath, ["--inspect-port=0", "-e", "setInterval(() => {}, 1000)"], { stdio: ["ignore", "ignore", "pipe"] });
  t.after(() => node.kill("SIGKILL"));
  let nodeStderr = "";
  node.stderr!.setEncoding("utf8").on("data", (d: string) => (nodeStderr += d));
  await waitFor(() => (catches(node.pid!, 10) ? true : undefined), "plain Node's SIGUSR1 handler");
  node.kill("SIGUSR1");
  const port = await waitFor(() => /ws:\/\/127\.0\.0\.1:(\d+)\//.exec(nodeStderr)?.[1], "plain Node's inspector");
  assert.deepEqual(listeningPorts(node.pid!), [Number(port)]);

  const dir = tempDir();
  const command = `trap 'echo USR1 >> ${dir}/got' USR1; trap 'exit 0' TERM; echo > ${dir}/ready; while :; do sleep 0.02; done`;
  const baton = startBaton(["--", "sh", "-c", command], { pid1: true, baton: [STANDALONE] });
  t.after(() => baton.kill());
  const pid = await baton.hostPid();
  await waitFor(() => (existsSync(join(dir, "ready")) ? true : undefined), "the command's traps");
  process.kill(pid, "SIGUSR1");
  await waitFor(() => (readOr(join(dir, "got"), "").includes("USR1") ? true : undefined), "USR1 to reach the command");
  assert.deepEqual(listeningPorts(pid), []);
  process.kill(pid, "SIGTERM");
  const exit = await baton.exited;
  assert.equal(exit.code, 0, exit.stderr);
  assert.doesNotMatch(exit.stderr, /Debugger listening/);
});

test("sidecar mode, loaded lazily inside the bundle, works in the standalone build", async (t) => {
  const dir = tempDir();
  const events = join(dir, "events.jsonl");
  const baton = startBaton(["sidecar", "--stop-file", join(dir, "stop"), "--", "sleep", "1000"], {
    baton: [STANDALONE],
    env: cleanEnv({ BATON_EVENTS: events }),
  });
  t.after(() => baton.kill());
  await eventSeen(events, "command");
  writeFileSync(join(dir, "stop"), "");
  const exit = await baton.exited;
  assert.equal(exit.code, 0, exit.stderr); // a sidecar stopped on purpose succeeds
});

/** Every file under `dir` with its size, relative paths sorted: what a copy must reproduce. */
function listing(dir: string, prefix = ""): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true })
    .flatMap((entry) => {
      const path = join(prefix, entry.name);
      return entry.isDirectory() ? listing(dir, path) : [`${path} ${statSync(join(dir, path)).size}`];
    })
    .sort();
}

test("baton init DEST, run from the standalone build, copies the whole folder (but argoexec), and the copy runs", { skip }, async (t) => {
  // The init-container pattern: the image's folder (/baton) copies itself into a shared volume (/workspace/bin).
  const root = busyboxRoot();
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const init = await runBaton(["init", "/workspace/bin/baton"], { pid1: true, root, baton: ["/baton/baton"] });
  assert.equal(init.code, 0, init.stderr);
  // All but argoexec, which is for an Argo executor image (docs/argo.md), not for a step.
  assert.deepEqual(listing(join(root, "workspace/bin")), listing(STANDALONE_DIR).filter((f) => !f.startsWith("argoexec ")));
  assert.equal(statSync(join(root, "workspace/bin/baton")).mode & 0o777, 0o755);

  const step = await runBaton(["--", "/bin/busybox", "echo", "from the copy"], { pid1: true, root, baton: ["/workspace/bin/baton"] });
  assert.equal(step.code, 0, step.stderr);
  assert.equal(step.stdout, "from the copy\n");
});

// The largest folio, in pages, that holds a part of FILE in the page cache: maps it, touches each page, and follows each
// page's frame (/proc/self/pagemap) to its flags (/proc/kpageflags: compound head, compound tail). Root only.
const LARGEST_FOLIO = `import ctypes, mmap, struct, sys
f = open(sys.argv[1], 'rb'); m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
base = ctypes.addressof(ctypes.c_char.from_buffer(m)) // 4096
pages = (len(m) + 4095) // 4096
for i in range(pages): m[i * 4096]
pagemap = open('/proc/self/pagemap', 'rb'); flags = open('/proc/kpageflags', 'rb')
largest = run = 0
for i in range(pages):
    pagemap.seek((base + i) * 8); entry = struct.unpack('Q', pagemap.read(8))[0]
    flags.seek((entry & ((1 << 55) - 1)) * 8); kind = struct.unpack('Q', flags.read(8))[0] >> 15 & 3
    run = run + 1 if kind == 2 else 1
    largest = max(largest, run)
print(largest)`;

/** Frames' flags are root's to read, and a kernel may lack them (CONFIG_PROC_PAGE_MONITOR). */
const NO_KPAGEFLAGS = (() => {
  try {
    closeSync(openSync("/proc/kpageflags", "r"));
    return false;
  } catch {
    return "needs /proc/kpageflags (root, CONFIG_PROC_PAGE_MONITOR)";
  }
})();

test("baton init writes lib/baton-node in pieces a page fault maps no more of than of a file read from disk", { skip: NO_KPAGEFLAGS }, () => {
  // Written 1 MiB at a time, the copy sat in the page cache in 1 MiB folios (ext4 on Linux 6.16+, XFS), and each step
  // run from it mapped 74 MiB of it, not 46, and handed on ~2 ms later (docs/performance.md). On a file system or
  // kernel without large folios every folio is one page, and this holds trivially.
  const dest = join(tempDir(), "bin");
  execFileSync(STANDALONE, ["init", join(dest, "baton")]);
  const largest = Number(execFileSync("python3", ["-c", LARGEST_FOLIO, join(dest, "lib/baton-node")], { encoding: "utf8" }));
  assert.ok(largest >= 1 && largest <= 16, `the copy's page cache holds a folio of ${largest} pages (at most 16: 64 KiB, the fault-around window)`);
});

// Starts its arguments with SIGUSR1 blocked and pending (both survive exec): Node delivers it as soon as it unblocks
// SIGUSR1 for its inspector trigger, before any JavaScript runs. The start-up window, hit every time.
const PENDING_SIGUSR1 = `import os, signal, sys
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
os.kill(os.getpid(), signal.SIGUSR1)
os.execv(sys.argv[1], sys.argv[1:])`;

for (const [name, words] of [["the standalone build", [STANDALONE]], ["the bundle", [process.execPath, BATON]]] as const) {
  test(`${name}: a SIGUSR1 in the start-up window opens Node's inspector, and baton closes it again`, async (t) => {
    const dir = tempDir();
    const command = `echo > ${dir}/ready; while [ ! -e ${dir}/stop ]; do sleep 0.02; done`;
    const baton = startBaton(["--", "sh", "-c", command], { prefix: ["python3", "-c", PENDING_SIGUSR1], baton: [...words] });
    t.after(() => baton.kill());
    let stderr = "";
    baton.child.stderr!.on("data", (d: string) => (stderr += d));
    await waitFor(() => (stderr.includes("closed it") ? true : undefined), "baton to close the inspector");
    assert.match(stderr, /Debugger listening on ws:\/\/127\.0\.0\.1:9229\//, "the window was hit: Node opened the inspector");
    assert.deepEqual(listeningPorts(baton.child.pid!), []); // python exec'd baton: same pid
    await waitFor(() => (existsSync(join(dir, "ready")) ? true : undefined), "the command");
    writeFileSync(join(dir, "stop"), "");
    const exit = await baton.exited;
    assert.equal(exit.code, 0, exit.stderr);
  });
}

test("output capture runs its copy loop on the standalone build's Node 24: 8 MiB of stdout and 1 MiB of stderr reach the console and the files whole", async () => {
  const dir = tempDir();
  const script = 'yes 0123456789abcdef | head -c 8388608; yes fedcba9876543210 | head -c 1048576 >&2';
  const exit = await runBaton(
    ["--stdout-path", join(dir, "out.log"), "--stderr-path", join(dir, "err.log"), "--", "sh", "-c", script],
    { baton: [STANDALONE] },
  );
  assert.equal(exit.code, 0, exit.stderr.slice(0, 500));
  const expected = (line: string, size: number) => `${line}\n`.repeat(Math.ceil(size / (line.length + 1))).slice(0, size);
  const out = expected("0123456789abcdef", 8 * 2 ** 20);
  const err = expected("fedcba9876543210", 2 ** 20);
  assert.ok(exit.stdout === out, `console stdout: ${exit.stdout.length} bytes, expected ${out.length}`);
  assert.ok(exit.stderr === err, `console stderr: ${exit.stderr.length} bytes, expected ${err.length}`);
  assert.ok(readFileSync(join(dir, "out.log"), "utf8") === out, "out.log differs");
  assert.ok(readFileSync(join(dir, "err.log"), "utf8") === err, "err.log differs");
});

test("emissary (the Argo chunk) in a busybox-only root, each container as PID 1: a container set, its outputs, a signal file", { skip }, async (t) => {
  const root = busyboxRoot();
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const argo = join(root, "tmp/argo"); // the pod's /var/run/argo, /tmp/argo inside the root
  mkdirSync(argo);
  writeFileSync(join(argo, "template"), JSON.stringify({
    containerSet: { containers: [{ name: "main" }, { name: "after", dependencies: ["main"] }, { name: "last", dependencies: ["after"] }] },
    outputs: { parameters: [{ valueFrom: { path: "/tmp/p" } }], artifacts: [{ path: "/tmp/out" }] },
  }));
  const container = (name: string, script: string) => {
    const env = cleanEnv({ PATH: "/bin", BATON_ARGO_ROOT: "/tmp/argo", ARGO_CONTAINER_NAME: name, ARGO_INCLUDE_SCRIPT_OUTPUT: "true" });
    const words = ["emissary", "--loglevel", "info", "--log-format", "text", "--gloglevel", "0", "--", "/bin/busybox", "sh", "-c", script];
    const baton = startBaton(words, { pid1: true, root, baton: ["/baton/baton"], env });
    t.after(() => baton.kill());
    return baton;
  };
  const last = container("last", "echo never");
  const after = container("after", "echo > /tmp/after-ready; while :; do /bin/busybox sleep 0.05; done");
  const main = container("main", "/bin/busybox mkdir /tmp/out; echo art > /tmp/out/f; echo -n v > /tmp/p; echo result");
  assert.equal((await main.exited).code, 0);
  await waitFor(() => (existsSync(join(root, "tmp/after-ready")) ? true : undefined), "the dependent container to start");
  writeFileSync(join(argo, "ctr/after/signal"), "15"); // as the wait container does at the deadline
  const [ra, rl] = await Promise.all([after.exited, last.exited]);
  assert.equal(ra.code, 143, ra.stderr);
  assert.equal(rl.code, 64, rl.stderr);
  assert.deepEqual(["main", "after", "last"].map((n) => readOr(join(argo, "ctr", n, "exitcode"), "")), ["0", "143", "143"]);
  assert.equal(readOr(join(argo, "ctr/main/stdout"), ""), "result\n");
  assert.equal(readOr(join(argo, "outputs/parameters/tmp/p"), ""), "v");
  assert.equal(execFileSync("tar", ["-xzOf", join(argo, "outputs/artifacts/tmp/out.tgz"), "out/f"], { encoding: "utf8" }), "art\n");
});

test("emissary with the controller's ConfigMap offload: ARGO_TEMPLATE=offloaded and the args file, read through ..data symlinks", { skip }, async (t) => {
  const root = busyboxRoot();
  t.after(() => rmSync(root, { recursive: true, force: true }));
  // /argo/config as the kubelet lays out a ConfigMap: each key a symlink into ..data, itself a symlink to a folder.
  const config = join(root, "argo/config");
  mkdirSync(join(config, "..2026_12_01"), { recursive: true });
  writeFileSync(join(config, "..2026_12_01/ARGO_TEMPLATE"), JSON.stringify({ outputs: { parameters: [{ valueFrom: { path: "/tmp/p" } }] } }));
  writeFileSync(join(config, "..2026_12_01/ARGO_CONTAINER_ARGS_FILE"), JSON.stringify(["from-the-configmap"]));
  symlinkSync("..2026_12_01", join(config, "..data"));
  for (const key of ["ARGO_TEMPLATE", "ARGO_CONTAINER_ARGS_FILE"]) symlinkSync(`..data/${key}`, join(config, key));
  const env = cleanEnv({
    PATH: "/bin", BATON_ARGO_ROOT: "/tmp/argo", ARGO_CONTAINER_NAME: "main",
    ARGO_TEMPLATE: "offloaded", ARGO_CONTAINER_ARGS_FILE: "/argo/config/ARGO_CONTAINER_ARGS_FILE",
  });
  const run = await runBaton(["emissary", "--", "/bin/busybox", "sh", "-c", 'echo -n "$1" > /tmp/p', "sh"], { pid1: true, root, baton: ["/baton/baton"], env });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(readOr(join(root, "tmp/argo/outputs/parameters/tmp/p"), ""), "from-the-configmap");
});
