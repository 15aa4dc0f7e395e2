// The bundle's own modules that its chunks use: src/process/chunks.ts answers a chunk's `require("baton-host:PATH")`
// with hostModule(PATH). scripts/build.mjs writes this function when it builds the bundle (each module of the bundle
// that a chunk imports, with the names it imports); run from the sources, chunks are imported as modules, and it
// knows no module.
export function hostModule(_path: string): unknown {
  return undefined;
}
