import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnProcessCases } from "./start-process-cases.js";

// The module as this Node loads it: process_wrap on Node 20, the one major whose binding baton has checked;
// child_process on every other (make test runs this file on Node 20, 22 and 24).
const onNode20 = process.versions.node.split(".")[0] === "20";

// Any Node but 20 must never touch the binding: on Node 24 its spawn takes other arguments and aborts the process.
const asked: string[] = [];
const binding = (process as unknown as { binding(name: string): unknown }).binding;
(process as unknown as { binding(name: string): unknown }).binding = (name: string) => {
  asked.push(name);
  return binding.call(process, name);
};

test(`process.binding is ${onNode20 ? "asked for process_wrap on Node 20" : `never called on Node ${process.versions.node}`}`, async () => {
  await import("../../src/run/start-process.js");
  assert.deepEqual(asked, onNode20 ? ["process_wrap"] : []);
});

spawnProcessCases(onNode20 ? "process_wrap (Node 20)" : "child_process", onNode20, () => import("../../src/run/start-process.js"));
