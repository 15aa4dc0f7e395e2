// Hostile input before the command, on the bundle (on whichever Node runs the tests): hostile-input-cases.ts.
import { BATON } from "./helpers.js";
import { exactBytesCases, hostileInputCases } from "./hostile-input-cases.js";

hostileInputCases("the bundle", [process.execPath, BATON]);
exactBytesCases("the bundle", [process.execPath, BATON]);
