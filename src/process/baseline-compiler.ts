import { loadNativeAddon } from "../addon/load-addon.js";

// A step that has waited a while is past start-up, and what is left of its life is the hand-on path: a few
// milliseconds of JavaScript, each function run once or a few times. V8's baseline compiler (Sparkplug) still
// compiles every function whose budget the wake-up crosses, on a worker thread, for calls that never come: 1.3-2.1 ms
// of CPU per step on Node 22 and 24 (Node 20 compiles none there), at the moment the next step starts
// (docs/performance.md, "The baseline compiler"). So a waiting step turns it off when it trims
// (src/process/trim-memory.ts), by V8's own SetFlagsFromString, from the addon: node:v8's setFlagsFromString would
// cost 5-7 ms to load. Node keeps V8's flags writable after start-up for that public API of its own, and every
// supported Node runs this in the tests.
//
// Changing a V8 flag changes V8's flag hash, and a code cache made under another hash is refused: every Node built-in
// module compiled after this compiles from its source (~2 x slower to load). A plain step loads none on its hand-on
// path (test/integration/eager-functions.test.ts checks), but a step with Tekton's features may (a CEL worker's
// bootstrap, zlib): such a step keeps the compiler.

/** true when the compiler is off from now on; false when this Node or addon cannot do it (then nothing changed). */
export function stopBaselineCompiler(): boolean {
  try {
    return loadNativeAddon().stopBaselineCompiler?.() === 1;
  } catch {
    return false; // no addon: the compiler stays, nothing else changes
  }
}
