// One line per top-level test of Tekton's e2e suite, from `go tool test2json` events (scripts/k8s/suites/tekton.sh):
// `suite: tekton TEST: pass | fail | skip: WHY`. WHY is a skip's own reason, a failure's first failed subtest and its
// first error (with the -got/+want lines of a diff), the reason excluded.tsv gives, or what was seen of a test that never
// ended.
//
//   node summarize.mjs EVENTS.jsonl EXCLUDED.tsv REGEX TEST...
import { readFileSync } from 'node:fs';

const [events, excludedFile, want, ...all] = process.argv.slice(2);
const excluded = new Map(
  readFileSync(excludedFile, 'utf8').split('\n').filter((line) => line && !line.startsWith('#'))
    .map((line) => line.split('\t')),
);
const wanted = new RegExp(`^(${want})$`);

// Every test and subtest by its full name: how it ended and its messages (t.Log, t.Error, t.Skip: an indented
// `file.go:NN: text`, then its continuation lines).
const tests = new Map();
const testOf = (name) => {
  if (!tests.has(name)) tests.set(name, { action: 'run', messages: [] });
  return tests.get(name);
};
for (const line of readFileSync(events, 'utf8').split('\n')) {
  if (!line.startsWith('{')) continue;
  const event = JSON.parse(line);
  if (!event.Test) continue;
  const test = testOf(event.Test);
  if (['pass', 'fail', 'skip'].includes(event.Action)) test.action = event.Action;
  if (event.Action !== 'output') continue;
  const text = event.Output.replace(/\n$/, '');
  if (/^\s+[\w.-]+\.go:\d+: /.test(text)) test.messages.push({ text: text.trim(), more: [] });
  else if (/^\s/.test(text) && test.messages.length) test.messages.at(-1).more.push(text.trim());
}

// Not reasons: the dump of a failed test's objects, the log streams, the pods' logs.
const noise = /#####|Dumping objects|Deleting namespace|Not deleting namespace|^(build_logs|stream|panic)\.go:/;
const errorLike = /error|fail|expect|want|got|timed out|timeout|diff|unexpected|not |couldn't|cannot|unable/i;
const short = (text) => (text.length > 400 ? `${text.slice(0, 397)}...` : text);
// The tests' progress (`Waiting for TaskRun ... to fail`) is no reason either.
const progress = /^\S+: (Waiting|Creating|Create|Verify|Deleting|Checking|Getting|Running|Wait)\b/;
const reason = (test) => {
  const messages = test.messages.filter((m) => !noise.test(m.text));
  // The first error: the later ones are mostly its consequences.
  const message = messages.find((m) => errorLike.test(m.text) && !progress.test(m.text)) ?? messages.at(-1);
  if (!message) return '';
  const diff = message.more.filter((l) => /^[-+]\s/.test(l)).map((l) => l.replace(/\s+/g, ' '));
  return short([message.text.replace(/\s+/g, ' '), ...diff].join('; ')) + cause(test);
};
// What a failed test's dump of its objects says of them: the first condition that is False, a TaskRun's rather than
// its PipelineRun's `Failed` ("Tasks Completed: 4 (Failed: 1 ..."), which says less.
const cause = (test) => {
  const dump = test.messages.flatMap((m) => [m.text, ...m.more]).join('\n');
  const conditions = [...dump.matchAll(/^message: ((?:.|\n(?!reason:))*?)\nreason: (\w+)\nstatus: "False"$/gm)]
    .map(([, text, why]) => ({ why, text: text.replace(/\s+/g, ' ').replace(/^'(.*)'$/, '$1') }));
  const condition = conditions.find((c) => c.why !== 'Failed') ?? conditions[0];
  return condition ? ` [${condition.why}: ${condition.text.length > 250 ? `${condition.text.slice(0, 247)}...` : condition.text}]` : '';
};

for (const name of all) {
  if (!wanted.test(name)) continue;
  if (excluded.has(name)) {
    console.log(`suite: tekton ${name}: skip: not run here: ${excluded.get(name)}`);
    continue;
  }
  const test = tests.get(name);
  if (!test) {
    console.log(`suite: tekton ${name}: fail: never started (the run ended first)`);
  } else if (test.action === 'pass') {
    console.log(`suite: tekton ${name}: pass`);
  } else if (test.action === 'skip') {
    console.log(`suite: tekton ${name}: skip: ${reason(test)}`);
  } else {
    // The failed subtests with no failed subtest of their own say more than their parent.
    const failed = [...tests].filter(([sub, t]) => sub.startsWith(`${name}/`) && t.action === 'fail' &&
      ![...tests].some(([other, o]) => other.startsWith(`${sub}/`) && o.action === 'fail'));
    const ended = test.action === 'fail' ? '' : 'never ended (the run\'s timeout): ';
    if (failed.length === 0) console.log(`suite: tekton ${name}: fail: ${ended}${reason(test)}`);
    else {
      const [sub, t] = failed[0];
      const more = failed.length > 1 ? ` (and ${failed.slice(1).map(([s]) => s.slice(name.length + 1)).join(', ')})` : '';
      console.log(`suite: tekton ${name}: fail: ${ended}${sub.slice(name.length + 1)}${more}: ${reason(t)}`);
    }
  }
}
