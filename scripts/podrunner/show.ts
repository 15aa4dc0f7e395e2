// Runs every pod of a manifest with the live view, then prints the timeline and writes it as SVG.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { EnvOverride } from "./env.js";
import { liveView } from "./live.js";
import { loadManifest } from "./manifest.js";
import { runPod, type PodResult } from "./pod.js";
import { paint } from "./style.js";
import { drawSvg, drawTerminal } from "./timeline.js";

export interface ShowOptions {
  env?: EnvOverride[];
  svg?: string;
  runDir?: string;
  deadline?: number;
  logs?: boolean;
  imageEnv?: Record<string, string>;
  write?: (line: string) => void;
  color?: boolean;
}

export async function runAndShow(manifest: string, options: ShowOptions = {}): Promise<PodResult[]> {
  const color = options.color ?? (Boolean(process.stdout.isTTY) && !process.env.NO_COLOR);
  const c = paint(color);
  const write = options.write ?? ((line: string) => void process.stdout.write(line + "\n"));
  const results: PodResult[] = [];
  for (const pod of loadManifest(manifest)) {
    const names = [...(pod.spec.initContainers ?? []), ...pod.spec.containers].map((x) => x.name);
    write(c.bold(`${pod.kind} ${pod.name}: ${pod.spec.initContainers?.length ?? 0} init container(s), ${pod.spec.containers.length} container(s)`));
    const t0 = Date.now();
    const result = await runPod(pod, {
      ...(options.runDir ? { runDir: join(options.runDir, pod.name) } : {}),
      env: options.env ?? [],
      ...(options.deadline ? { deadlineSeconds: options.deadline } : {}),
      ...(options.imageEnv ? { imageEnv: options.imageEnv } : {}),
      onActivity: liveView({ t0, logs: options.logs ?? true, color, write, width: Math.max(...names.map((n) => n.length)) }),
    });
    results.push(result);
    write("");
    for (const line of drawTerminal(result, { color })) write(line);
    write("");
    for (const s of [...result.initContainers, ...result.containers]) {
      if (s.message.trim()) write(`${c.bold(s.name)} termination message: ${s.message.trim()}`);
    }
    const svgPath = options.svg ?? join(result.runDir, "timeline.svg");
    mkdirSync(dirname(svgPath), { recursive: true });
    writeFileSync(svgPath, drawSvg(result));
    const phase = result.phase === "Succeeded" ? c.green(result.phase) : c.red(result.phase);
    const job = pod.kind === "Job" ? `Job ${String((pod.document.metadata as { name?: string })?.name)}: ${result.phase === "Succeeded" ? "Complete" : "Failed"}; ` : "";
    write(`${job}pod ${pod.name}: ${phase}${result.reason ? ` (${result.reason})` : ""}`);
    write(`timeline: ${svgPath}`);
    write(`logs, events and volumes: ${result.runDir}`);
  }
  return results;
}
