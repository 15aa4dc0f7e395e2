// `make bench`: baton's speed beside the reference tools, measured in one run on this machine.
// Prints one table and writes it to .bench/results.json (and .bench/results.md, the table of docs/performance.md).
//   node scripts/bench.mjs [--quick] [--only 1,3,...] [--runtimes 20,22,24,sea] [--bundle FILE.cjs] [--baton PATH]
//                          [--steps 50,200,500] [--start-last-first] [--command-ms N] [--inotify-limit N]
// Rows 1c, 3, 5, 6 and 8 run once per runtime: the bundle on each pinned Node (scripts/nodes) and the standalone build,
// each beside its own Node's figures; the other rows once, on dist/baton.cjs started by its shebang (this machine's
// `node`). --bundle runs another bundle on the pinned Nodes; --baton PATH measures one other baton in every row (both
// for before/after figures). --steps lists the N of row 8 (N steps waiting at once), one row each; --start-last-first
// starts row 8's steps from the last to the first (the chain then begins with the youngest processes: a diagnostic,
// docs/performance.md); --command-ms N makes each of row 8's commands take N ms, as real steps take a while (another);
// --inotify-limit N gives row 8's steps N inotify instances instead of 16 (with --bundle: a baton that watches with
// inotify, given all it wants: docs/performance.md). `--only 8 --bundle scripts/bench/bare-step.cjs` runs row 8 on a
// bare Node step that only waits and spawns (the row's floor on this machine, the same section).
// Every timed process starts with a clean environment (PATH only). Needs gcc (the C probes) and, for rows 4
// and 7, root (PID namespaces). tini and dumb-init are installed with apt-get when missing. The real peers (Tekton's
// entrypoint, Argo's argoexec) come from `make peers` ($BATON_PEERS/peers.tsv); a missing one has its columns skipped.
// With argoexec, the bench runs in a mount namespace of its own, whose /var/run/argo is a tmpfs (scripts/bench/peers.mjs).
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { msBetween, now } from "./bench/lib.mjs";
import {
  chain, fmtMs, handoffBetweenBatons, handoffLatency, memory, outputCapture, signalLatency, startup, unguardedWindow,
  startupSignalWindow, wholeHandoff,
} from "./bench/rows.mjs";
import { argoChain, argoHandoff, argoMemory, argoStartup } from "./bench/argo-handoff.mjs";
import { argoNamespace, findPeers } from "./bench/peers.mjs";
import { findRuntimes } from "./bench/runtimes.mjs";
import { DEFAULT_SCALE_STEPS, waitingAtScale } from "./bench/scale.mjs";
import { tracingCost } from "./bench/tracing.mjs";
import { compileProbes, machine, referenceTools } from "./bench/setup.mjs";

const ROOT = resolve(new URL("..", import.meta.url).pathname);
const OUT = join(ROOT, ".bench");

const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const option = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const quick = flag("--quick");
const only = option("--only")?.split(",");
const batonPath = option("--baton") && resolve(option("--baton"));
const baton = batonPath ?? join(ROOT, "dist/baton.cjs");
const runtimeKeys = option("--runtimes")?.split(",");
const scaleSteps = option("--steps")?.split(",").map(Number) ?? (quick ? [50] : DEFAULT_SCALE_STEPS);
const scaleStartLastFirst = flag("--start-last-first");
const scaleCommandMs = option("--command-ms");
const scaleInotifyLimit = option("--inotify-limit");

// Repetitions: enough for a stable median and p95 on a noisy 2-core machine, within the 5-minute budget. The real
// peers wait and reap with 1 s loops, so their figures take a second or so each: fewer of them.
const reps = quick
  ? { handoff: 10, handoffTekton: 5, handoffPair: 5, chain: 3, chainPeer: 0, wholeChain: 1, wholeChainTekton: 0, startup: 10, startupArgo: 2, signal: 5, memory: 3, capture: 2, window: 1, scaleKill: 3, argo: 5, argoPeer: 2 }
  : { handoff: 40, handoffTekton: 20, handoffPair: 30, chain: 10, chainPeer: 1, wholeChain: 3, wholeChainTekton: 1, startup: 40, startupArgo: 8, signal: 30, memory: 6, capture: 5, window: 3, scaleKill: 5, argo: 20, argoPeer: 6 };

