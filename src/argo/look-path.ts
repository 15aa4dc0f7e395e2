import { accessSync, constants, statSync } from "node:fs";
import { isAbsolute, join } from "node:path";

// Go's exec.LookPath, as the emissary runs it before the command (emissary.go): the command then runs with argv[0]
// the path found. A name with a slash is taken as it is; otherwise each folder of PATH in turn (an empty entry is
// "."), and a program found only relative to the current folder is refused (Go's ErrDot).

export type LookPathResult = { path: string } | { error: string };

export function lookPath(name: string, env: NodeJS.ProcessEnv): LookPathResult {
  if (name.includes("/")) {
    const why = notExecutable(name);
    return why ? { error: `exec: "${name}": ${why}` } : { path: name };
  }
  const path = env.PATH ?? "";
  for (const entry of path === "" ? [] : path.split(":")) {
    const candidate = join(entry === "" ? "." : entry, name);
    if (notExecutable(candidate) !== undefined) continue;
    if (!isAbsolute(candidate)) return { error: `exec: "${name}": cannot run executable found relative to current directory` };
    return { path: candidate };
  }
  return { error: `exec: "${name}": executable file not found in $PATH` };
}

/** undefined when `file` is an executable file; otherwise Go's error text for it. */
function notExecutable(file: string): string | undefined {
  try {
    if (statSync(file).isDirectory()) return "is a directory";
    accessSync(file, constants.X_OK);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return "no such file or directory";
    if (code === "EACCES") return "permission denied";
    return (error as Error).message;
  }
}
