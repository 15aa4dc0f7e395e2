// Hostile input before the command, on the bundle (on whichever Node runs the tests): hostile-input-cases.ts, hostile-values-cases.ts.
import { BATON } from "./helpers.js";
import { exactBytesCases, hostileInputCases } from "./hostile-input-cases.js";
import { hostileValueCases } from "./hostile-values-cases.js";

hostileInputCases("the bundle", [process.execPath, BATON]);
exactBytesCases("the bundle", [process.execPath, BATON]);
hostileValueCases("the bundle", [process.execPath, BATON]);
