// The entry of the Tekton chunk (src/chunks.ts, which declares what it must provide: TektonChunk): Tekton's features
// that act around a step's command. Nothing here is loaded unless a step uses one of them.
export { decideTektonCommand, prepareTektonFeatures, whenNeedsCel } from "./step-features.js";
export { waitBeforeStep, waitForBreakpointExit } from "./debug.js";
