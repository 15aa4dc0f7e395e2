// A clone must hold everything its docs refer to: every relative link (and its #anchor) in the Markdown files, every
// repository path named in the docs and in the code's comments, and nothing that points outside the repository.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");

/** The files of the repository as a clone has them: tracked, plus new files not yet committed (not ignored). */
function repositoryFiles(): string[] {
  const out = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "-z"], { cwd: ROOT, encoding: "utf8" });
  return out.split("\0").filter((f) => f !== "" && existsSync(join(ROOT, f)));
}

const TEXT = /\.(md|ts|mjs|cjs|js|c|h|yaml|yml|json|sh)$|^Makefile$|^\.ci\/run$|^bin\/baton$/;
const files = repositoryFiles().filter((f) => TEXT.test(f) && !f.endsWith("package-lock.json"));
const markdown = files.filter((f) => f.endsWith(".md"));

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes. */
export function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/`/g, "").replace(/[^\p{L}\p{N} _-]/gu, "").replace(/ /g, "-");
}

function anchors(file: string): Set<string> {
  const set = new Set<string>();
  let fenced = false;
  for (const line of readFileSync(join(ROOT, file), "utf8").split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    const m = !fenced && /^#{1,6} (.*)$/.exec(line);
    if (m) set.add(slug(m[1]));
  }
  return set;
}

/** Markdown links and images outside code: [text](target) and ![alt](target). */
function links(text: string): string[] {
  const prose = text.replace(/```[\s\S]*?```/g, "").replace(/`[^`\n]*`/g, "");
  return [...prose.matchAll(/\]\(<?([^)\s>]+)>?(?:\s+"[^"]*")?\)/g)].map((m) => m[1]);
}

test("every relative link in the Markdown files resolves, anchors included", () => {
  const broken: string[] = [];
  for (const file of markdown) {
    for (const target of links(readFileSync(join(ROOT, file), "utf8"))) {
      if (/^[a-z]+:/i.test(target)) continue; // https:, mailto:
      const [path, anchor] = target.split("#");
      const resolved = path === "" ? join(ROOT, file) : resolve(ROOT, dirname(file), path);
      if (!resolved.startsWith(ROOT + "/") && resolved !== ROOT) {
        broken.push(`${file}: ${target} points outside the repository`);
      } else if (!existsSync(resolved)) {
        broken.push(`${file}: ${target} does not exist`);
      } else if (anchor !== undefined && resolved.endsWith(".md") && !anchors(relative(ROOT, resolved)).has(anchor)) {
        broken.push(`${file}: ${target}: no heading #${anchor} in ${relative(ROOT, resolved)}`);
      }
    }
  }
  assert.deepEqual(broken, []);
});

// Paths named in prose and comments: `src/addon/addon.c`, scripts/bench/*.c, docs/standalone.md. dist/, build/ and
// .bench/ are made by the build and the bench, so they are not checked.
const TOP = ["src", "scripts", "test", "examples", "docs", "bin", ".ci"];
const PATH = new RegExp(`(?<![\\w./$-])((?:${TOP.map((t) => t.replace(".", "\\.")).join("|")})/[\\w.*/-]*[\\w*])`, "g");

function exists(path: string): boolean {
  if (!path.includes("*")) return existsSync(join(ROOT, path));
  // A glob in the last part only (scripts/bench/*.c): some file must match it.
  const folder = join(ROOT, dirname(path));
  const pattern = new RegExp(`^${path.split("/").pop()!.replace(/\./g, "\\.").replace(/\*/g, ".*")}$`);
  return existsSync(folder) && statSync(folder).isDirectory() && readdirSync(folder).some((f) => pattern.test(f));
}

test("every repository path named in the docs and the code exists", () => {
  const missing: string[] = [];
  for (const file of files) {
    const text = readFileSync(join(ROOT, file), "utf8");
    for (const m of text.matchAll(PATH)) {
      const path = m[1].replace(/\.$/, "");
      if (path.includes("node_modules")) continue; // made by npm ci
      // Tests build folders of their own (an image root with bin/busybox): only their repository paths are checked.
      if (file.startsWith("test/") && /^(bin|test)\//.test(path) && !/\.(ts|mjs)$/.test(path)) continue;
      if (!exists(path)) missing.push(`${file}: ${path}`);
    }
  }
  assert.deepEqual(missing, []);
});

test("nothing points outside the repository", () => {
  // Spelled in pieces so that this file does not match itself.
  const outside = [".." + "/shared", "/work" + "/", "shared" + "/notes", "shared" + "/spec"];
  const found: string[] = [];
  for (const file of files) {
    const text = readFileSync(join(ROOT, file), "utf8");
    for (const needle of outside) if (text.includes(needle)) found.push(`${file}: ${needle}`);
  }
  assert.deepEqual(found, []);
});
