// Tracing's dependency question (docs/performance.md "Tracing: the SDK or our encoder"): what OpenTelemetry's own JS
// SDK and OTLP exporters would cost a traced step, against the small encoder of src/trace (otlp-proto.ts, export-http.ts).
// Each candidate is bundled by esbuild as baton's chunks are (CommonJS, minified, node20), and does what a traced
// step does at its exit: make a step's six spans and send them, once, to a collector on 127.0.0.1 (in this process).
// A fresh Node in a clean environment (`PATH` only) times the load (read, compile, evaluate, the built-ins it pulls in)
// and the export, and reads its RssAnon after both; the candidates and an empty bundle interleaved, on each pinned Node
// (`make nodes`), ROUNDS rounds after two warm-up ones.
//
//   node scripts/bench/otel-sdk.mjs [ROUNDS]      (default 20; installs the pinned versions into .bench/otel first)
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { build } from "esbuild";

const ROOT = resolve(import.meta.dirname, "../..");
const DIR = join(ROOT, ".bench/otel");
const ROUNDS = Number(process.argv[2] ?? 20);
/**
 * The SDK's newest release line that runs on Node 20 (engines ^18.19.0 || >=20.6.0): sdk-trace-base 2.12.1 with the
 * exporters built against it. The newer line (sdk-trace 3.1.1, exporters 0.301.2) needs Node >= 22.15.0: baton
 * supports Node >= 20, so it is no candidate.
 */
const PACKAGES = [
  "@opentelemetry/api@1.9.0",
  "@opentelemetry/sdk-trace-base@2.12.1",
  "@opentelemetry/resources@2.12.1",
  "@opentelemetry/exporter-trace-otlp-proto@0.223.1",
  "@opentelemetry/exporter-trace-otlp-http@0.223.1",
];

mkdirSync(DIR, { recursive: true });
if (!existsSync(join(DIR, "node_modules/.package-lock.json"))) {
  writeFileSync(join(DIR, "package.json"), "{}\n");
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--prefix", DIR, ...PACKAGES], { stdio: "inherit" });
}

/** A step's six spans: (name, start offset ms, end offset ms, parent 0 = the root). */
const SPANS = `const SPANS = [["step", 0, 50, -1], ["prepare", 0, 40, 0], ["wait", 40, 45, 0], ["command", 45, 48, 0], ["hand-on", 48, 49, 0]];`;

const SDK = (exporterPackage) => `
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { OTLPTraceExporter } from "${exporterPackage}";
import { trace, context } from "@opentelemetry/api";
${SPANS}
export async function run(url) {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": "baton", "k8s.pod.name": "pod" }),
    spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url, timeoutMillis: 2000 }))],
  });
  const tracer = provider.getTracer("baton", "0.1.0");
  const t0 = Date.now();
  const made = [];
  for (const [name, start, , parent] of SPANS) {
    const ctx = parent < 0 ? context.active() : trace.setSpan(context.active(), made[parent]);
    made.push(tracer.startSpan(name, { startTime: t0 + start, attributes: { "baton.engine": "plain", "process.exit.code": 0 } }, ctx));
  }
  SPANS.forEach(([, , end], i) => made[i].end(t0 + end));
  await provider.forceFlush();
  await provider.shutdown();
}
`;

const OURS = `
import { encodeRequestProto } from ${JSON.stringify(join(ROOT, "src/trace/otlp-proto.ts"))};
import { sendHttp } from ${JSON.stringify(join(ROOT, "src/trace/export-http.ts"))};
import { randomId } from ${JSON.stringify(join(ROOT, "src/trace/context.ts"))};
${SPANS}
export async function run(url) {
  const t0 = Date.now();
  const traceId = randomId(16);
  const ids = SPANS.map(() => randomId(8));
  const spans = SPANS.map(([name, start, end, parent], i) => ({ traceId, spanId: ids[i], parentSpanId: parent < 0 ? undefined : ids[parent], name, start: t0 + start, end: t0 + end, attributes: [["baton.engine", "plain"], ["process.exit.code", 0]] }));
  const body = encodeRequestProto([["service.name", "baton"], ["k8s.pod.name", "pod"]], { name: "baton", version: "0.1.0" }, spans);
  const line = await sendHttp(new URL(url), body, false, {}, performance.now() + 2000);
  if (line !== undefined) throw new Error(line);
}
`;

