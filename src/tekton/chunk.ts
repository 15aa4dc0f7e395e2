// The entry of dist/baton-tekton.cjs (src/process/chunks.ts): Tekton's features that act around a step's command. Nothing
// here is loaded unless a step uses one of them.
export { decideCommand, prepareFeatures } from "./step-features.js";
export { waitBeforeStep, waitForBreakpointExit } from "./debug.js";
