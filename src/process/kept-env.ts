// The variables the standalone build's launcher kept from baton's Node (scripts/sea/launcher.c): every NODE_* and UV_*
// of the step's environment (and any of its own named BATON_KEPT...), which Node would act on at start-up, reach
// baton renamed BATON_KEPT_<name>, with BATON_KEPT=1. They belong to the command: its environment gets them back under
// their own names, and baton's own process.env never holds them. The bundle is started by the image's Node, which
// reads them before baton's first line: nothing is renamed there (docs/reference.md, "Node's variables").

const MARK = "BATON_KEPT";
const PREFIX = `${MARK}_`;

/** True when the launcher renamed the kept variables (only the standalone build's is trusted to). */
export function launcherKept(env: NodeJS.ProcessEnv): boolean {
  if (env[MARK] !== "1") return false;
  return process.getBuiltinModule?.("node:sea")?.isSea() === true;
}

/** The command's environment: `env` with the kept variables under their own names again, and without the mark. */
export function commandEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (!launcherKept(env)) return env;
  const out: NodeJS.ProcessEnv = {};
  for (const key in env) {
    if (key === MARK) continue;
    out[key.startsWith(PREFIX) ? key.slice(PREFIX.length) : key] = env[key];
  }
  return out;
}

/** The same for one NAME=VALUE entry as the kernel gave it: the prefix off a kept one's name. */
export function keptEntryBytes(entry: Buffer): Buffer {
  return entry.length > PREFIX.length && entry.subarray(0, PREFIX.length).toString("latin1") === PREFIX ? entry.subarray(PREFIX.length) : entry;
}
