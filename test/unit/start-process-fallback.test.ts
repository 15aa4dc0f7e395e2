import { spawnProcessCases } from "./start-process-cases.js";

// A Node without the process_wrap binding: starting a command falls back to child_process.
(process as unknown as { binding: () => never }).binding = () => {
  throw new Error("No such module: process_wrap");
};
spawnProcessCases("child_process fallback", false, () => import("../../src/run/start-process.js"));
