// Hostile input before the command, on the bundle (on whichever Node runs the tests): hostile-input-cases.ts.
import { BATON } from "./helpers.js";
import { hostileInputCases } from "./hostile-input-cases.js";

hostileInputCases("the bundle", [process.execPath, BATON]);
