// The entry of the Tekton chunk: Tekton's features that act around a step's command. What it must provide is declared
// in src/tekton/load.ts (TektonChunk). Nothing here is loaded unless a step uses one of them.
export { decideTektonCommand, prepareTektonFeatures, prepareWhen } from "./step-features.js";
export { waitBeforeStep, waitForBreakpointExit } from "./debug.js";
