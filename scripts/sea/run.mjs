// Runs a build tool and returns its stdout; on failure, shows what it printed and names the command.
import { execFileSync } from "node:child_process";

export function run(program, args, options = {}) {
  try {
    return execFileSync(program, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], ...options });
  } catch (error) {
    process.stderr.write(`${error.stdout ?? ""}${error.stderr ?? ""}`);
    const how = error.status ?? error.signal ?? error.code;
    throw new Error(`sea.mjs: ${program} ${args.join(" ")} failed (${how})`);
  }
}
