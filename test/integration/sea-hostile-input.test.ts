// Hostile input before the command, on the standalone build (make sea): hostile-input-cases.ts, hostile-values-cases.ts.
import { STANDALONE } from "./helpers.js";
import { exactBytesCases, hostileInputCases } from "./hostile-input-cases.js";
import { hostileValueCases } from "./hostile-values-cases.js";

hostileInputCases("the standalone build", [STANDALONE]);
exactBytesCases("the standalone build", [STANDALONE]);
hostileValueCases("the standalone build", [STANDALONE]);
