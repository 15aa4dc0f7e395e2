import { closeSync, constants, openSync } from "node:fs";

// One descriptor kept in reserve from a step's start (main.ts, before anything else takes one), for the moments that
// must not fail for want of one when the step has run out of them (EMFILE): the post file, which needs one at a time,
// a waiter's look at its writer's lock, which would otherwise never see a dead writer (src/handoff/liveness-lock.ts),
// and the addon's dlopen. What it holds open is "/", a folder no neighbour can plant anything at.

let spare: number | undefined;

/** Takes the spare; nothing when one is held already, or none is left to take. */
export function reserveDescriptor(): void {
  if (spare !== undefined) return;
  try {
    spare = openSync("/", constants.O_RDONLY | constants.O_DIRECTORY);
  } catch {
    // Already out of them: nothing to keep.
  }
}

/** Gives the spare back for good: just before the step reports. */
export function releaseDescriptor(): void {
  if (spare === undefined) return;
  try {
    closeSync(spare);
  } catch {
    // already closed
  }
  spare = undefined;
}

/**
 * Runs `use` with the spare's slot free, then takes the spare again. undefined, without running `use`, when there is
 * no spare to lend. `use` must close whatever it opens.
 */
export function withSpareDescriptor<T>(use: () => T): T | undefined {
  if (spare === undefined) return undefined;
  releaseDescriptor();
  try {
    return use();
  } finally {
    reserveDescriptor();
  }
}
