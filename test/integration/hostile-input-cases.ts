// Hostile input before the command (issue 20): values that must arrive byte for byte, flags named after
// Object.prototype's properties, CEL that would run for ever or exhaust the heap, signals while it runs. The cases are
// written once and run on each build: hostile-input.test.ts (the bundle, on every Node) and sea-hostile-input.test.ts
// (the standalone build).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import {
  IS_ROOT, cleanEnv, eventSeen, existsSync, fileAppears, handlersInstalled, join, readJson, readOr, runBaton, startBaton, tempDir, waitFor,
  type Exit, type StartOptions,
} from "./helpers.js";

/** A Tekton pod's folders, and the flags every step of it gets. */
export function tektonPod() {
  const dir = tempDir();
  const root = join(dir, "tekton");
  mkdirSync(join(root, "run/0"), { recursive: true });
  const post = join(root, "run/0/out");
  const env = cleanEnv({ BATON_TEKTON_ROOT: root, HOME: join(dir, "home") });
  return { dir, root, post, env, base: ["-post_file", post, "-termination_path", join(root, "termination")] };
}

/** Writes step `step`'s result `name` as the previous step would have. */
export function writeResult(root: string, step: string, name: string, value: string | Buffer): void {
  mkdirSync(join(root, "steps", `step-${step}`, "results"), { recursive: true });
  writeFileSync(join(root, "steps", `step-${step}`, "results", name), value);
}

/** No stack trace, no internal error: one line of baton's. */
export function assertOneLine(stderr: string): void {
  assert.doesNotMatch(stderr, /\n\s+at |internal error|FATAL|Aborted/, stderr);
}

/** CEL that nests `depth` macros over a 10-element list: 10^depth steps for .all(), 10^depth lists for .map(). */
export function nestedCel(macro: "all" | "map", depth: number): string {
  let expression = macro === "all" ? "true" : "[0]";
  for (let i = 0; i < depth; i++) expression = `[0,1,2,3,4,5,6,7,8,9].${macro}(x${i}, ${expression})`;
  return macro === "all" ? expression : `${expression} == []`;
}

/**
 * Runs baton and waits for it to end, but no longer than `ms`: the code before the fix never ended (a CEL loop that
 * no signal interrupts), and such a baton is killed here so that the test fails instead of hanging.
 */
export async function runWithin(ms: number, args: string[], options: StartOptions, whenStarted?: (pid: number) => Promise<void>): Promise<Exit> {
  const baton = startBaton(args, options);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      baton.kill();
      reject(new Error(`baton did not end within ${ms} ms`));
    }, ms);
  });
  try {
    if (whenStarted) await Promise.race([baton.hostPid().then(whenStarted), late]);
    return await Promise.race([baton.exited, late]);
  } finally {
    clearTimeout(timer);
  }
}

const skipRoot = !IS_ROOT && "needs root (PID namespace)";

