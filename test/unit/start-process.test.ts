import { spawnProcessCases } from "./start-process-cases.js";

spawnProcessCases("process_wrap", true, () => import("../../src/run/start-process.js"));
