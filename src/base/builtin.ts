// A Node built-in module, loaded when it is first needed instead of at start-up. A static import of node:stream,
// node:child_process, node:zlib or node:crypto would be paid by every step, most of which never use it: in start-up
// time and in what a waiting step holds (make bench, rows 2 and 8). process.getBuiltinModule is Node >= 20.16;
// before it, the bundle's own CommonJS require (not node:module's createRequire, which loads the ESM loader).

export function lazyBuiltin<T>(id: string): T {
  const get = (process as unknown as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  return (get ? get(id) : require(id)) as T;
}
