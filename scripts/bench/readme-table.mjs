// Prints README.md's table "baton beside Tekton's entrypoint, Argo's emissary and tini" from one `make bench` run, so
// that its figures are that run's and not typed by hand:
//   node scripts/bench/readme-table.mjs [.bench/results.json]
// Paste it, with the run's table into docs/performance.md: test/unit/figures.test.ts checks that README.md's figures
// are those of the run performance.md holds.
// Each cell is a median, from the row named in its first column (docs/performance.md says how each is measured). A
// peer's cell is empty where the run skipped it, or where the peer does not do the thing (tini orders no steps).
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { fmtMs } from "./rows.mjs";

const file = resolve(process.argv[2] ?? new URL("../../.bench/results.json", import.meta.url).pathname);
const result = JSON.parse(readFileSync(file, "utf8"));

/** The row `id`, on the runtime whose label starts with `runtime` (rows run once per runtime), if the run has it. */
function row(id, runtime) {
  return result.rows.find((r) => r.id === id && !r.skipped && (runtime === undefined || r.runtime?.startsWith(runtime)));
}
function median(r, label) {
  if (!r) return undefined;
  if (label === undefined) return r.stats?.median;
  return r.references.find((ref) => ref.label === label)?.stats?.median;
}
const ms = (v) => (v === undefined ? "" : fmtMs(v));
const mib = (v) => (v === undefined ? "" : `${v.toFixed(1)} MiB`);
/** "A (what), B (what)" of the values present. */
const both = (...parts) => parts.filter(([v]) => v !== undefined && v !== "").map(([v, what]) => (what ? `${v} (${what})` : v)).join(", ");

const rt = (id) => [row(id, "Node 24"), row(id, "standalone")];
const [start24, startSea] = rt("3");
const [whole24, wholeSea] = rt("1c");
const [mem24, memSea] = rt("5");
const onceNode = result.machine?.node ? `Node ${result.machine.node.slice(1).split(".").slice(0, 2).join(".")}` : "this machine's Node";

const lines = [
  ["", "baton", "tini", "Tekton's entrypoint", "Argo's emissary"],
  [
    "start-up: `WRAPPER -- /bin/true`, spawn -> exit (rows 3, 9b)",
    both([ms(median(start24)), "Node 24"], [ms(median(startSea)), "standalone"], [ms(median(row("9b"))), `\`baton emissary\`, ${onceNode}`]),
    ms(median(start24 ?? startSea, "tini -- /bin/true")),
    ms(median(start24 ?? startSea, "Tekton's entrypoint -- /bin/true")),
    both([ms(median(start24 ?? startSea, "Argo's emissary -- /bin/true")), "its reaping loop sleeps 1 s"]),
  ],
  [
    "hand-off: command N exits -> command N+1 starts (rows 1c, 9)",
    both([ms(median(whole24)), "Node 24"], [ms(median(wholeSea)), "standalone"], [ms(median(row("9"))), `Argo container set, ${onceNode}`]),
    "",
    ms(median(whole24 ?? wholeSea, "Tekton's entrypoint (1 s poll): whole hand-off")),
    ms(median(row("9"), "Argo's emissary, A and B")),
  ],
  [
    "hand-off: post file in place -> next command starts (row 1)",
    both([ms(median(row("1"))), onceNode]),
    "",
    ms(median(row("1"), "Tekton's entrypoint (1 s poll)")),
    "",
  ],
  [
    "private memory (`RssAnon`) while the command runs (rows 5, 9c)",
    both([mib(median(mem24, "RssAnon (private) while the command runs")), "Node 24"], [mib(median(memSea, "RssAnon (private) while the command runs")), "standalone"], [mib(median(row("9c"))), `\`baton emissary\`, ${onceNode}`]),
    mib(median(mem24 ?? memSea, "tini RssAnon")),
    mib(median(mem24 ?? memSea, "Tekton's entrypoint RssAnon")),
    mib(median(row("9c"), "Argo's emissary -- CMD")),
  ],
  // Row 10, when the run has it (a run before tracing does not): start-up and RssAnon of a step with tracing off and on.
  ...(row("10", "Node 24") || row("10", "standalone")
    ? [[
        "tracing off -> on (to an OTLP/HTTP collector): start-up, `RssAnon` (row 10)",
        both(
          [`${ms(median(row("10", "Node 24")))} -> ${ms(median(row("10", "Node 24"), "start-up, tracing to an HTTP collector"))}, ${mib(median(row("10", "Node 24"), "RssAnon while the command runs, tracing off"))} -> ${mib(median(row("10", "Node 24"), "RssAnon while the command runs, tracing to an HTTP collector"))}`, "Node 24"],
        ),
        "",
        "",
        "",
      ]]
    : []),
  [
    "a 20-step chain of `/bin/true`, every step waiting (rows 2, 9d)",
    both([ms(median(row("2"))), `Tekton's layout, ${onceNode}`], [ms(median(row("9d"))), "Argo container set"]),
    "",
    ms(median(row("2"), "Tekton's entrypoint (1 s poll)")),
    ms(median(row("9d"), "Argo's emissary (1 s loops)")),
  ],
];

const peers = result.peers ?? {};
const version = (key) => peers[key]?.version ?? "skipped";
const m = result.machine;
process.stdout.write([
  ...lines.map((l, i) => (i === 1 ? [`|${l.map(() => "---").join("|")}|`, `| ${l.join(" | ")} |`] : [`| ${l.join(" | ")} |`])).flat(),
  "",
  `Medians of one \`make bench\` run (${result.when.slice(0, 10)}, commit ${result.commit}${result.quick ? ", --quick" : ""}): ${m.nproc} x ${m.cpuModel}, ` +
    `load ${m.loadAverageAtStart[0]} at start and ${result.loadAverageAtEnd[0]} at end (1-min average); Tekton's entrypoint ${version("tekton")}, ` +
    `Argo's argoexec ${version("argoexec")}, tini ${version("tini")}.`,
  "",
].join("\n"));
