// Hostile input before the command, on the standalone build (make sea): hostile-input-cases.ts.
import { STANDALONE } from "./helpers.js";
import { exactBytesCases, hostileInputCases } from "./hostile-input-cases.js";

hostileInputCases("the standalone build", [STANDALONE]);
exactBytesCases("the standalone build", [STANDALONE]);
