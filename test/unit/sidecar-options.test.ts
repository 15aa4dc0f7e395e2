import { test } from "node:test";
import assert from "node:assert/strict";
import { BatonError } from "../../src/base/errors.js";
import { parseSidecarOptions, parseSignal } from "../../src/sidecar/options.js";
import { parseProbe } from "../../src/sidecar/probe.js";

const usage = (run: () => unknown, pattern: RegExp) =>
  assert.throws(run, (e: unknown) => e instanceof BatonError && e.exitCode === 2 && pattern.test(e.message));

test("sidecar options: stop files, grace, stop signal, probe, URLs and the command after --", () => {
  const options = parseSidecarOptions(
    ["--stop-file", "a", "--stop-file=b", "--grace-period", "1m30s", "--stop-signal", "quit", "--ready-probe", "tcp:[::1]:5432",
      "--ready-file", "/r", "--stop-url", "http://127.0.0.1:15020/quitquitquit", "--", "postgres", "--stop-file"],
    {},
  );
  assert.deepEqual(options.stopFiles, ["a", "b"]);
  assert.equal(options.gracePeriodMs, 90_000);
  assert.equal(options.stopSignal, "SIGQUIT");
  assert.deepEqual(options.readyProbe, { kind: "tcp", text: "tcp:[::1]:5432", host: "::1", port: 5432 });
  assert.equal(options.readyFile, "/r");
  assert.deepEqual(options.stopUrls.map((u) => u.href), ["http://127.0.0.1:15020/quitquitquit"]);
  assert.deepEqual(options.command, ["postgres", "--stop-file"]);
});

test("sidecar defaults: SIGTERM, 10 s grace", () => {
  const options = parseSidecarOptions(["--stop-file", "a", "--", "envoy"], {});
  assert.equal(options.stopSignal, "SIGTERM");
  assert.equal(options.gracePeriodMs, 10_000);
  assert.equal(options.readyProbe, undefined);
});

test("sidecar usage errors are refused before anything runs", () => {
  usage(() => parseSidecarOptions(["--", "envoy"], {}), /at least one --stop-file/);
  usage(() => parseSidecarOptions(["--stop-file", "a", "--ready-file", "r", "--", "x"], {}), /go together/);
  usage(() => parseSidecarOptions(["--stop-file", "a", "--ready-probe", "tcp:h:1", "--", "x"], {}), /go together/);
  usage(() => parseSidecarOptions(["--stop-file", "a"], {}), /nothing to do/);
  usage(() => parseSidecarOptions(["--stop-file", "a", "--grace-period", "5s", "--stop-url", "http://h/"], {}), /stop a COMMAND/);
  usage(() => parseSidecarOptions(["--stop-file", "a", "--stop-url", "https://h/quit"], {}), /only http/);
  usage(() => parseSidecarOptions(["--stop-file", "a", "--stop-url", "not a url"], {}), /invalid --stop-url/);
  usage(() => parseSidecarOptions(["--stop-file", "", "--", "x"], {}), /non-empty/);
});

test("stop signals by name, short name or number", () => {
  assert.equal(parseSignal("SIGINT"), "SIGINT");
  assert.equal(parseSignal("term"), "SIGTERM");
  assert.equal(parseSignal("9"), "SIGKILL");
  usage(() => parseSignal("SIGNOPE"), /invalid --stop-signal/);
  usage(() => parseSignal("99"), /invalid --stop-signal/);
});

test("ready probes: the four kinds, and what is refused", () => {
  assert.deepEqual(parseProbe("tcp:localhost:80"), { kind: "tcp", text: "tcp:localhost:80", host: "localhost", port: 80 });
  const http = parseProbe("http://127.0.0.1:15021/healthz/ready");
  assert.equal(http.kind === "http" && http.url.pathname, "/healthz/ready");
  assert.deepEqual(parseProbe("file:/run/ready"), { kind: "file", text: "file:/run/ready", path: "/run/ready" });
  assert.deepEqual(parseProbe("exec:pg_isready -h 127.0.0.1"), { kind: "exec", text: "exec:pg_isready -h 127.0.0.1", command: "pg_isready -h 127.0.0.1" });
  usage(() => parseProbe("tcp:80"), /no host/);
  usage(() => parseProbe("tcp:h:0"), /port/);
  usage(() => parseProbe("tcp:h:http"), /port/);
  usage(() => parseProbe("file:"), /no path/);
  usage(() => parseProbe("exec: "), /no command/);
  usage(() => parseProbe("https://h/"), /https is not supported/);
  usage(() => parseProbe("udp:h:53"), /unknown kind/);
});
