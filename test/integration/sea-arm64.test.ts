// The arm64 standalone folder (`make sea ARCH=arm64`, dist/baton-linux-arm64) run on this x86_64 machine under
// qemu-user: each run starts through scripts/emulate-arm64, in a user namespace of its own whose binfmt_misc runs arm64
// programs under qemu-aarch64-static, so the arm64 launcher can exec the arm64 loader and baton can exec the arm64
// busybox, as on an arm64 node (the test roots hold no emulator, only arm64 files). Emulation shows that the folder is
// complete and correct for arm64; it cannot show its speed (every arm64 instruction is translated: start-up is ~17x
// slower than native x64 here), nor the timing and memory ordering of real arm64 hardware, nor what a real arm64
// kernel does differently (qemu translates every system call, and answers /proc/self/exe itself). Each baton here
// costs ~0.5 s of CPU: the tests are few, and each proves several things.
import { test, before } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { resolve } from "node:path";
import {
  IS_ROOT, cleanEnv, eventSeen, existsSync, join, listeningPorts, readJson, readOr, runBaton, startBaton, waitFor, type StartOptions,
} from "./helpers.js";
import { busyboxRoot } from "./busybox-root.js";

const skip = !IS_ROOT && "needs root for namespaces and a root folder";
const ARM64_DIR = resolve(import.meta.dirname, "../../dist/baton-linux-arm64");
const { version } = JSON.parse(readFileSync(resolve(import.meta.dirname, "../../package.json"), "utf8")) as { version: string };
/** Runs the rest of a command line in a new user namespace where arm64 programs run under qemu. */
const EMULATED = [resolve(import.meta.dirname, "../../scripts/emulate-arm64")];

/** baton from the arm64 folder copied into a fresh busybox-only arm64 root, as PID 1. */
function inRoot(root: string, options: StartOptions = {}): StartOptions {
  return { outer: EMULATED, pid1: true, root, baton: ["/baton/baton"], ...options };
}

/** A program's absolute path on this machine (for a child whose PATH is the test root's). */
function hostProgram(name: string): string {
  return execFileSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" }).trim();
}

function arm64Root(t: { after(fn: () => void): void }): string {
  const root = busyboxRoot(ARM64_DIR, "arm64");
  t.after(() => rmSync(root, { recursive: true, force: true }));
  return root;
}

before(() => {
  assert.ok(existsSync(join(ARM64_DIR, "baton")), `${ARM64_DIR} is missing: run \`make sea ARCH=arm64\``);
});

test("the arm64 folder holds arm64 programs, laid out as the x64 folder", () => {
  const names = (dir: string) => readdirSync(join(dir, "lib")).filter((name) => !name.startsWith("ld-linux")).sort();
  assert.deepEqual(names(ARM64_DIR), names(resolve(ARM64_DIR, "../baton-linux-x64")));
  assert.ok(existsSync(join(ARM64_DIR, "lib/ld-linux-aarch64.so.1")));
  for (const file of ["baton", "argoexec", "lib/baton-node", "lib/baton-reaper.node", "lib/ld-linux-aarch64.so.1", "lib/libc.so.6"]) {
    const header = readFileSync(join(ARM64_DIR, file)).subarray(0, 20);
    assert.equal(header.readUInt16LE(18), 183, `${file} is not an arm64 ELF file (e_machine EM_AARCH64)`);
  }
});

test("the arm64 argoexec (Argo's executor image): init copies the folder then runs Argo's init; its copy in the pod runs Argo's subcommands and baton's emissary", { skip }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "baton-argoexec-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const bin = join(dir, "bin");
  mkdirSync(join(dir, "run"));
  cpSync(ARM64_DIR, join(bin, "baton"), { recursive: true });
  copyFileSync(join(ARM64_DIR, "argoexec"), join(bin, "argoexec"));
  mkdirSync(join(bin, "baton/argo"));
  writeFileSync(join(bin, "baton/argo/argoexec"), '#!/bin/sh\necho "argo $*"\n', { mode: 0o755 });
  const env = { PATH: `${bin}:/usr/bin:/bin`, BATON_ARGO_ROOT: join(dir, "run") };
  const init = execFileSync(EMULATED[0]!, [join(bin, "argoexec"), "init", "--loglevel", "info"], { env, encoding: "utf8" });
  assert.equal(init, "argo init --loglevel info\n");
  assert.equal(readFileSync(join(dir, "run/baton/lib/baton-node")).subarray(0, 20).readUInt16LE(18), 183);
  // The copy Argo's init makes, /var/run/argo/argoexec, finds the folder the init put beside it.
  copyFileSync(join(bin, "argoexec"), join(dir, "run/argoexec"));
  const plugin = execFileSync(EMULATED[0]!, [join(dir, "run/argoexec"), "artifact-plugin-sidecar"], { env, encoding: "utf8" });
  assert.equal(plugin, "argo artifact-plugin-sidecar\n");
  // ... and hands `emissary` to the arm64 baton it copied: the command runs, its code lands in the exitcode file.
  writeFileSync(join(dir, "run/template"), JSON.stringify({ name: "main", container: { image: "x" } }));
  const emissary = execFileSync(EMULATED[0]!, [join(dir, "run/argoexec"), "emissary", "--", "sh", "-c", "echo on arm64"], {
    env: { ...env, ARGO_CONTAINER_NAME: "main" }, encoding: "utf8",
  });
  assert.equal(emissary, "on arm64\n");
  assert.equal(readFileSync(join(dir, "run/ctr/main/exitcode"), "utf8"), "0");
});