export function hostileInputCases(build: string, baton: readonly string[]): void {
  const words = [...baton];

  test(`${build}: a CEL when of 11 nested .all() is stopped by its time budget: POST.err, exit 1, no command`, async () => {
    const { dir, post, env, base } = tektonPod();
    const when = JSON.stringify([{ cel: nestedCel("all", 11) }]);
    const argv = [...base, "-when_expressions", when, "-entrypoint", "touch", "--", join(dir, "ran")];
    const exit = await runWithin(60_000, argv, { env: { ...env, BATON_CEL_TIMEOUT: "500ms" }, baton: words });
    assert.equal(exit.code, 1, exit.stderr);
    assert.match(exit.stderr, /^baton: the CEL expressions of --when took longer than 500 ms, their budget \(BATON_CEL_TIMEOUT\): stopped$/m);
    assertOneLine(exit.stderr);
    assert.equal(readJson(`${post}.err`).reason, "Error");
    assert.equal(existsSync(join(dir, "ran")), false);
  });

  test(`${build}: a CEL when of 7 nested .map() is stopped by its memory budget, not by V8's abort: POST.err, exit 1`, async () => {
    const { dir, post, env, base } = tektonPod();
    const when = JSON.stringify([{ cel: nestedCel("map", 7) }]);
    const argv = [...base, "-when_expressions", when, "-entrypoint", "touch", "--", join(dir, "ran")];
    // The main thread's heap is capped too (the bundle reads NODE_OPTIONS): the CEL must not grow it at all.
    const limits = { BATON_CEL_MEMORY: "16", BATON_CEL_TIMEOUT: "5m", NODE_OPTIONS: "--max-old-space-size=96" };
    const exit = await runWithin(120_000, argv, { env: { ...env, ...limits }, baton: words });
    assert.equal(exit.code, 1, exit.stderr);
    assert.match(exit.stderr, /^baton: the CEL expressions of --when needed more than 16 MiB, their budget \(BATON_CEL_MEMORY\): stopped$/m);
    assertOneLine(exit.stderr);
    assert.equal(readJson(`${post}.err`).reason, "Error");
    assert.equal(existsSync(join(dir, "ran")), false);
  });

  // What ends a step before its command starts still does while CEL runs: the wait is over ("ready"), the CEL has begun.
  const stoppers = [
    { what: "SIGTERM", args: [] as string[], exitCode: 143, reason: "Signaled", stop: (pid: number) => process.kill(pid, "SIGTERM") },
    { what: "--timeout", args: ["-timeout", "1s"], exitCode: 124, reason: "TimeoutExceeded", stop: () => {} },
    { what: "--cancel-file", args: [], exitCode: 143, reason: "Cancelled", stop: () => {} },
  ];
  for (const { what, args, exitCode, reason, stop } of stoppers) {
    test(`${build}: as PID 1, ${what} while a CEL when runs ends the step: POST.err (${reason}), exit ${exitCode}, no command`, { skip: skipRoot }, async () => {
      const { dir, root, post, env, base } = tektonPod();
      const wait = join(dir, "previous");
      const events = join(dir, "events");
      mkdirSync(join(root, "downward"));
      const cancel = join(root, "downward/cancel");
      writeFileSync(cancel, ""); // mounted, empty until the TaskRun is cancelled
      const when = JSON.stringify([{ cel: nestedCel("all", 11) }]);
      const argv = [...base, ...args, "-wait_file", wait, "-when_expressions", when, "-entrypoint", "touch", "--", join(dir, "ran")];
      const exit = await runWithin(60_000, argv, { env: { ...env, BATON_CEL_TIMEOUT: "1h", BATON_EVENTS: events }, baton: words, pid1: true }, async (pid) => {
        await handlersInstalled(pid);
        writeFileSync(wait, "");
        await eventSeen(events, "ready"); // the wait is over: the CEL runs next, with no turn of the event loop between
        if (what === "--cancel-file") writeFileSync(cancel, "cancelled");
        stop(pid);
      });
      assert.equal(exit.code, exitCode, exit.stderr);
      assertOneLine(exit.stderr);
      assert.equal(readJson(`${post}.err`).reason, reason);
      assert.equal(existsSync(join(dir, "ran")), false);
    });
  }

  test(`${build}: a result's $&, $\`, $' and $$ reach the command byte for byte, in arguments, environment and when`, async () => {
    const { root, post, env, base } = tektonPod();
    const value = "a$&b$`c$'d$$e$1f";
    writeResult(root, "prev", "r", value);
    const when = JSON.stringify([{ input: "$(steps.prev.results.r)", operator: "in", values: [value] }]);
    const argv = [...base, "-when_expressions", when, "-entrypoint", "sh", "--", "-c", 'printf "%s|%s" "$1" "$V"', "sh", "<$(steps.prev.results.r)>"];
    const exit = await runBaton(argv, { env: { ...env, V: "[$(steps.prev.results.r)]" }, baton: words });
    assert.equal(exit.code, 0, exit.stderr);
    assert.equal(exit.stdout, `<${value}>|[${value}]`);
    assert.equal(readJson(post).reason, "Completed");
  });

  test(`${build}: a result named thousands of times is refused before it grows past the substitution limit: POST.err, exit 1`, async () => {
    const { dir, root, post, env, base } = tektonPod();
    writeResult(root, "prev", "r", "v".repeat(4096));
    const argument = "$(steps.prev.results.r)".repeat(4200); // 97 KB here; 17 Mi characters once substituted
    const exit = await runBaton([...base, "-entrypoint", "touch", "--", join(dir, "ran"), argument], { env, baton: words });
    assert.equal(exit.code, 1, exit.stderr.slice(0, 500));
    assert.match(exit.stderr, /^baton: \$\(steps\.prev\.results\.r\): the substituted text would pass 16 Mi characters, baton's limit for a step's substitutions$/m);
    assert.equal(readJson(`${post}.err`).reason, "Error");
    assert.equal(existsSync(join(dir, "ran")), false);
  });

  test(`${build}: an artifact digest that is not a string (a deep array) is refused in one line, not a stack overflow`, async () => {
    const { dir, root, post, env, base } = tektonPod();
    mkdirSync(join(root, "steps/step-prev/artifacts"), { recursive: true });
    const deep = `${"[".repeat(200_000)}${"]".repeat(200_000)}`;
    writeFileSync(join(root, "steps/step-prev/artifacts/provenance.json"), `{"outputs":[{"name":"o","values":[{"uri":"u","digest":{"sha256":${deep}}}]}]}`);
    const exit = await runBaton([...base, "-entrypoint", "touch", "--", join(dir, "ran"), "$(steps.prev.outputs.o)"], { env, baton: words });
    assert.equal(exit.code, 1, exit.stderr);
    assert.match(exit.stderr, /^baton: \$\(steps\.prev\.outputs\.o\): .*provenance\.json: the digest "sha256" is not a string$/m);
    assertOneLine(exit.stderr);
    assert.equal(readJson(`${post}.err`).reason, "Error");
  });

  test(`${build}: a CEL expression of 60 KB that does not compile is named in a short line`, async () => {
    const { post, env, base } = tektonPod();
    const cel = `${"(".repeat(30_000)}true${")".repeat(29_999)}`;
    const exit = await runBaton([...base, "-when_expressions", JSON.stringify([{ cel }]), "-entrypoint", "true", "--"], { env, baton: words });
    assert.equal(exit.code, 1, exit.stderr);
    assert.match(exit.stderr, /^baton: CEL expression "\(+\.\.\." does not compile: /m);
    assert.ok(exit.stderr.length < 1000, `${exit.stderr.length} bytes on stderr`);
    assert.equal(readJson(`${post}.err`).reason, "Error");
  });

  for (const flag of ["-toString=x", "-constructor", "-__proto__", "-hasOwnProperty=1", "-valueOf"]) {
    test(`${build}: Tekton flag ${flag} (an Object.prototype name) is an unknown flag: exit 2, POST.err`, async () => {
      const { dir, post, env } = tektonPod();
      const exit = await runBaton(["-post_file", post, flag, "-entrypoint", "touch", "--", join(dir, "ran")], { env, baton: words });
      assert.equal(exit.code, 2, exit.stderr);
      assert.match(exit.stderr, /^baton: unknown Tekton entrypoint flag -/m);
      assertOneLine(exit.stderr);
      assert.equal(readJson(`${post}.err`).reason, "Error");
      assert.equal(existsSync(join(dir, "ran")), false);
    });
  }

  for (const option of ["--constructor", "--valueOf", "--__proto__", "--toString"]) {
    test(`${build}: baton's ${option} x is an unknown option: exit 2, POST.err, no command`, async () => {
      const dir = tempDir();
      const post = join(dir, "out");
      const exit = await runBaton(["--post-file", post, option, "x", "--", "touch", join(dir, "ran")], { baton: words });
      assert.equal(exit.code, 2, exit.stderr);
      assert.match(exit.stderr, new RegExp(`^baton: unknown option ${option} `, "m"));
      assert.equal(readJson(`${post}.err`).reason, "Error");
      assert.equal(existsSync(join(dir, "ran")), false);
    });
  }

  test(`${build}: sidecar --toString x is an unknown option: exit 2, the ready file's .err`, async () => {
    const dir = tempDir();
    const ready = join(dir, "ready");
    const argv = ["sidecar", "--stop-file", join(dir, "stop"), "--ready-probe", "tcp:127.0.0.1:1", "--ready-file", ready, "--toString", "x", "--", "sleep", "100"];
    const exit = await runBaton(argv, { baton: words });
    assert.equal(exit.code, 2, exit.stderr);
    assert.match(exit.stderr, /^baton: unknown option --toString /m);
    assert.equal(existsSync(`${ready}.err`), true);
  });

  test(`${build}: a ready probe whose host did not resolve (DNS not answering) is ready as soon as the DNS answers`, { skip: skipRoot }, async (t) => {
    const dir = tempDir();
    const log = join(dir, "dns.log");
    // Kubernetes' resolv.conf, with a long timeout: a lookup that gets no answer holds a thread for 30 s per name.
    writeFileSync(join(dir, "resolv.conf"), "nameserver 127.0.0.1\nsearch ns.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5 timeout:30 attempts:1\n");
    const setUp = [
      "ip link set lo up",
      `mount --bind ${dir}/resolv.conf /etc/resolv.conf`,
      `${process.execPath} ${import.meta.dirname}/fake-dns.mjs ${dir}/dns-ready ${dir}/dns-listening ${log} </dev/null >/dev/null 2>&1 &`,
      `while [ ! -e ${dir}/dns-listening ]; do sleep 0.02; done`,
      'exec "$@"',
    ].join("\n");
    // In a PID namespace of its own (baton its PID 1), so that the DNS server ends with it.
    // The sidecar is the service itself: it listens at once; only its name does not resolve yet.
    const server = `require("node:net").createServer((s) => s.end()).listen(8080, "127.0.0.1")`;
    const argv = ["sidecar", "--stop-file", join(dir, "stop"), "--ready-probe", "tcp:service.test:8080", "--ready-file", join(dir, "ready"), "--", process.execPath, "-e", server];
    const sidecar = startBaton(argv, { baton: words, prefix: ["unshare", "--net", "--mount", "--pid", "--fork", "--mount-proc", "--kill-child", "sh", "-c", setUp, "sh"] });
    t.after(() => sidecar.kill());
    // Probes have gone unanswered for a while: 4 queries dropped, each lookup now holding a thread for 30 s.
    await waitFor(() => (readOr(log, "").split("\n").filter((l) => l.startsWith("drop")).length >= 4 ? true : undefined), "4 dropped queries");
    writeFileSync(join(dir, "dns-ready"), "");
    // The DNS answers now: the probe must see it within a few attempts, not after the 30 s of the lookups before.
    await fileAppears(join(dir, "ready"), 15_000);
    assert.match(readFileSync(log, "utf8"), /^answer service\.test\.ns\.svc\.cluster\.local 1$/m);
    writeFileSync(join(dir, "stop"), "");
    const exit = await sidecar.exited;
    assert.equal(exit.code, 0, exit.stderr);
    assertOneLine(exit.stderr);
  });
}