async function bundle(name, source) {
  const entry = join(DIR, `${name}.entry.mjs`);
  writeFileSync(entry, source);
  const out = join(DIR, `${name}.cjs`);
  await build({ entryPoints: [entry], outfile: out, bundle: true, platform: "node", format: "cjs", target: "node20", minify: true, legalComments: "none", logLevel: "error", nodePaths: [join(DIR, "node_modules")] });
  return out;
}

const files = {
  empty: await bundle("empty", "export async function run() {}"),
  "baton's encoder (src/trace)": await bundle("ours", OURS),
  "SDK + exporter-trace-otlp-proto": await bundle("sdk-proto", SDK("@opentelemetry/exporter-trace-otlp-proto")),
  "SDK + exporter-trace-otlp-http (JSON)": await bundle("sdk-http", SDK("@opentelemetry/exporter-trace-otlp-http")),
};

// Loads the bundle, runs its export, prints the times and RssAnon.
const runner = join(DIR, "run.cjs");
writeFileSync(runner, `const t0 = process.hrtime.bigint();
const { run } = require(process.argv[2]);
const t1 = process.hrtime.bigint();
run(process.argv[3]).then(() => {
  const t2 = process.hrtime.bigint();
  const anon = Number(/RssAnon:\\s+(\\d+)/.exec(require("fs").readFileSync("/proc/self/status", "utf8"))[1]);
  process.stdout.write(JSON.stringify({ load: Number(t1 - t0) / 1e6, export: Number(t2 - t1) / 1e6, anon }));
  process.exit(0);
}, (e) => { console.error(e); process.exit(1); });
`);

const server = createServer((request, response) => {
  request.resume();
  request.on("end", () => response.writeHead(200, { "content-type": request.headers["content-type"] }).end());
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const url = `http://127.0.0.1:${server.address().port}/v1/traces`;

function once(node, file) {
  return new Promise((resolveRun, reject) => {
    const child = spawn(node, [runner, file, url], { env: { PATH: "/usr/bin:/bin" } });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("close", (code) => (code === 0 ? resolveRun(JSON.parse(out)) : reject(new Error(`${file}: ${err}`))));
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const nodes = ["20", "22", "24"].map((v) => [v, join(ROOT, `scripts/nodes/node_modules/node-${v}/bin/node`)]).filter(([, bin]) => existsSync(bin));
if (nodes.length === 0) throw new Error("no pinned Node: run `make nodes`");
console.log(`${ROUNDS} interleaved rounds per Node, load ${loadavg()[0].toFixed(2)} at start; ${PACKAGES.join(", ")}`);
console.log(`bundle sizes (minified): ${Object.entries(files).filter(([n]) => n !== "empty").map(([n, f]) => `${n} ${(statSync(f).size / 1024).toFixed(1)} KB`).join(", ")}`);
for (const [version, node] of nodes) {
  const samples = Object.fromEntries(Object.keys(files).map((k) => [k, []]));
  for (let round = 0; round < ROUNDS + 2; round++) {
    for (const [name, file] of Object.entries(files)) {
      const sample = await once(node, file);
      if (round >= 2) samples[name].push(sample);
    }
  }
  const base = samples.empty;
  const m = (name, key) => median(samples[name].map((s) => s[key]));
  console.log(`Node ${version}:`);
  for (const name of Object.keys(files).filter((n) => n !== "empty")) {
    console.log(`  ${name.padEnd(38)} load +${(m(name, "load") - m("empty", "load")).toFixed(2)} ms, export ${m(name, "export").toFixed(2)} ms, RssAnon +${((m(name, "anon") - m("empty", "anon")) / 1024).toFixed(2)} MiB`);
  }
  void base;
}
console.log(`load ${loadavg()[0].toFixed(2)} at end`);
server.close();
