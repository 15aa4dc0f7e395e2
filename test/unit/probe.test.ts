// The probes and the stop-URL POST against real sockets in this process: each attempt is bounded by its own timeout.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer as createHttpServer, type ServerResponse } from "node:http";
import { createServer as createTcpServer, type Server } from "node:net";
import { readResolvConf, searchNames } from "../../src/sidecar/find-address.js";
import { parseProbe, probeOnce } from "../../src/sidecar/probe.js";
import { postStopUrl } from "../../src/sidecar/stop-url.js";

const never = new AbortController().signal;

async function listen(server: Server | ReturnType<typeof createHttpServer>): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as { port: number }).port;
}

test("tcp: succeeds on a listening port, fails on a closed one", async () => {
  const server = createTcpServer((socket) => socket.destroy());
  const port = await listen(server);
  assert.equal(await probeOnce(parseProbe(`tcp:127.0.0.1:${port}`), 1000, never), true);
  await new Promise((resolve) => server.close(resolve));
  assert.equal(await probeOnce(parseProbe(`tcp:127.0.0.1:${port}`), 1000, never), false);
});

test("http: a server that never answers fails the attempt at its timeout, not later", async () => {
  const hanging: ServerResponse[] = [];
  const server = createHttpServer((_req, res) => hanging.push(res));
  const port = await listen(server);
  try {
    const started = Date.now();
    assert.equal(await probeOnce(parseProbe(`http://127.0.0.1:${port}/`), 200, never), false);
    const took = Date.now() - started;
    assert.ok(took >= 190 && took < 2000, `took ${took} ms`);
  } finally {
    for (const res of hanging) res.destroy();
    server.close();
  }
});

test("exec: exit 0 is ready, anything else is not; a hanging command is killed at the timeout", async () => {
  assert.equal(await probeOnce(parseProbe("exec:exit 0"), 2000, never), true);
  assert.equal(await probeOnce(parseProbe("exec:exit 1"), 2000, never), false);
  const started = Date.now();
  assert.equal(await probeOnce(parseProbe("exec:sleep 30"), 200, never), false);
  assert.ok(Date.now() - started < 5000);
});

test("an aborted attempt ends at once", async () => {
  const abort = new AbortController();
  const attempt = probeOnce(parseProbe("exec:sleep 30"), 30_000, abort.signal);
  abort.abort();
  assert.equal(await attempt, false);
});

test("stop URL: a server that never answers is given up on at the deadline", async () => {
  const hanging: ServerResponse[] = [];
  const server = createHttpServer((_req, res) => hanging.push(res));
  const port = await listen(server);
  try {
    const started = Date.now();
    const outcome = await postStopUrl(new URL(`http://127.0.0.1:${port}/quitquitquit`), 600);
    const took = Date.now() - started;
    assert.equal(outcome.status, null);
    assert.match(outcome.error!, /no answer within/);
    assert.ok(took < 3000, `took ${took} ms`);
  } finally {
    for (const res of hanging) res.destroy();
    server.close();
  }
});

test("the names a lookup tries are glibc's: the search list first below ndots dots, the name as it is first from there", () => {
  const conf = readResolvConf("nameserver 10.0.0.10\nsearch ns.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5 timeout:2\n");
  assert.deepEqual(conf, { search: ["ns.svc.cluster.local", "svc.cluster.local", "cluster.local"], ndots: 5 });
  assert.deepEqual(searchNames("db", conf), ["db.ns.svc.cluster.local", "db.svc.cluster.local", "db.cluster.local", "db"]);
  assert.deepEqual(searchNames("a.b.c.d.e.f", conf).slice(0, 2), ["a.b.c.d.e.f", "a.b.c.d.e.f.ns.svc.cluster.local"]);
  assert.deepEqual(searchNames("db.example.", conf), ["db.example."]);
  assert.deepEqual(readResolvConf(""), { search: [], ndots: 1 });
  assert.deepEqual(searchNames("db.example", readResolvConf("domain corp\n")), ["db.example", "db.example.corp"]);
});
