// Tekton's own entrypoint (`make peers`) as the other waiter in rows 1, 1c and 2: it stats its wait file once a second
// (cmd/entrypoint/waiter.go), runs the command, then writes its post file. Each runs as a step does, with the flags
// Tekton's controller passes, and every file it writes in the row's temp folder:
//   entrypoint -wait_file W -post_file P -termination_path T -step_metadata_dir S -entrypoint CMD -- ARGS...
import { closeSync, openSync, rmSync } from "node:fs";
import { join } from "node:path";
import { expectExit, msBetween, now, readStamp, sleep, start, summarize, waitForLine, whenFileAppears } from "./lib.mjs";

/** A skipped column: the reference is shown with the reason instead of figures. */
export const skippedPeer = (label, peer) => ({ label, text: `skipped (${peer.missing})` });

/** Starts Tekton's entrypoint as step `name` of a pod whose files live in `dir`. */
export function tektonStep(ctx, dir, name, { wait, post, command }) {
  const args = [];
  if (wait) args.push("-wait_file", wait);
  if (post) args.push("-post_file", post);
  args.push("-termination_path", join(dir, `termination-${name}`), "-step_metadata_dir", join(dir, `status-${name}`));
  args.push("-entrypoint", command[0], "--", ...command.slice(1));
  return start(ctx.peers.tekton.path, args);
}

/**
 * Starts `count` steps at random moments within one second, as a pod's containers start, so that their 1 s polls fall
 * at random phases, and resolves 1.2 s after the last one started (every step past its first look at its file).
 */
export async function startAtRandomPhases(count, startStep) {
  const delays = Array.from({ length: count }, () => Math.random() * 999).map((ms, i) => [ms, i]).sort((a, b) => a[0] - b[0]);
  const steps = new Array(count);
  let at = 0;
  for (const [ms, i] of delays) {
    await sleep(ms - at);
    at = ms;
    steps[i] = startStep(i);
  }
  await sleep(1200);
  return steps;
}

/** Row 1's reference: `count` entrypoints waiting at random phases, then every post file written at once. */
export async function tektonHandoff(ctx, count, writePostFile) {
  const dir = ctx.tempDir("handoff-tekton-");
  const f = (name) => join(dir, name);
  const steps = await startAtRandomPhases(count, (i) =>
    tektonStep(ctx, dir, `${i}`, { wait: f(`post-${i}`), post: f(`next-${i}`), command: [ctx.probes.stamp, f(`started-${i}`)] }));
  const posted = steps.map((_, i) => writePostFile(f(`post-${i}`)));
  await Promise.all(steps.map((s) => expectExit(s, "Tekton's entrypoint")));
  const samples = posted.map((t, i) => msBetween(t, readStamp(f(`started-${i}`))));
  rmSync(dir, { recursive: true, force: true });
  return samples;
}

/** Row 2's reference: a chain of `steps` entrypoints of /bin/true at random phases; first wait file -> last post file. */
export async function tektonChain(ctx, steps) {
  const dir = ctx.tempDir("chain-tekton-");
  const post = (i) => join(dir, `post-${i}`);
  const children = await startAtRandomPhases(steps, (i) =>
    tektonStep(ctx, dir, `${i + 1}`, { wait: post(i), post: post(i + 1), command: ["/bin/true"] }));
  const last = whenFileAppears(post(steps), dir, 60_000);
  const t0 = now();
  closeSync(openSync(post(0), "w"));
  const ms = msBetween(t0, await last);
  await Promise.all(children.map((c) => expectExit(c, "Tekton's entrypoint (chain)")));
  rmSync(dir, { recursive: true, force: true });
  return ms;
}

/**
 * Row 1c's reference: a chain of `steps` entrypoints at random phases, each command the step probe; command N exits ->
 * command N+1 starts, split at the post file (stamped by postwatch.c). { whole, toPost, postToStart } in ms.
 */
export async function tektonWholeHandoff(ctx, steps, writePostFile) {
  const dir = ctx.tempDir("whole-tekton-");
  const f = (name) => join(dir, name);
  const watcher = start(ctx.probes.postwatch, [dir, `post-${steps}`], { stdio: ["ignore", "pipe", "pipe"] });
  let seenText = "";
  watcher.stdout.on("data", (chunk) => (seenText += chunk));
  await waitForLine(watcher, "ready");
  const children = await startAtRandomPhases(steps, (i) => tektonStep(ctx, dir, `${i + 1}`, {
    wait: f(`post-${i}`), post: f(`post-${i + 1}`), command: [ctx.probes.stepprobe, f(`started-${i + 1}`), f(`exited-${i + 1}`)],
  }));
  writePostFile(f("post-0"));
  await Promise.all(children.map((c) => expectExit(c, "Tekton's entrypoint (chain step)")));
  await expectExit(watcher, "post file watcher");
  const seen = new Map(seenText.trim().split("\n").map((l) => l.split(" ")).filter((w) => w.length === 2).map(([name, ns]) => [name, BigInt(ns)]));
  const whole = [];
  const toPost = [];
  const postToStart = [];
  for (let i = 1; i < steps; i++) {
    const exited = readStamp(f(`exited-${i}`));
    const next = readStamp(f(`started-${i + 1}`));
    whole.push(msBetween(exited, next));
    const posted = seen.get(`post-${i}`);
    if (posted !== undefined) {
      toPost.push(msBetween(exited, posted));
      postToStart.push(msBetween(posted, next));
    }
  }
  rmSync(dir, { recursive: true, force: true });
  return { whole: summarize(whole), toPost: summarize(toPost), postToStart: summarize(postToStart), samples: { whole, toPost, postToStart } };
}