test("the arm64 baton prints its version under qemu (launcher, loader, Node, SEA)", { skip }, async () => {
  const exit = await runBaton(["--version"], { outer: EMULATED, baton: [join(ARM64_DIR, "baton")] });
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(exit.stdout, `baton ${version}\n`);
  assert.equal(exit.stderr, "");
});

test("arm64: a three-step chain, each step as PID 1, in a root with only an arm64 static busybox", { skip }, async (t) => {
  const root = arm64Root(t);
  const shared = join(root, "tmp");
  const step = (name: string, wait: string | undefined, options: StartOptions, path?: string) => {
    const baton = startBaton(
      [
        ...(wait ? ["--wait-file", `/tmp/${wait}`] : []),
        "--post-file", `/tmp/${name}`,
        "--", "/bin/busybox", "sh", "-c", `echo "${name} parent=$PPID" >> /tmp/log`,
      ],
      { ...options, env: cleanEnv({ BATON_EVENTS: `/tmp/events-${name}`, ...(path ? { PATH: path } : {}) }) },
    );
    t.after(() => baton.kill());
    return baton;
  };
  // Later steps start first, so they really wait (by inotify, through qemu's syscall translation). Step 3 enters the
  // root by chroot with no /proc mounted and is started by name on PATH (under qemu, which answers /proc/self/exe
  // itself, that shows the root needs no /proc, not the launcher's PATH search: the x64 tests show that).
  const chroot = [hostProgram("unshare"), "--pid", "--fork", "--kill-child", hostProgram("chroot"), root];
  const third = step("three", "two", { outer: EMULATED, prefix: chroot, baton: ["baton"] }, "/bin:/baton");
  const second = step("two", "one", inRoot(root));
  await eventSeen(join(shared, "events-three"), "waiting");
  await eventSeen(join(shared, "events-two"), "waiting");
  const first = step("one", undefined, inRoot(root));
  for (const [name, baton] of [["one", first], ["two", second], ["three", third]] as const) {
    const exit = await baton.exited;
    assert.equal(exit.code, 0, `step ${name}: ${exit.stderr}`);
    assert.equal(readJson(join(shared, name)).exitCode, 0);
  }
  assert.equal(readFileSync(join(shared, "log"), "utf8"), "one parent=1\ntwo parent=1\nthree parent=1\n");
  assert.deepEqual(readdirSync(root).sort(), ["baton", "bin", "proc", "tmp"], "the root holds no Node, no libc, no emulator");
});

test("arm64 as PID 1: signals reach the command, and orphans are reaped by the arm64 addon", { skip }, async (t) => {
  const root = arm64Root(t);
  const tmp = join(root, "tmp");
  // Three orphans that exit after 0.2 s; the command stays, reporting USR1 and exiting 0 on TERM.
  const command = [
    "for i in 1 2 3; do (/bin/busybox sleep 0.2 &); done",
    "trap 'echo USR1 >> /tmp/got' USR1",
    "trap 'echo TERM >> /tmp/got; exit 0' TERM",
    "echo > /tmp/ready",
    "while :; do /bin/busybox sleep 0.05; done",
  ].join("\n");
  const baton = startBaton(["--", "/bin/busybox", "sh", "-c", command], inRoot(root));
  t.after(() => baton.kill());
  const pid = await baton.hostPid();
  await waitFor(() => (existsSync(join(tmp, "ready")) ? true : undefined), "the command's traps", 60_000);

  // Once the orphans have exited, baton's only child is the command's shell (a loop sleep may come and go).
  const children = () => readOr(`/proc/${pid}/task/${pid}/children`, "").trim().split(" ").filter(Boolean).map(Number);
  const isZombie = (child: number) => /^State:\s+Z/m.test(readOr(`/proc/${child}/status`, ""));
  await waitFor(() => (children().length === 1 && !children().some(isZombie) ? true : undefined), "the orphans to be reaped", 20_000);

  process.kill(pid, "SIGUSR1");
  await waitFor(() => (readOr(join(tmp, "got"), "").includes("USR1") ? true : undefined), "USR1 to reach the command");
  assert.deepEqual(listeningPorts(pid), [], "SIGUSR1 opened no inspector");
  process.kill(pid, "SIGTERM");
  const exit = await baton.exited;
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(readFileSync(join(tmp, "got"), "utf8"), "USR1\nTERM\n");
  assert.doesNotMatch(exit.stderr, /reap/, "the reaper addon loaded");
});

