// Runs the test files named on the command line in this one process, one file after another. `node --test` starts a
// process per file, and each start (Node, then tsx and its loader thread) costs more CPU than most unit files' tests
// do. Only for files that neither leave process-wide state behind nor need a module loaded first; one that does (it
// patches process.binding, then loads start-process.ts) runs under `node --test` (UNIT_ISOLATED in the Makefile).
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

for (const file of process.argv.slice(2)) await import(pathToFileURL(resolve(file)).href);
