// docs/reference.md is the one place that states the contract: every flag baton's help prints must be there, and
// every flag it names must be one that baton's help prints (a flag removed from baton must leave the docs too).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { BATON } from "./helpers.js";

const REFERENCE = resolve(import.meta.dirname, "../../docs/reference.md");
const FLAG = /(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*/g;

function flags(text: string): Set<string> {
  return new Set(text.match(FLAG) ?? []);
}

/**
 * Flags docs/reference.md names that are not baton's to print: Node's (what NODE_OPTIONS may hold, "Node's
 * variables"), docker run's --init, and argoexec's kubectl flags, which `baton emissary` accepts and ignores as the
 * reference says (its help is Argo's, not baton's). A flag of baton's own is never listed here.
 */
const OTHERS = new Set([
  "--require", "--import", "--max-old-space-size", "--init",
  "--kubeconfig", "--namespace", "--context", "--server", "--token", "--insecure-skip-tls-verify", "--disable-compression",
]);

function help(...args: string[]): string {
  return execFileSync(process.execPath, [BATON, ...args], { encoding: "utf8", env: { PATH: process.env.PATH } });
}

test("every flag in baton's help is in docs/reference.md, and every flag there is in the help", () => {
  const inHelp = flags([help("--help"), help("sidecar", "--help"), help("init", "--help")].join("\n"));
  const inReference = flags(readFileSync(REFERENCE, "utf8"));
  assert.ok(inHelp.has("--wait-file") && inHelp.has("--stop-file"), "the help lists step and sidecar flags");
  assert.deepEqual([...inHelp].filter((f) => !inReference.has(f)).sort(), [], "in --help but not in docs/reference.md");
  assert.deepEqual([...inReference].filter((f) => !inHelp.has(f) && !OTHERS.has(f)).sort(), [], "in docs/reference.md but not in --help");
  assert.deepEqual([...OTHERS].filter((f) => inHelp.has(f)), [], "a flag listed as another program's is baton's own");
});

test("the bundle's size that README.md states is the bundle's size (within 15%)", () => {
  const readme = readFileSync(resolve(import.meta.dirname, "../../README.md"), "utf8");
  const stated = /`dist\/baton\.cjs` \((\d+) KB/.exec(readme);
  assert.ok(stated, "README.md states the size of dist/baton.cjs as `dist/baton.cjs` (N KB");
  const actual = statSync(BATON).size / 1000;
  assert.ok(Math.abs(actual - Number(stated[1])) <= actual * 0.15, `README.md says ${stated[1]} KB, dist/baton.cjs is ${actual.toFixed(1)} KB`);
});

test("the addon's size and number of functions that README.md states are the addon's (size within 15%)", () => {
  const readme = readFileSync(resolve(import.meta.dirname, "../../README.md"), "utf8");
  const stated = /`dist\/baton-reaper\.node` beside it \([^)]*; (\d+) KB, (\d+) functions\)/.exec(readme);
  assert.ok(stated, "README.md states the addon's size and functions as `dist/baton-reaper.node` beside it (...; N KB, M functions)");
  const addon = resolve(dirname(BATON), "baton-reaper.node");
  const size = statSync(addon).size / 1000;
  assert.ok(Math.abs(size - Number(stated[1])) <= size * 0.15, `README.md says ${stated[1]} KB, dist/baton-reaper.node is ${size.toFixed(1)} KB`);
  const module = { exports: {} as Record<string, unknown> };
  process.dlopen(module, addon);
  const functions = Object.values(module.exports).filter((value) => typeof value === "function").length;
  assert.equal(functions, Number(stated[2]), `README.md says ${stated[2]} functions, dist/baton-reaper.node exports ${functions}`);
});