// [id, measure, once per runtime]
const ROWS = [
  ["1", handoffLatency, false],
  ["1b", handoffBetweenBatons, false],
  ["1c", wholeHandoff, true],
  ["2", chain, false],
  ["3", startup, true],
  ["3b", unguardedWindow, true],
  ["4", signalLatency, false],
  ["5", memory, true],
  ["6", outputCapture, true],
  ["7", startupSignalWindow, false],
  ["8", waitingAtScale, true],
  ["9", argoHandoff, false],
  ["9b", argoStartup, false],
  ["9c", argoMemory, false],
  ["9d", argoChain, false],
  ["10", tracingCost, true],
];

const onceCache = {};
const log = (message) => process.stderr.write(`bench: ${message}\n`);

async function main() {
  // Argo's emissary needs a /var/run/argo: the bench re-runs itself in a mount namespace that has one (peers.mjs).
  const peers = findPeers();
  if (peers.argoexec.path && !argoNamespace(log)) peers.argoexec = { missing: "no mount namespace with a /var/run/argo of the bench's own (needs root and unshare)" };
  for (const [key, peer] of Object.entries(peers)) if (peer.missing) log(`peer ${key}: ${peer.missing}: its columns are skipped`);
  const began = now();
  mkdirSync(OUT, { recursive: true });
  const tmpRoot = join(OUT, "tmp");
  rmSync(tmpRoot, { recursive: true, force: true });
  mkdirSync(tmpRoot, { recursive: true });
  const ctx = {
    baton,
    reps,
    probes: compileProbes(join(OUT, "bin")),
    tools: referenceTools(log),
    peers,
    // A reference measured once and shown beside every runtime's row (1c's Tekton chain).
    once: (key, measure) => (onceCache[key] ??= measure()),
    root: process.getuid?.() === 0,
    tempDir: (prefix) => mkdtempSync(join(tmpRoot, prefix)),
    scaleSteps,
    scaleStartLastFirst,
    scaleCommandMs,
    scaleInotifyLimit,
  };
  const host = machine(ctx.probes);
  const touch = host.firstTouchMsPerMiB === undefined ? "" : `, first touch of memory ${host.firstTouchMsPerMiB} ms/MiB`;
  log(`baton ${baton}; ${host.nproc} x ${host.cpuModel}, Linux ${host.kernel}, node ${host.node}${touch}, load ${host.loadAverageAtStart.join(" ")}`);
  const bundle = option("--bundle") && resolve(option("--bundle"));
  const runtimes = findRuntimes(ROOT, { only: runtimeKeys, batonPath, bundle, log });
  log(`runtimes: ${runtimes.map((rt) => rt.label).join("; ")}`);

  const rows = [];
  for (const [id, measure, perRuntime] of ROWS) {
    if (only && !only.includes(id)) continue;
    for (const rt of perRuntime ? runtimes : [undefined]) {
      const t0 = now();
      log(`row ${id}${rt ? ` on ${rt.label}` : ""}...`);
      const measured = [await measure(ctx, rt)].flat(); // row 8 gives one row per N
      for (const row of measured) {
        row.seconds = Number((msBetween(t0, now()) / 1000 / measured.length).toFixed(1));
        rows.push(row);
        log(`row ${id}: ${summaryText(row)} (${row.seconds} s)`);
      }
    }
  }
  rmSync(tmpRoot, { recursive: true, force: true });

  const result = {
    when: new Date().toISOString(),
    commit: gitCommit(),
    baton,
    peers,
    machine: host,
    quick,
    reps,
    seconds: Number((msBetween(began, now()) / 1000).toFixed(1)),
    loadAverageAtEnd: loadavg().map((l) => Number(l.toFixed(2))),
    rows,
  };
  writeFileSync(join(OUT, "results.json"), `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(join(OUT, "results.md"), markdown(result));
  process.stdout.write(`\n${table(result)}\n`);
  const busiest = Math.max(host.loadAverageAtStart[0], result.loadAverageAtEnd[0]);
  if (busiest > host.nproc) {
    log(`the machine was busy (1-min load ${busiest} on ${host.nproc} CPUs): other work inflated these figures, the p95 most`);
  }
  log(`${result.seconds} s in all; written to .bench/results.json and .bench/results.md`);
}

function gitCommit() {
  try {
    const sha = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "src", "scripts"], { cwd: ROOT, encoding: "utf8" }).trim();
    return dirty ? `${sha}+changes` : sha;
  } catch {
    return "unknown";
  }
}

function value(row, stat) {
  const v = row.stats?.[stat];
  if (v === undefined) return "";
  if (row.unit === "ms") return fmtMs(v);
  if (row.unit === "MiB") return `${v.toFixed(1)} MiB`;
  if (row.unit === "MiB/s") return `${v.toFixed(0)} MiB/s`;
  return String(v);
}

function referenceText(row, ref) {
  if (ref.text) return `${ref.label}: ${ref.text}`;
  // A reference may be in a unit of its own (row 10: start-up in ms, memory in MiB).
  const unit = { ...row, stats: ref.stats, ...(ref.unit ? { unit: ref.unit } : {}) };
  return `${ref.label} ${value(unit, "median")} / ${value(unit, "p95")}`;
}

function cells(row) {
  const mark = row.pass === true ? "✓ pass" : row.pass === false ? "✗ FAIL" : row.skipped ? "- skip" : "-";
  if (row.skipped) return [row.id, row.figure, "", "", row.target, mark, row.skipped];
  if (row.text) return [row.id, row.figure, row.text, "", row.target, mark, row.references.map((r) => referenceText(row, r)).join("; ")];
  return [row.id, row.figure, value(row, "median"), value(row, "p95"), row.target, mark, row.references.map((r) => referenceText(row, r)).join("; ")];
}

const HEAD = ["#", "figure", "baton median", "p95", "target", "mark", "references (median / p95)"];

function summaryText(row) {
  return cells(row).slice(2).filter(Boolean).join(" | ");
}

function machineLine(r) {
  const m = r.machine;
  const touch = m.firstTouchMsPerMiB === undefined ? "" : `, first touch of memory ${m.firstTouchMsPerMiB} ms/MiB`;
  return `${m.nproc} x ${m.cpuModel}, Linux ${m.kernel}, ${m.os}, Node ${m.node}${touch}, load ${m.loadAverageAtStart[0]} at start, ${r.loadAverageAtEnd[0]} at end (1-min average); ` +
    `commit ${r.commit}, ${r.seconds} s${r.quick ? ", --quick" : ""}`;
}

function table(r) {
  const lines = [HEAD, ...r.rows.map(cells)];
  const widths = HEAD.map((_, i) => Math.max(...lines.map((l) => l[i].length)));
  const fmt = (l) => l.map((c, i) => c.padEnd(widths[i])).join("  ").trimEnd();
  const notes = windowNotes(r);
  return [machineLine(r), "", fmt(lines[0]), widths.map((w) => "-".repeat(w)).join("  "), ...lines.slice(1).map(fmt), "", ...notes].join("\n");
}

/** Row 7 in detail: how many runs handled SIGTERM sent t ms after exec, for baton and each reference. */
function windowNotes(r) {
  return r.rows.filter((row) => row.window).flatMap((row) => [
    `row ${row.id}, SIGTERM handled/runs by t (ms) - baton: ${row.window.profile}`,
    ...row.references.filter((ref) => ref.window).map((ref) => `row ${row.id} - ${ref.label}: ${ref.window.profile}`),
  ]);
}

function markdown(r) {
  const esc = (c) => c.replaceAll("|", "\\|");
  const lines = [HEAD, ...r.rows.map(cells)].map((l) => `| ${l.map(esc).join(" | ")} |`);
  lines.splice(1, 0, `|${HEAD.map(() => "---").join("|")}|`);
  const notes = windowNotes(r).map((n) => `${n}  `);
  return [`Machine: ${machineLine(r)}`, "", ...lines, "", ...notes, ""].join("\n");
}

main().catch((error) => {
  process.stderr.write(`bench: ${error.stack ?? error}\n`);
  process.exit(1);
});
