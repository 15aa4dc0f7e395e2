// `baton emissary` against what the shared folder (and the controller's inputs) may hold: symlinks and FIFOs where a
// file is expected, a template that is not one, an args file far too large; and the arguments' @file offload. Each
// ends with one line on stderr and a documented code, never a hang, never a write through a link.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { IS_ROOT, fileAppears, join, readOr, tempDir } from "./helpers.js";
import { argoPod, writeSignal } from "./argo-helpers.js";

const mkfifo = (path: string) => execFileSync("mkfifo", [path]);

test("a garbage template: exit 64, exitcode 64, one line; the command does not run", async () => {
  const work = tempDir();
  for (const [template, message] of [
    ["not json", /failed to unmarshal template: /],
    ["[1,2]", /cannot unmarshal array into Template/],
    ['{"containerSet": 5}', /cannot unmarshal number into ContainerSetTemplate/],
    ['{"containerSet": {"retryStrategy": {"retries": 1.5}}}', /retries: 1.5 is not an integer/],
    ['{"outputs": {"artifacts": [{"path": 7}]}}', /cannot unmarshal number into path of type string/],
  ] as const) {
    const pod = argoPod();
    pod.template(template);
    const run = await pod.start("main", ["touch", join(work, "ran")]).exited;
    assert.equal(run.code, 64, template);
    assert.equal(pod.read("main", "exitcode"), "64");
    assert.match(run.stderr, message);
    assert.equal(run.stderr.split("\n").length, 2, "one line");
    assert.ok(!existsSync(join(work, "ran")));
  }
});

test("Go's JSON rules: keys match case-insensitively, null is empty, unknown keys are ignored", async () => {
  const pod = argoPod();
  const work = tempDir();
  pod.template({ OUTPUTS: { Parameters: [{ valueFrom: { PATH: join(work, "p") } }] }, containerSet: null, whatever: [1] });
  const run = await pod.start("main", ["sh", "-c", `echo v > ${work}/p`]).exited;
  assert.equal(run.code, 0, run.stderr);
  assert.equal(readFileSync(join(pod.root, "outputs/parameters", work, "p"), "utf8"), "v\n");
});

test("a template that is a FIFO or a symlink is refused, not read: exit 64, no hang", async () => {
  for (const kind of ["fifo", "symlink"] as const) {
    const pod = argoPod();
    const file = join(pod.root, "template");
    if (kind === "fifo") mkfifo(file);
    else {
      writeFileSync(join(pod.root, "real"), "{}");
      symlinkSync(join(pod.root, "real"), file);
    }
    const run = await pod.start("main", ["true"]).exited;
    assert.equal(run.code, 64, kind);
    assert.match(run.stderr, /failed to read template: .*template is (a FIFO, not a regular file|a symbolic link, which baton does not follow)/);
  }
});

test("a symlink or a FIFO at the signal file is removed unread; a real signal afterwards still works", async () => {
  for (const kind of ["symlink", "fifo"] as const) {
    const pod = argoPod();
    const work = tempDir();
    pod.template({});
    mkdirSync(pod.dir("main"), { recursive: true });
    const victim = join(work, "victim");
    writeFileSync(victim, "15");
    const signal = join(pod.dir("main"), "signal");
    if (kind === "symlink") symlinkSync(victim, signal);
    else mkfifo(signal);
    const run = pod.start("main", ["sh", "-c", `touch ${work}/started; while :; do sleep 0.05; done`]);
    await fileAppears(join(work, "started"));
    // Removed once seen (the first look happens before the command starts).
    await fileAppears(join(pod.dir("main"), "exitcode.baton-live"));
    assert.throws(() => lstatSync(signal), /ENOENT/, `${kind} removed`);
    assert.equal(readFileSync(victim, "utf8"), "15", "the link's target is untouched");
    writeSignal(pod, "main", 9);
    const ended = await run.exited;
    assert.equal(ended.code, 137, `${kind}: ${ended.stderr}`);
    assert.match(ended.stderr, /signal is (a symbolic link, which baton does not follow in shared folders|a FIFO, not a regular file): removed it/);
  }
});

test("a dependency's exitcode that is a FIFO fails the dependent (64) instead of blocking it", async () => {
  const pod = argoPod();
  pod.template({ containerSet: { containers: [{ name: "a" }, { name: "b", dependencies: ["a"] }] } });
  mkdirSync(pod.dir("a"), { recursive: true });
  mkfifo(join(pod.dir("a"), "exitcode"));
  const run = await pod.start("b", ["true"]).exited;
  assert.equal(run.code, 64);
  assert.match(run.stderr, /exitcode is a FIFO, not a regular file/);
  assert.equal(pod.read("b", "exitcode"), "64");
});

test("a capture file that is a symlink: the attempt fails (64), nothing is written through the link", async () => {
  const pod = argoPod();
  const work = tempDir();
  pod.template({});
  mkdirSync(pod.dir("main"), { recursive: true });
  const victim = join(work, "victim");
  writeFileSync(victim, "");
  symlinkSync(victim, join(pod.dir("main"), "stdout"));
  const run = await pod.start("main", ["echo", "secret"], { ARGO_INCLUDE_SCRIPT_OUTPUT: "true" }).exited;
  assert.equal(run.code, 64);
  assert.match(run.stderr, /failed to start command: failed to open .*stdout: /);
  assert.equal(readFileSync(victim, "utf8"), "");
});

