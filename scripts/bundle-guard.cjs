// The first code of dist/baton.cjs, its only code that Node compiles: scripts/build.mjs puts it on the line after the
// `#!` line (minified, BATON_* replaced by the build's numbers) and the program's lines after it, each behind `//`, then
// the payload of chunks, then an end mark. Why: Node compiles the whole file before any of it runs, so a copy cut short
// (a full disk, an interrupted cp) ended in Node's SyntaxError and its stack; a line comment is the one thing that stays
// valid wherever it is cut. So this checks that the file is whole (its size, then its end mark: one fstat and two small
// reads), takes the program out of its comments and compiles it as Node would have (Module.prototype._compile: the same
// module, require and __filename). Otherwise one line and exit 127, as the standalone build's launcher says of its own
// file cut short (scripts/sea/launcher.c), and POST.err where a post file is named.
// The program comes out as esbuild wrote it, byte for byte, but for its `#!` line, left empty: its lines and columns
// are those of dist/baton.cjs.map (in the file itself, one line further down and two columns to the right).
// One block, and no directive before it: a copy cut inside this code is a SyntaxError (the block is not closed), never
// a part of it that runs and exits 0.
{
  const fs = require("node:fs");
  let problem;
  let program;
  try {
    const fd = fs.openSync(__filename, "r");
    try {
      const size = fs.fstatSync(fd).size;
      if (size !== BATON_SIZE) {
        problem = size < BATON_SIZE ? `is cut short (${size} bytes of ${BATON_SIZE})` : `is damaged (${size} bytes, not ${BATON_SIZE})`;
      } else {
        // A copy that was given its size first and then not all of its bytes (a preallocated file) ends in zeros.
        const end = Buffer.allocUnsafe(BATON_END.length);
        fs.readSync(fd, end, 0, end.length, size - end.length);
        if (end.toString("latin1") !== BATON_END) problem = "is damaged (it does not end with baton's end mark)";
        else {
          const text = Buffer.allocUnsafe(BATON_PROGRAM_LENGTH);
          if (fs.readSync(fd, text, 0, text.length, BATON_PROGRAM_START) !== text.length) problem = "cannot be read whole";
          else {
            // replaceAll, V8's own: a loop of Buffer calls that stripped in place (one string less) cost every step
            // more instructions, the first calls of Node's Buffer code (docs/performance.md, "The guard of a bundle cut
            // short").
            program = text.toString("latin1").replaceAll("\n//", "\n");
            // Its 80 KB go back now (Node 22 and 24 had them until a collection that a waiting step may never make).
            text.buffer.transfer?.(0);
          }
        }
      }
    } finally {
      fs.closeSync(fd);
    }
  } catch (error) {
    problem = `cannot be read (${error.code ?? error})`;
  }
  const cutShort = (problem) => {
    // A control character in the file's name is written as JSON writes it (src/base: one line whatever the name).
    const line = `${__filename} ${problem}`.replace(/[\0-\x08\n-\x1f\x7f]/g, (c) => JSON.stringify(c).slice(1, -1));
    try {
      fs.writeSync(2, `baton: ${line}: baton is not installed whole; copy the bundle again\n`);
    } catch {
      // stderr closed or full: the exit code still tells
    }
    writePostErr();
    process.exit(127);
  };

  // The post file as baton finds it when its options fail to parse (src/cli/parse-args.ts findOptionValue,
  // src/cli/tekton-argv.ts findTektonPostFile): the last --post-file or -post_file before `--`, in step mode (the first
  // argument an option). POST.err then ends the steps waiting on it instead of leaving them waiting for ever. Written
  // only into a folder that exists, under a name Node read as given (no U+FFFD), atomically; never a word about it.
  const writePostErr = () => {
    const args = process.argv.slice(2);
    if (!args[0]?.startsWith("-")) return;
    let post;
    for (let i = 0; i < args.length && args[i] !== "--"; i++) {
      const flag = /^(--post-file|-?-post_file)(=|$)/.exec(args[i]);
      if (flag !== null) post = flag[2] === "=" ? args[i].slice(flag[0].length) : args[i + 1];
    }
    if (!post || post.endsWith("/") || post.includes("\uFFFD")) return;
    const at = new Date().toISOString();
    const temporary = `${post}.err.${process.pid}.tmp`;
    let made = false;
    try {
      // wx: a name that is there already (a neighbour's symlink) is refused, never followed.
      fs.writeFileSync(temporary, `${JSON.stringify({ exitCode: 127, reason: "Error", startedAt: at, finishedAt: at })}\n`, { flag: "wx", mode: 0o644 });
      made = true;
      fs.renameSync(temporary, `${post}.err`);
    } catch {
      if (made) fs.rmSync(temporary, { force: true });
    }
  };

  if (problem === undefined) {
    module._compile(program, __filename, "commonjs");
  } else {
    cutShort(problem);
  }
}
