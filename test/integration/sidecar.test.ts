// Sidecar mode on the real bundle: real sidecars, real servers started by the test, real signals, PID 1 where it matters.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer as createHttpServer, type IncomingMessage, type Server } from "node:http";
import { createServer as createTcpServer } from "node:net";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import {
  cleanEnv, eventSeen, existsSync, fileAppears, freePort, join, liveGroupMembers, readEvents, readJson, startBaton, tempDir,
  IS_ROOT,
} from "./helpers.js";
import { fullDisk, inMountNamespace } from "../../scripts/bench/namespaces.mjs";

const skip = !IS_ROOT && "needs root for a PID namespace";

/** baton sidecar with lifecycle events in DIR/<name>.events. */
function sidecar(dir: string, args: string[], options: { pid1?: boolean; name?: string } = {}) {
  const events = join(dir, `${options.name ?? "sidecar"}.events`);
  const baton = startBaton(["sidecar", ...args], { pid1: options.pid1, env: cleanEnv({ BATON_EVENTS: events }) });
  return { ...baton, events };
}

/** An HTTP server on 127.0.0.1 that records every request and answers with whatever `status()` says. */
async function recordingServer(status: () => number) {
  const requests: { method: string; url: string }[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const server: Server = createHttpServer((req: IncomingMessage, res) => {
    requests.push({ method: req.method!, url: req.url! });
    req.resume();
    res.writeHead(status()).end("ok\n");
    for (const w of waiters.filter((w) => requests.length >= w.count)) w.resolve();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    requests,
    /** Resolves once the server has received `count` requests. */
    received: (count: number) =>
      requests.length >= count ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ count, resolve })),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const eventsNamed = (file: string, name: string) => readEvents(file).filter((e) => e.event === name);

test("a wrapped sidecar is stopped by the last step's post file: SIGTERM to its group, exit 0", async () => {
  const dir = tempDir();
  const last = join(dir, "last");
  const baton = sidecar(dir, ["--stop-file", last, "--", "sleep", "1000"]);
  await eventSeen(baton.events, "waiting");
  await eventSeen(baton.events, "command");
  writeFileSync(last, "{}\n");
  const exit = await baton.exited;
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(exit.stderr, "");
  assert.deepEqual(eventsNamed(baton.events, "stopping").map((e) => e.file), [last]);
  assert.deepEqual(eventsNamed(baton.events, "exited").map((e) => e.signal), ["SIGTERM"]); // the sidecar's own 143...
  assert.deepEqual(eventsNamed(baton.events, "done").map((e) => e.exitCode), [0]); // ...is a success: stopped on purpose
});

test("a stop file whose own name ends in .lock is a stop, not taken for a step that died", async () => {
  const dir = tempDir();
  const last = join(dir, "done.lock");
  const baton = sidecar(dir, ["--stop-file", last, "--", "sleep", "1000"]);
  await eventSeen(baton.events, "command");
  writeFileSync(last, "{}\n");
  const exit = await baton.exited;
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(exit.stderr, "", "no word of a step that died");
  assert.deepEqual(eventsNamed(baton.events, "stopping").map((e) => e.file), [last]);
});

test("a wrapped sidecar is stopped by the .err of a failed last step, and by any of several stop files", async () => {
  const dir = tempDir();
  const baton = sidecar(dir, ["--stop-file", join(dir, "a"), "--stop-file", join(dir, "b"), "--stop-signal", "INT", "--", "sleep", "1000"]);
  await eventSeen(baton.events, "command");
  writeFileSync(join(dir, "b.err"), "{}\n");
  const exit = await baton.exited;
  assert.equal(exit.code, 0, exit.stderr);
  assert.deepEqual(eventsNamed(baton.events, "stopping").map((e) => e.file), [join(dir, "b.err")]);
  assert.deepEqual(eventsNamed(baton.events, "exited").map((e) => e.signal), ["SIGINT"]);
});

test("a sidecar that ignores SIGTERM is killed after the grace period, with nothing of its group left alive", async () => {
  // Not as PID 1: when PID 1 exits the kernel kills its whole namespace, which would hide a missing group kill.
  const dir = tempDir();
  const script = `trap '' TERM; sleep 1000 & echo $! > ${dir}/grandchild; wait`;
  const baton = sidecar(dir, ["--stop-file", join(dir, "last"), "--grace-period", "700ms", "--", "sh", "-c", script]);
  const { child: pgid } = (await eventSeen(baton.events, "command")) as { child: number };
  await fileAppears(join(dir, "grandchild"));
  const stoppedAt = Date.now();
  writeFileSync(join(dir, "last"), "");
  const exit = await baton.exited;
  const took = Date.now() - stoppedAt;
  assert.equal(exit.code, 0, exit.stderr);
  assert.ok(took >= 650, `baton ended ${took} ms after the stop file, before the grace period`);
  assert.match(exit.stderr, /^baton: the sidecar did not stop within 700 ms of SIGTERM: killed it \(SIGKILL\)\n$/);
  assert.deepEqual(liveGroupMembers(pgid), []);
  assert.deepEqual(eventsNamed(baton.events, "exited").map((e) => e.signal), ["SIGKILL"]);
});

test("a sidecar that crashes on its own gives its own exit code (128+N for a signal)", async () => {
  const dir = tempDir();
  const crashed = await sidecar(dir, ["--stop-file", join(dir, "last"), "--", "sh", "-c", "exit 7"]).exited;
  assert.equal(crashed.code, 7);
  assert.equal(crashed.stderr, "baton: the sidecar exited (code 7) before any stop file appeared\n");
  const killed = await sidecar(dir, ["--stop-file", join(dir, "last"), "--", "sh", "-c", "kill -KILL $$"], { name: "k" }).exited;
  assert.equal(killed.code, 137);
  const missing = await sidecar(dir, ["--stop-file", join(dir, "last"), "--", join(dir, "no-such-proxy")], { name: "m" }).exited;
  assert.equal(missing.code, 127);
  assert.match(missing.stderr, /^baton: command not found: .*no-such-proxy \(ENOENT\)\n$/);
});

test("a sidecar that dies before it is ready: says so, writes READY.err so the first step ends, exits with its code", async () => {
  const dir = tempDir();
  const ready = join(dir, "ready");
  const port = await freePort(); // nothing listens there
  const baton = sidecar(dir, ["--stop-file", join(dir, "last"), "--ready-probe", `tcp:127.0.0.1:${port}`, "--ready-file", ready, "--", "sh", "-c", "sleep 0.3; exit 3"]);
  const exit = await baton.exited;
  assert.equal(exit.code, 3);
  assert.equal(exit.stderr, `baton: the sidecar exited (code 3) before it was ready (--ready-probe tcp:127.0.0.1:${port})\n`);
  assert.equal(existsSync(ready), false);
  assert.equal(readJson(`${ready}.err`).reason, "NotReady");
  // The first step, waiting for the ready file, is skipped instead of waiting forever.
  const step = await startBaton(["--wait-file", ready, "--wait-file-content", "--post-file", join(dir, "1"), "--", "true"]).exited;
  assert.equal(step.code, 1);
  assert.equal(existsSync(join(dir, "1.err")), true);
});

test("as PID 1, a SIGTERM from the kubelet is forwarded: the sidecar's own code (143) is baton's", { skip }, async () => {
  const dir = tempDir();
  const baton = sidecar(dir, ["--stop-file", join(dir, "last"), "--", "sleep", "1000"], { pid1: true });
  const pid = await baton.hostPid();
  await eventSeen(baton.events, "command");
  process.kill(pid, "SIGTERM");
  const exit = await baton.exited;
  assert.equal(exit.code, 143);
  assert.deepEqual(eventsNamed(baton.events, "signal").map((e) => e.signal), ["SIGTERM"]);
});

test("tcp: probe: the ready file is written only once a server the test starts late accepts connections", async () => {
  const dir = tempDir();
  const ready = join(dir, "ready");
  const port = await freePort();
  const baton = sidecar(dir, ["--stop-file", join(dir, "last"), "--ready-probe", `tcp:127.0.0.1:${port}`, "--ready-file", ready, "--", "sleep", "1000"]);
  await eventSeen(baton.events, "command");
  assert.equal(existsSync(ready), false);
  const server = createTcpServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const listeningAt = Date.now();
  try {
    const ok = await eventSeen(baton.events, "probe-ok");
    assert.equal(ok.probe, `tcp:127.0.0.1:${port}`);
    assert.ok((ok.t as number) >= listeningAt);
    assert.equal(readJson(ready).probe, `tcp:127.0.0.1:${port}`);
    writeFileSync(join(dir, "last"), "");
    assert.equal((await baton.exited).code, 0);
  } finally {
    server.close();
  }
});

test("http:// probe: 503 is not ready; the first 2xx writes the ready file", async () => {
  const dir = tempDir();
  const ready = join(dir, "ready");
  let status = 503;
  const server = await recordingServer(() => status);
  try {
    const url = `http://127.0.0.1:${server.port}/healthz/ready`;
    const baton = sidecar(dir, ["--stop-file", join(dir, "last"), "--ready-probe", url, "--ready-file", ready, "--", "sleep", "1000"]);
    await server.received(3); // polled, again and again, while it answers 503
    assert.equal(existsSync(ready), false);
    status = 200;
    await fileAppears(ready);
    assert.ok(readFileSync(ready, "utf8").length > 0);
    assert.deepEqual(new Set(server.requests.map((r) => `${r.method} ${r.url}`)), new Set(["GET /healthz/ready"]));
    const polls = server.requests.length;
    writeFileSync(join(dir, "last"), "");
    assert.equal((await baton.exited).code, 0);
    assert.equal(server.requests.length, polls, "probing stops at the first success");
    assert.equal(eventsNamed(baton.events, "probe-ok").length, 1);
  } finally {
    await server.close();
  }
});

test("a URL's password reaches neither stderr, nor the events, nor the ready file (an audit's find)", async () => {
  const dir = tempDir();
  const ready = join(dir, "ready");
  const server = await recordingServer(() => 200);
  const refused = await freePort();
  try {
    const baton = sidecar(dir, [
      "--stop-file", join(dir, "last"),
      "--ready-probe", `http://admin:s3cret@127.0.0.1:${server.port}/`, "--ready-file", ready,
      "--stop-url", `http://admin:s3cret@127.0.0.1:${refused}/quit`,
    ]);
    await fileAppears(ready);
    writeFileSync(join(dir, "last"), "");
    const exit = await baton.exited;
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(exit.stderr, `baton: stop URL http://admin:xxxxx@127.0.0.1:${refused}/quit did not accept the stop: ECONNREFUSED; exiting 0 anyway\n`);
    assert.doesNotMatch(readFileSync(baton.events, "utf8"), /s3cret/);
    assert.equal(readJson(ready).probe, `http://admin:xxxxx@127.0.0.1:${server.port}/`);
    const usage = await sidecar(dir, ["--stop-file", join(dir, "last"), "--stop-url", "https://admin:s3cret@x/"], { name: "usage" }).exited;
    assert.equal(usage.code, 2);
    assert.equal(usage.stderr, `baton: invalid --stop-url "https://admin:xxxxx@x/": only http:// is supported\n`);
  } finally {
    await server.close();
  }
});

test("file: and exec: probes wait for their condition; a stale ready file is removed at start", async () => {
  const dir = tempDir();
  for (const probe of [`file:${dir}/flag-file`, `exec:test -e ${dir}/flag-exec`]) {
    const name = probe.slice(0, 4);
    const ready = join(dir, `ready-${name}`);
    writeFileSync(ready, "stale from an earlier run\n");
    const baton = sidecar(dir, ["--stop-file", join(dir, "last"), "--ready-probe", probe, "--ready-file", ready, "--", "sleep", "1000"], { name });
    await eventSeen(baton.events, "command");
    assert.equal(existsSync(ready), false, probe);
    writeFileSync(join(dir, `flag-${name}`), "");
    await eventSeen(baton.events, "probe-ok");
    assert.equal(readJson(ready).probe, probe);
    writeFileSync(join(dir, "last"), "");
    assert.equal((await baton.exited).code, 0);
    rmSync(join(dir, "last")); // the next round waits for it again
  }
});

test("the killer: no COMMAND; once the stop file appears it POSTs to each --stop-url and exits 0", async () => {
  const dir = tempDir();
  const proxy = await recordingServer(() => 200);
  const other = await recordingServer(() => 200);
  try {
    const baton = sidecar(dir, [
      "--stop-file", join(dir, "last"),
      "--stop-url", `http://127.0.0.1:${proxy.port}/quitquitquit`,
      "--stop-url", `http://127.0.0.1:${other.port}/shutdown`,
    ]);
    await eventSeen(baton.events, "waiting");
    assert.equal(proxy.requests.length, 0);
    writeFileSync(join(dir, "last.err"), "");
    const exit = await baton.exited;
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(exit.stderr, "");
    assert.deepEqual(proxy.requests, [{ method: "POST", url: "/quitquitquit" }]);
    assert.deepEqual(other.requests, [{ method: "POST", url: "/shutdown" }]);
    assert.deepEqual(
      eventsNamed(baton.events, "stop-url").map((e) => e.status),
      [200, 200],
    );
  } finally {
    await proxy.close();
    await other.close();
  }
});

test("the killer retries a stop URL that answers 503 until it answers 2xx", async () => {
  const dir = tempDir();
  let answers = 0;
  const proxy = await recordingServer(() => (++answers < 3 ? 503 : 200));
  try {
    writeFileSync(join(dir, "last"), "");
    const exit = await sidecar(dir, ["--stop-file", join(dir, "last"), "--stop-url", `http://127.0.0.1:${proxy.port}/quitquitquit`]).exited;
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(exit.stderr, "");
    assert.equal(proxy.requests.length, 3);
  } finally {
    await proxy.close();
  }
});

test("the killer with no URL answering: one 'baton:' line, exit 0 after a bounded retry, so the pod can still end", async () => {
  const dir = tempDir();
  const port = await freePort(); // nothing listens: the proxy is already gone
  writeFileSync(join(dir, "last"), "");
  const started = Date.now();
  const baton = sidecar(dir, ["--stop-file", join(dir, "last"), "--stop-url", `http://127.0.0.1:${port}/quitquitquit`]);
  const exit = await baton.exited;
  const took = Date.now() - started;
  assert.equal(exit.code, 0);
  assert.equal(exit.stderr, `baton: stop URL http://127.0.0.1:${port}/quitquitquit did not accept the stop: ECONNREFUSED; exiting 0 anyway\n`);
  assert.ok(took >= 4000 && took < 20_000, `retried for ${took} ms (expected about 5 s)`);
  assert.deepEqual(eventsNamed(baton.events, "stop-url").map((e) => e.status), [null]);
});

test("as PID 1, the killer stopped by SIGTERM while waiting exits 143 and POSTs nothing", { skip }, async () => {
  const dir = tempDir();
  const proxy = await recordingServer(() => 200);
  try {
    const baton = sidecar(dir, ["--stop-file", join(dir, "last"), "--stop-url", `http://127.0.0.1:${proxy.port}/quitquitquit`], { pid1: true });
    const pid = await baton.hostPid();
    await eventSeen(baton.events, "waiting");
    process.kill(pid, "SIGTERM");
    const exit = await baton.exited;
    assert.equal(exit.code, 143);
    assert.equal(exit.stderr, "baton: stopped by SIGTERM while waiting\n");
    assert.equal(proxy.requests.length, 0);
  } finally {
    await proxy.close();
  }
});

test("usage errors: exit 2, one line, and READY.err so the first step does not wait forever", async () => {
  const dir = tempDir();
  writeFileSync(join(dir, "a-file"), "");
  const ready = join(dir, "ready");
  const cases: [string[], RegExp][] = [
    [["--", "sleep", "1"], /needs at least one --stop-file/],
    [["--stop-file", join(dir, "last"), "--ready-file", ready, "--", "sleep", "1"], /--ready-probe and --ready-file go together/],
    [["--stop-file", join(dir, "last"), "--ready-probe", "udp:1", "--ready-file", ready, "--", "sleep", "1"], /invalid --ready-probe "udp:1"/],
    [["--stop-file", join(dir, "last"), "--grace-period", "soon", "--", "sleep", "1"], /invalid --grace-period "soon"/],
    [["--stop-file", join(dir, "last"), "--stop-signal", "SIGNOPE", "--", "sleep", "1"], /invalid --stop-signal "SIGNOPE"/],
    [["--stop-file", join(dir, "last")], /nothing to do/],
    [["--stop-file", dir, "--", "sleep", "1"], /stop file .* is a directory/],
    // Audit finds: a stop file that can never appear was waited for for ever; a ready file whose .err cannot be named
    // was an internal error that left neither READY nor READY.err.
    [["--stop-file", join(dir, "s".repeat(256)), "--", "sleep", "1"], /stop file .* can never appear: a name in it is over 255 bytes/],
    // A stop file below a file was called a "wait file" in this message.
    [["--stop-file", join(dir, "a-file", "x"), "--", "sleep", "1"], /stop file \S+\/a-file\/x can never appear: \S+\/a-file is a file/],
    [["--stop-file", join(dir, "last"), "--ready-probe", "tcp:127.0.0.1:1", "--ready-file", join(dir, "r".repeat(253)), "--", "sleep", "1"], /ready file name r+ is too long: r+\.err must fit 255 bytes/],
  ];
  for (const [args, message] of cases) {
    const exit = await sidecar(dir, args).exited;
    assert.equal(exit.code, 2, args.join(" "));
    assert.match(exit.stderr, new RegExp(`^baton: [^\\n]*${message.source}[^\\n]*\\n$`));
  }
  assert.equal(readJson(`${ready}.err`).exitCode, 2);
});

/** One pod: a sidecar and three steps, all started at once, each as PID 1 of its own PID namespace. */
async function runPod(middleStep: string) {
  const dir = tempDir();
  const port = await freePort();
  const ready = join(dir, "ready");
  const log = join(dir, "log");
  // A database-like sidecar that takes a while to start serving.
  const server = `setTimeout(() => require("http").createServer((q, s) => s.end("ok")).listen(${port}, "127.0.0.1"), 300)`;
  // Each step uses the sidecar: it fails if the sidecar is not serving.
  const useSidecar = `node -e 'require("http").get("http://127.0.0.1:${port}/", (r) => process.exit(r.statusCode === 200 ? 0 : 9)).on("error", () => process.exit(8))'`;
  const step = (name: string, wait: string[], command: string) =>
    startBaton([...wait, "--post-file", join(dir, name), "--", "sh", "-c", command], {
      pid1: IS_ROOT,
      env: cleanEnv({ BATON_EVENTS: join(dir, "events"), BATON_NAME: `step-${name}` }),
    });
  const third = step("3", ["--wait-file", join(dir, "2")], `${useSidecar} && echo third >> ${log}`);
  const second = step("2", ["--wait-file", join(dir, "1")], `${useSidecar} && echo second >> ${log} && ${middleStep}`);
  const first = step("1", ["--wait-file", ready, "--wait-file-content"], `${useSidecar} && echo first >> ${log}`);
  const side = sidecar(dir, ["--stop-file", join(dir, "3"), "--ready-probe", `http://127.0.0.1:${port}/`, "--ready-file", ready, "--", process.execPath, "-e", server], { pid1: IS_ROOT });
  const exits = await Promise.all([side.exited, first.exited, second.exited, third.exited]);
  return { dir, exits, log: readFileSync(log, "utf8"), sidecarEvents: readEvents(side.events) };
}

test("a whole pod: the steps run in order after the sidecar is ready, then the sidecar is stopped; every process exits 0", async () => {
  const pod = await runPod("true");
  assert.deepEqual(pod.exits.map((e) => e.code), [0, 0, 0, 0], pod.exits.map((e) => e.stderr).join(""));
  assert.equal(pod.log, "first\nsecond\nthird\n");
  assert.deepEqual(
    pod.sidecarEvents.filter((e) => ["probe-ok", "stopping", "done"].includes(e.event as string)).map((e) => e.event),
    ["probe-ok", "stopping", "done"],
  );
  assert.equal(pod.sidecarEvents.find((e) => e.event === "stopping")!.file, join(pod.dir, "3"));
});

test("a whole pod with a failing middle step: the last step is skipped, the sidecar is still stopped", async () => {
  const pod = await runPod("exit 3");
  assert.deepEqual(pod.exits.map((e) => e.code), [0, 0, 3, 1], pod.exits.map((e) => e.stderr).join(""));
  assert.equal(pod.log, "first\nsecond\n");
  assert.deepEqual([existsSync(join(pod.dir, "2.err")), existsSync(join(pod.dir, "3.err")), existsSync(join(pod.dir, "3"))], [true, true, false]);
  assert.equal(readJson(join(pod.dir, "2.err")).exitCode, 3);
  assert.equal(readJson(join(pod.dir, "3.err")).reason, "Skipped");
  assert.equal(pod.sidecarEvents.find((e) => e.event === "stopping")!.file, join(pod.dir, "3.err"));
  assert.deepEqual(pod.sidecarEvents.filter((e) => e.event === "done").map((e) => e.exitCode), [0]);
});

test("a file: probe that is true at once writes no READY for a sidecar that never ran (stop file there, command not found)", async () => {
  const dir = tempDir();
  writeFileSync(join(dir, "last"), "");
  const probe = ["--ready-probe", `file:${join(dir, "last")}`];
  const stopped = await sidecar(dir, ["--stop-file", join(dir, "last"), ...probe, "--ready-file", join(dir, "r1"), "--", "sleep", "100"], { name: "a" }).exited;
  assert.equal(stopped.code, 0, stopped.stderr);
  assert.equal(existsSync(join(dir, "r1")), false);
  assert.equal(existsSync(join(dir, "r1.err")), true);
  const missing = await sidecar(dir, ["--stop-file", join(dir, "never"), ...probe, "--ready-file", join(dir, "r2"), "--", "no-such-command-here"], { name: "b" }).exited;
  assert.equal(missing.code, 127, missing.stderr);
  assert.equal(existsSync(join(dir, "r2")), false);
  assert.equal(existsSync(join(dir, "r2.err")), true);
});

test("twelve stop files: no Node warning on stderr (one abort signal shared by every wait)", async () => {
  const dir = tempDir();
  const files = Array.from({ length: 12 }, (_, i) => join(dir, `s${i}`));
  const baton = sidecar(dir, [...files.flatMap((f) => ["--stop-file", f]), "--", "sleep", "100"], { name: "many" });
  await eventSeen(baton.events, "command"); // waiting, with its command running: a warning has had its turn to print
  writeFileSync(files[11]!, "");
  const exit = await baton.exited;
  assert.equal(exit.code, 0, exit.stderr);
  assert.doesNotMatch(exit.stderr, /MaxListenersExceededWarning/);
});

test("a sidecar whose stop file is already there (a restarted container) is not started: exit 0 at once", async () => {
  const dir = tempDir();
  writeFileSync(join(dir, "last"), "");
  const baton = sidecar(dir, ["--stop-file", join(dir, "last"), "--", "touch", join(dir, "ran")]);
  const exit = await baton.exited;
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(existsSync(join(dir, "ran")), false);
  assert.deepEqual(eventsNamed(baton.events, "command"), []);
  assert.deepEqual(eventsNamed(baton.events, "stopping").map((e) => e.file), [join(dir, "last")]);
});

test("as PID 1, a sidecar whose children end on SIGTERM stops at once: its unreaped zombies do not wait out the grace", { skip }, async () => {
  const dir = tempDir();
  // sh dies of TERM in `wait`; its two children die too and, orphaned, become zombies of baton (PID 1).
  const script = `sleep 1000 & sleep 1000 & echo > ${dir}/up; wait`;
  const baton = sidecar(dir, ["--stop-file", join(dir, "last"), "--grace-period", "20s", "--", "sh", "-c", script], { pid1: true });
  await fileAppears(join(dir, "up"));
  const stoppedAt = Date.now();
  writeFileSync(join(dir, "last"), "");
  const exit = await baton.exited;
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(exit.stderr, "");
  assert.ok(Date.now() - stoppedAt < 10_000, "the stop waited for the grace period");
});

test("as PID 1, a stop file that appears while a forwarded SIGTERM is being handled makes the stop on purpose: exit 0", { skip }, async () => {
  const dir = tempDir();
  // The sidecar takes a while to shut down on TERM and then fails (exit 5); the last step ends meanwhile.
  const script = `trap 'echo > ${dir}/got; sleep 0.5; exit 5' TERM; echo > ${dir}/up; while :; do sleep 0.05; done`;
  const baton = sidecar(dir, ["--stop-file", join(dir, "last"), "--", "sh", "-c", script], { pid1: true });
  const pid = await baton.hostPid();
  await fileAppears(join(dir, "up"));
  process.kill(pid, "SIGTERM");
  await fileAppears(join(dir, "got"));
  writeFileSync(join(dir, "last"), "");
  const exit = await baton.exited;
  assert.equal(exit.code, 0, exit.stderr);
  assert.deepEqual(eventsNamed(baton.events, "stopping").map((e) => e.file), [join(dir, "last")]);
});

test("a ready file that cannot be written (disk full): the sidecar is stopped, one line, exit 1", { skip: !IS_ROOT && "needs root to mount a tmpfs" }, async () => {
  const dir = tempDir();
  mkdirSync(join(dir, "full"));
  const events = join(dir, "events");
  // A 4 KiB tmpfs, filled up, in a mount namespace of its own so nothing leaks onto the host.
  const exit = await startBaton(
    ["sidecar", "--stop-file", join(dir, "last"), "--ready-probe", `file:${dir}`, "--ready-file", join(dir, "full/ready"), "--", "sleep", "1000"],
    { prefix: inMountNamespace(fullDisk(`${dir}/full`, "4k")), env: cleanEnv({ BATON_EVENTS: events }) },
  ).exited;
  assert.equal(exit.code, 1);
  assert.match(exit.stderr, /^baton: cannot write ready file .*\/full\/ready: .*ENOSPC.*$/m); // after head's own complaint
  assert.deepEqual(readEvents(events).filter((e) => e.event === "exited").map((e) => e.signal), ["SIGTERM"]);
});
