// A bare Node step for row 8 (`--bundle scripts/bench/bare-step.cjs`): the least a Node program can do to take its turn
// in the chain, as a floor for baton on the same machine (docs/performance.md, "Row 8 against the design it replaced").
// It takes baton's `--wait-file A --post-file B -- COMMAND...`, and nothing else of baton's: no Tekton, no liveness
// lock, no output, no signal forwarding, no safety of any kind. Its channel is a FIFO, B.bare-wake, held open for
// writing until B is written (or the step dies): a waiter polls A.bare-wake with baton's addon and looks at A once
// it is readable or hung up. The command is started by the addon's posix_spawn, the post file written as temp + rename.
"use strict";
const { closeSync, constants, existsSync, openSync, renameSync, writeFileSync } = require("node:fs");
const { join } = require("node:path");

const addon = require(join(__dirname, "../../dist/baton-reaper.node"));
const args = process.argv.slice(2);
const option = (name) => (args.indexOf(name) >= 0 ? args[args.indexOf(name) + 1] : undefined);
const waitFile = option("--wait-file");
const postFile = option("--post-file");
const command = args.slice(args.indexOf("--") + 1);
const keepAlive = setInterval(() => {}, 2 ** 31 - 1);

// Our own wake FIFO, held read-write: a waiter sees it hang up when we write our post file or die.
let wake;
if (postFile) {
  const fifo = `${postFile}.bare-wake`;
  if (!existsSync(fifo)) addon.makeFifo(fifo);
  wake = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
}

function handOn(code) {
  if (postFile) {
    const file = code === 0 ? postFile : `${postFile}.err`;
    writeFileSync(`${file}.tmp`, `{"exitCode":${code}}\n`);
    renameSync(`${file}.tmp`, file);
    writeFileSync(wake, "x");
    closeSync(wake);
  }
  addon.exitNow(code);
}

function run() {
  const bytes = command.map((word) => Buffer.from(word));
  const env = Object.entries(process.env).map(([k, v]) => Buffer.from(`${k}=${v}`));
  const pid = addon.spawnBytes(bytes[0], bytes, env);
  if (pid < 0) return handOn(127);
  const collect = () => {
    const status = addon.waitStatus(pid);
    if (status !== -1) handOn((status >> 8) & 0xff);
  };
  process.on("SIGCHLD", collect);
  collect();
}

if (!waitFile) {
  run();
} else {
  // Until the writer has made its FIFO (steps start in any order), or for a file no bare step writes (row 8's first
  // step waits for the bench): look every 10 ms.
  const open = () => {
    try {
      return openSync(`${waitFile}.bare-wake`, constants.O_RDONLY | constants.O_NONBLOCK);
    } catch {
      return undefined;
    }
  };
  const follow = (fd) => {
    addon.pollWake(fd, () => (existsSync(waitFile) ? run() : handOn(1)));
    if (existsSync(waitFile)) run();
  };
  const first = open();
  if (first !== undefined) follow(first);
  else {
    const retry = setInterval(() => {
      if (existsSync(waitFile)) {
        clearInterval(retry);
        return run();
      }
      const fd = open();
      if (fd === undefined) return;
      clearInterval(retry);
      follow(fd);
    }, 10);
  }
}
void keepAlive;
