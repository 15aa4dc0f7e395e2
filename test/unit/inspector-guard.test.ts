import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { holdsSocket } from "../../src/process/inspector-guard.js";

test("holdsSocket looks for a socket beyond stdin, stdout and stderr in the fd folder", (t) => {
  const fds = mkdtempSync(join(tmpdir(), "baton-fds-"));
  t.after(() => rmSync(fds, { recursive: true, force: true }));
  symlinkSync("/dev/null", join(fds, "0"));
  symlinkSync("socket:[101]", join(fds, "1")); // a container runtime may hand baton a socket as stdout
  symlinkSync("pipe:[102]", join(fds, "5"));
  symlinkSync("anon_inode:[eventpoll]", join(fds, "6"));
  assert.equal(holdsSocket(fds), false);
  symlinkSync("socket:[103]", join(fds, "27"));
  assert.equal(holdsSocket(fds), true);
});

test("holdsSocket is false where there is no fd folder (no /proc)", () => {
  assert.equal(holdsSocket("/nonexistent/fd"), false);
});
