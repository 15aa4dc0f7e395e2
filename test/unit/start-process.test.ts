import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnProcessCases } from "./start-process-cases.js";

// Starting a command never asks Node for an internal binding (process.binding): their arguments change between
// majors, and a wrong call aborts the process. make test runs this file on Node 20, 22 and 24.
const asked: string[] = [];
const binding = (process as unknown as { binding(name: string): unknown }).binding;
(process as unknown as { binding(name: string): unknown }).binding = (name: string) => {
  asked.push(name);
  return binding.call(process, name);
};

spawnProcessCases("child_process (no addon beside the sources)", () => import("../../src/run/start-process.js"));

test(`process.binding is never called on Node ${process.versions.node}`, async () => {
  await import("../../src/run/start-process.js");
  assert.deepEqual(asked, []);
});
