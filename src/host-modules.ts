// The bundle's own modules that its chunks use, by path: src/chunks.ts answers a chunk's `require("baton-host:PATH")`
// from this table. scripts/build.mjs writes its contents when it builds the bundle (every module of the bundle that a
// chunk imports); run from the sources, chunks are imported as modules, and it stays empty.
export const hostModules: Record<string, unknown> = {};
