// Hostile input before the command (issue 20): values that must arrive byte for byte, flags named after
// Object.prototype's properties, CEL that would run for ever or exhaust the heap, signals while it runs. The cases are
// written once and run on each build: hostile-input.test.ts (the bundle, on every Node) and sea-hostile-input.test.ts
// (the standalone build).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { cleanEnv, existsSync, join, readJson, runBaton, tempDir } from "./helpers.js";

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

export function hostileInputCases(build: string, baton: readonly string[]): void {
  const words = [...baton];

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
}
