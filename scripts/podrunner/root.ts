// Namespaces and mounts need root. As another user, run this same command again inside a user namespace where we are
// root (unprivileged user namespaces are allowed on most kernels); the caller exits with its status.
import { spawnSync } from "node:child_process";
import { inUserNamespace } from "../bench/namespaces.mjs";

/** undefined: we are root, go on. A number: the re-run's exit status, to exit with. */
export function rerunAsRootIfNeeded(): number | undefined {
  if (process.getuid?.() === 0) return undefined;
  if (process.env.PODRUNNER_USERNS === "1") throw new Error("not root, even in a user namespace");
  const [unshare, ...words] = inUserNamespace("true");
  const again = spawnSync(unshare!, [...words, process.execPath, ...process.execArgv, ...process.argv.slice(1)], {
    stdio: "inherit",
    env: { ...process.env, PODRUNNER_USERNS: "1" },
  });
  if (again.error) throw new Error(`needs root, and could not make a user namespace: ${again.error.message}`);
  return again.status ?? 1;
}