test("arm64: sidecar mode (loaded lazily inside the bundle) stops on its stop file, NODE_OPTIONS set", { skip }, async (t) => {
  const root = arm64Root(t);
  const events = join(root, "tmp/events");
  const baton = startBaton(
    ["sidecar", "--stop-file", "/tmp/stop", "--", "/bin/busybox", "sleep", "1000"],
    // NODE_OPTIONS from the image does not reach baton (the SEA's execArgvExtension "none"), on arm64 too.
    inRoot(root, { env: cleanEnv({ BATON_EVENTS: "/tmp/events", NODE_OPTIONS: "--require /nonexistent.js" }) }),
  );
  t.after(() => baton.kill());
  await eventSeen(events, "command");
  writeFileSync(join(root, "tmp/stop"), "");
  const exit = await baton.exited;
  assert.equal(exit.code, 0, exit.stderr);
});

test("arm64: baton init DEST copies the whole folder, and the copy runs", { skip }, async (t) => {
  const root = arm64Root(t);
  const init = await runBaton(["init", "/workspace/bin/baton"], inRoot(root));
  assert.equal(init.code, 0, init.stderr);
  const list = (dir: string) => execFileSync("find", [".", "-type", "f", "-printf", "%p %s\n"], { cwd: dir, encoding: "utf8" }).split("\n").sort();
  // All but argoexec, which is for an Argo executor image (docs/argo.md), not for a step (as on x64: sea.test.ts).
  assert.deepEqual(list(join(root, "workspace/bin")), list(ARM64_DIR).filter((f) => !f.startsWith("./argoexec ")));
  assert.equal(statSync(join(root, "workspace/bin/baton")).mode & 0o777, 0o755);

  const step = await runBaton(["--", "/bin/busybox", "echo", "from the copy"], inRoot(root, { baton: ["/workspace/bin/baton"] }));
  assert.equal(step.code, 0, step.stderr);
  assert.equal(step.stdout, "from the copy\n");
});

test("arm64: emissary (the Argo chunk) as PID 1: main's artifact and exit code, and its dependent failing after it", { skip }, async (t) => {
  const root = arm64Root(t);
  const argo = join(root, "tmp/argo"); // the pod's /var/run/argo
  mkdirSync(argo);
  writeFileSync(join(argo, "template"), JSON.stringify({
    containerSet: { containers: [{ name: "main" }, { name: "after", dependencies: ["main"] }] },
    outputs: { artifacts: [{ path: "/tmp/out" }] },
  }));
  const container = (name: string, script: string) => {
    const env = cleanEnv({ PATH: "/bin", BATON_ARGO_ROOT: "/tmp/argo", ARGO_CONTAINER_NAME: name, ARGO_INCLUDE_SCRIPT_OUTPUT: "true" });
    const baton = startBaton(["emissary", "--loglevel", "info", "--", "/bin/busybox", "sh", "-c", script], inRoot(root, { env }));
    t.after(() => baton.kill());
    return baton;
  };
  const after = container("after", "echo never");
  const main = container("main", "/bin/busybox mkdir /tmp/out; echo art > /tmp/out/f; echo result; exit 3");
  const [rm, ra] = await Promise.all([main.exited, after.exited]);
  assert.equal(rm.code, 3, rm.stderr);
  assert.equal(ra.code, 64, ra.stderr);
  assert.deepEqual(["main", "after"].map((n) => readOr(join(argo, "ctr", n, "exitcode"), "")), ["3", "3"]);
  assert.equal(readOr(join(argo, "ctr/main/stdout"), ""), "result\n");
  assert.equal(readOr(join(argo, "ctr/after/stdout"), "none"), "none", "after's command never ran");
  assert.equal(execFileSync("tar", ["-xzOf", join(argo, "outputs/artifacts/tmp/out.tgz"), "out/f"], { encoding: "utf8" }), "art\n");
});