test("ARGO_CONTAINER_ARGS_FILE: its args are appended; one over 131072 bytes goes to /tmp/argo_arg_<i>.txt as @file", async () => {
  const pod = argoPod();
  const work = tempDir();
  pod.template({});
  const long = "x".repeat(131073);
  const argsFile = join(work, "args.json");
  // 131072 bytes: Argo keeps it (its rule is > 131072) and exec refuses it (E2BIG); baton offloads it too.
  writeFileSync(argsFile, JSON.stringify(["second", long, "y".repeat(131071), "z".repeat(131072)]));
  const offloaded = "/tmp/argo_arg_4.txt"; // the index among the arguments: -c SCRIPT sh second LONG
  const exact = "/tmp/argo_arg_6.txt";
  for (const file of [offloaded, exact]) rmSync(file, { force: true });
  try {
    const script = 'for a; do printf "%s\\n" "$(printf %s "$a" | head -c 30)"; done';
    const run = await pod.start("main", ["sh", "-c", script, "sh"], { ARGO_CONTAINER_ARGS_FILE: argsFile }).exited;
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, `second\n@${offloaded}\n${"y".repeat(30)}\n@${exact}\n`);
    assert.equal(readFileSync(offloaded, "utf8"), long);
    assert.equal(readFileSync(exact, "utf8"), "z".repeat(131072));
    assert.equal(lstatSync(offloaded).mode & 0o777, 0o644);
  } finally {
    for (const file of [offloaded, exact]) rmSync(file, { force: true });
  }
});

test("an args file that is too large, or not a JSON array of strings: exit 64, the command does not run", async () => {
  const work = tempDir();
  for (const [content, message] of [
    [Buffer.alloc(5 * 1024 * 1024, 0x20), /args\.json: it is larger than 4194304 bytes/],
    ['{"a": 1}', /not a JSON array of strings/],
    ["[1]", /not a JSON array of strings/],
  ] as const) {
    const pod = argoPod();
    pod.template({});
    const argsFile = join(work, "args.json");
    writeFileSync(argsFile, content);
    const run = await pod.start("main", ["touch", join(work, "ran")], { ARGO_CONTAINER_ARGS_FILE: argsFile }).exited;
    assert.equal(run.code, 64);
    assert.match(run.stderr, message);
    assert.ok(!existsSync(join(work, "ran")));
  }
});

test("a bad container name or flag: exit 64, one line", async () => {
  const pod = argoPod();
  pod.template({});
  for (const [name, args, message] of [
    ["../x", ["true"], /ARGO_CONTAINER_NAME "\.\.\/x" is not a container name/],
    ["..", ["true"], /ARGO_CONTAINER_NAME "\.\." is not a container name/],
  ] as const) {
    const run = await pod.start(name, [...args]).exited;
    assert.equal(run.code, 64);
    assert.match(run.stderr, message);
  }
  assert.ok(!existsSync(join(pod.root, "x")), "nothing made outside ctr/");
});

test("an error's message goes to /dev/termination-log where the kubelet made one, and nowhere else", { skip: !IS_ROOT && "needs a mount namespace" }, async () => {
  const hadOne = existsSync("/dev/termination-log");
  const pod = argoPod();
  const log = join(tempDir(), "termination-log");
  writeFileSync(log, "");
  // A /dev of its own, with termination-log bind-mounted from LOG, as the kubelet does.
  const privateDev = [
    "unshare", "--mount", "--propagation", "private", "sh", "-c",
    'd=$(mktemp -d) && mount -t tmpfs tmpfs "$d" && for n in null zero urandom; do touch "$d/$n" && mount --bind /dev/$n "$d/$n"; done && ' +
      'ln -s /proc/self/fd/2 "$d/stderr" && touch "$d/termination-log" && mount --bind "$0" "$d/termination-log" && mount --move "$d" /dev && exec "$@"',
    log,
  ];
  const run = await pod.start("main", ["no-such-program-here"], {}, { prefix: privateDev }).exited;
  assert.equal(run.code, 64, run.stderr);
  assert.equal(readOr(log, ""), 'failed to read template: neither ' + join(pod.root, "template") + " nor ARGO_TEMPLATE is available");
  const outside = await pod.start("main", ["no-such-program-here"]).exited;
  assert.equal(outside.code, 64);
  assert.equal(existsSync("/dev/termination-log"), hadOne, "no /dev/termination-log made outside a pod");
});

test("ctr/NAME that is a symlink: exit 64, and no exitcode is written through it", async () => {
  const pod = argoPod();
  const elsewhere = tempDir();
  pod.template({});
  mkdirSync(join(pod.root, "ctr"));
  symlinkSync(elsewhere, pod.dir("main"));
  const run = await pod.start("main", ["true"]).exited;
  assert.equal(run.code, 64);
  assert.match(run.stderr, /failed to create ctr directory: .* is not a directory/);
  assert.ok(!existsSync(join(elsewhere, "exitcode")));
});