/** Hex of what `sh` was started with: its argv and environment from /proc, as the kernel holds them. */
const SHOW_BYTES = 'od -An -tx1 /proc/$$/cmdline | tr -d " \\n"; echo; od -An -tx1 /proc/$$/environ | tr -d " \\n"';

export function exactBytesCases(build: string, baton: readonly string[]): void {
  test(`${build}: argv and environment that are not UTF-8 reach the command byte for byte`, async () => {
    // The bytes are made by printf, since Node's spawn (this test's) takes strings: N\xffA=v\xfex (a name that is not
    // UTF-8), V=a\xffb, and the command's last argument x\xff\xfey.
    const raw = 'exec env "$(printf "N\\377A=v\\376x")" V="$(printf "a\\377b")" "$@" "$(printf "x\\377\\376y")"';
    const exit = await runBaton(["--", "sh", "-c", SHOW_BYTES, "sh"], { baton: [...baton], prefix: ["sh", "-c", raw, "sh"] });
    assert.equal(exit.code, 0, exit.stderr);
    const [argv, environ] = exit.stdout.trim().split("\n");
    const hex = (text: string) => Buffer.from(text, "latin1").toString("hex");
    assert.ok(argv!.endsWith(`00${hex("sh")}00${hex("x\xff\xfey")}00`), `argv: ${argv}`);
    assert.ok(environ!.includes(`00${hex("N\xffA=v\xfex")}00`) || environ!.startsWith(hex("N\xffA=v\xfex")), `environ: ${environ}`);
    assert.ok(environ!.includes(`00${hex("V=a\xffb")}00`) || environ!.startsWith(hex("V=a\xffb")), `environ: ${environ}`);
    assertOneLine(exit.stderr);
  });

  test(`${build}: such a command is waited for: baton ends with its code, after it, and hands on POST.err`, async () => {
    // The command outlives every other handle of baton's (no wait, no timer): baton ended at once with 0 while it ran.
    const dir = tempDir();
    const raw = 'exec "$@" "$(printf "x\\377y")"';
    const exit = await runBaton(["--post-file", join(dir, "post"), "--", "sh", "-c", 'sleep 0.5; echo "$1"; exit 4', "sh"], { baton: [...baton], prefix: ["sh", "-c", raw, "sh"] });
    assert.equal(exit.code, 4, exit.stderr);
    assert.equal(exit.stdout, "x\ufffdy\n"); // the harness decodes it
    assert.equal(readJson(join(dir, "post.err")).exitCode, 4);
  });

  test(`${build}: a captured command gets such bytes byte for byte too (the addon starts it, with pipes)`, async () => {
    const dir = tempDir();
    const raw = 'exec "$@" "$(printf "x\\377y")"';
    const exit = await runBaton(["--stdout-path", join(dir, "out"), "--", "printf", "%s"], { baton: [...baton], prefix: ["sh", "-c", raw, "sh"] });
    assert.equal(exit.code, 0, exit.stderr);
    assert.deepEqual(readFileSync(join(dir, "out")), Buffer.from("x\xffy", "latin1"));
    assert.equal(exit.stderr, "");
  });
}
