// The wait wing's state machines (src/handoff/wait-states.ts), driven as tables: each row a story told as the events
// the world sends and what the system calls at the edges answer; then where the wait stands and what it did. The
// drawing of both tables in docs/design.md is checked against them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import {
  FOLDER_TRANSITIONS,
  machineOf,
  transitionOf,
  WAIT_TRANSITIONS,
  type FolderEffect,
  type FolderEvent,
  type FolderState,
  type Transition,
  type WaitEffect,
  type WaitEvent,
  type WaitState,
} from "../../src/handoff/wait-states.js";

/**
 * Runs a story: `events` are sent one by one; an effect named in `answers` answers with the next event of its list
 * (the system call's outcome), any other answers nothing. Returns the end state and every effect run, in order.
 */
function tell<S, E extends string, X extends string>(
  table: readonly Transition<S, E, X>[],
  initial: S,
  events: E[],
  answers: Partial<Record<X, (E | undefined)[]>>,
): { state: S; effects: X[] } {
  const effects: X[] = [];
  const machine = machineOf<S, E, X>(table, initial, (effect) => {
    effects.push(effect);
    return answers[effect]?.shift();
  });
  for (const event of events) machine.dispatch(event);
  return { state: machine.state, effects };
}

type WaitStory = [name: string, events: WaitEvent[], answers: Partial<Record<WaitEffect, (WaitEvent | undefined)[]>>, state: WaitState, effects: WaitEffect[]];

const waitStories: WaitStory[] = [
  ["the writer is a baton already waiting: no folder watch; its wake FIFO, then the post file",
    ["start", "woken"], { "find-writer": ["writer-found"], look: [undefined, "file-seen"] },
    "handed-on", ["find-writer", "look", "look", "answer-found", "tidy-up-soon"]],
  ["a wake-up with nothing to see (a neighbour's byte) changes nothing",
    ["start", "woken"], { "find-writer": ["writer-found"], look: [undefined, undefined] },
    "waiting-for-lock", ["find-writer", "look", "look"]],
  ["the writer hands on: its lock goes, no new writer, the last look finds the post file",
    ["start", "lock-free"], { "find-writer": ["writer-found"], "find-new-writer": ["no-writer"], "last-look": ["file-seen"] },
    "handed-on", ["find-writer", "look", "keep-gone-writer", "find-new-writer", "last-look", "answer-found", "tidy-up-soon"]],
  ["the writer dies (SIGKILL): its lock goes, no post file: writer-died",
    ["start", "lock-free"], { "find-writer": ["writer-found"], "find-new-writer": ["no-writer"], "last-look": ["file-missing"] },
    "writer-died", ["find-writer", "look", "keep-gone-writer", "find-new-writer", "last-look", "answer-died", "tidy-up-soon"]],
  ["the writer's container restarts: its new baton is followed, the old one's FIFO let go",
    ["start", "lock-free"], { "find-writer": ["writer-found"], "find-new-writer": ["writer-found"] },
    "waiting-for-lock", ["find-writer", "look", "keep-gone-writer", "find-new-writer", "forget-gone-writer", "stop-watching-folder", "look"]],
  ["the waiter starts first: the folder watched until the liveness file appears, then the lock alone",
    ["start", "folder-changed", "folder-changed"], { "find-writer": ["no-writer", "no-writer", "writer-found"] },
    "waiting-for-lock", ["find-writer", "watch-folder", "look", "find-writer", "look", "find-writer", "stop-watching-folder", "look"]],
  ["a writer that is not a baton (a user's touch): the folder's event, the file is there",
    ["start", "folder-changed"], { "find-writer": ["no-writer", "no-writer"], look: [undefined, "file-seen"] },
    "handed-on", ["find-writer", "watch-folder", "look", "find-writer", "look", "answer-found", "tidy-up-soon"]],
  ["the waiter starts after the writer died: one look at the free lock, no thread needed",
    ["start"], { "find-writer": ["lock-free"], "find-new-writer": ["no-writer"], "last-look": ["file-missing"] },
    "writer-died", ["find-writer", "find-new-writer", "last-look", "answer-died", "tidy-up-soon"]],
  ["no thread (a full PID limit): the folder watched, and a look finds the lock free at the next event",
    ["start", "folder-changed"], { "find-writer": ["no-writer", "lock-free"], "find-new-writer": ["no-writer"], "last-look": ["file-missing"] },
    "writer-died", ["find-writer", "watch-folder", "look", "find-writer", "find-new-writer", "last-look", "answer-died", "tidy-up-soon"]],
  ["the lock fails (a file system without locks): waits for the file as for a stranger, never for the writer again",
    ["start", "lock-failed", "folder-changed"], { "find-writer": ["writer-found"] },
    "waiting-for-file", ["find-writer", "look", "keep-gone-writer", "watch-folder", "look", "look"]],
  ["a file no baton writes (a cancel file): no writer looked for",
    ["start-stranger", "folder-changed"], { look: [undefined, "file-seen"] },
    "handed-on", ["watch-folder", "look", "look", "answer-found", "tidy-up-soon"]],
  ["a folder on the way not searchable: refused at once, the first look's answer comes too late",
    ["start-stranger"], { "watch-folder": ["unsearchable"], look: ["file-seen"] },
    "refused", ["watch-folder", "look", "answer-error", "tidy-up-soon"]],
  ["the file is a folder: the look fails",
    ["start"], { "find-writer": ["no-writer"], look: ["look-failed"] },
    "refused", ["find-writer", "watch-folder", "look", "answer-error", "tidy-up-soon"]],
  ["a signal while waiting for the lock: cancelled, and the lock's news after it is late",
    ["start", "aborted", "lock-free", "woken"], { "find-writer": ["writer-found"] },
    "cancelled", ["find-writer", "look", "answer-aborted", "tidy-up-soon"]],
  ["aborted before it started",
    ["aborted", "start"], {},
    "cancelled", ["answer-aborted", "tidy-up-soon"]],
  ["a safety poll due as the liveness file was found: late, nothing happens",
    ["start", "folder-changed", "folder-changed"], { "find-writer": ["no-writer", "writer-found"] },
    "waiting-for-lock", ["find-writer", "watch-folder", "look", "find-writer", "stop-watching-folder", "look"]],
];

for (const [name, events, answers, state, effects] of waitStories) {
  test(`wait: ${name}`, () => {
    assert.deepEqual(tell(WAIT_TRANSITIONS, "starting", events, answers), { state, effects });
  });
}

type FolderStory = [name: string, events: FolderEvent[], answers: Partial<Record<FolderEffect, (FolderEvent | undefined)[]>>, state: FolderState, effects: FolderEffect[]];

const folderStories: FolderStory[] = [
  ["inotify: events of one turn give one look, after the watch is moved",
    ["opened", "events", "events", "next-turn"], { "next-turn-once": [undefined, undefined] },
    "watching", ["arm", "next-turn-once", "next-turn-once", "arm", "tell-caller"]],
  ["no inotify instance left (EMFILE): a poll that slows down, each tick a look",
    ["watch-failed", "tick", "tick"], {},
    "polling", ["stop-inotify", "warn-polling", "poll", "poll", "tell-caller", "poll", "tell-caller"]],
  ["the watch limit is reached as the watch moves: polling, and this turn's look still comes",
    ["opened", "events", "next-turn"], { arm: [undefined, "watch-failed"] },
    "polling", ["arm", "next-turn-once", "arm", "tell-caller", "stop-inotify", "warn-polling", "poll"]],
  ["a folder on the way not searchable: refused, no poll",
    ["opened"], { arm: ["unsearchable"] },
    "refused", ["arm", "stop-inotify", "refuse"]],
  ["closed: the instance and the poll go, later events do nothing",
    ["opened", "close", "events", "next-turn", "tick"], {},
    "closed", ["arm", "stop-inotify", "stop-poll"]],
];

for (const [name, events, answers, state, effects] of folderStories) {
  test(`folder watch: ${name}`, () => {
    assert.deepEqual(tell(FOLDER_TRANSITIONS, "opening", events, answers), { state, effects });
  });
}

const WAIT_ENDS: WaitState[] = ["handed-on", "writer-died", "refused", "cancelled"];

function checkTable<S, E, X>(table: readonly Transition<S, E, X>[], initial: S, ends: S[]) {
  const pairs = table.map((t) => `${t.from} ${t.on}`);
  assert.deepEqual(pairs.filter((pair, i) => pairs.indexOf(pair) !== i), [], "one row per state and event");
  assert.deepEqual(table.filter((t) => ends.includes(t.from)), [], "nothing leaves an end");
  const reached = new Set([initial]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const t of table) if (reached.has(t.from) && !reached.has(t.to)) grew = reached.add(t.to) !== undefined;
  }
  const states = new Set(table.flatMap((t) => [t.from, t.to]));
  assert.deepEqual([...states].filter((s) => !reached.has(s)), [], "every state is reached from the first");
}

test("wait table: one row per state and event, the ends final, every state reachable, every wait can be aborted", () => {
  checkTable(WAIT_TRANSITIONS, "starting", WAIT_ENDS);
  const states = new Set(WAIT_TRANSITIONS.map((t) => t.from));
  for (const state of states) assert.equal(transitionOf(WAIT_TRANSITIONS, state, "aborted")?.to, "cancelled", state);
  // Every way into an end answers the caller once and tidies up.
  for (const t of WAIT_TRANSITIONS.filter((t) => WAIT_ENDS.includes(t.to))) {
    assert.equal(t.effects.filter((e) => e.startsWith("answer-")).length, 1, `${t.from} ${t.on}`);
    assert.equal(t.effects.at(-1), "tidy-up-soon", `${t.from} ${t.on}`);
  }
  // Only the writer's free lock, then a last look that finds nothing, is a death.
  assert.deepEqual(WAIT_TRANSITIONS.filter((t) => t.to === "writer-died").map((t) => `${t.from} ${t.on}`), ["writer-let-go file-missing"]);
  // The lock-thread state holds no folder watch: every way into it stops one.
  for (const t of WAIT_TRANSITIONS.filter((t) => t.to === "waiting-for-lock" && t.from !== "waiting-for-lock" && t.from !== "starting")) {
    assert.ok(t.effects.includes("stop-watching-folder"), `${t.from} ${t.on}`);
  }
});

test("folder table: one row per state and event, closed final, every state reachable, every watch can be closed", () => {
  checkTable(FOLDER_TRANSITIONS, "opening", ["closed"]);
  for (const state of ["opening", "watching", "polling", "refused"] as const) assert.equal(transitionOf(FOLDER_TRANSITIONS, state, "close")?.to, "closed");
});

test("a failing effect drops the events queued behind it", () => {
  let calls = 0;
  const machine = machineOf<WaitState, WaitEvent, WaitEffect>(WAIT_TRANSITIONS, "starting", (effect) => {
    calls++;
    if (effect === "find-writer") return "no-writer";
    if (effect === "watch-folder") throw new Error("boom");
    return undefined;
  });
  assert.throws(() => machine.dispatch("start"), /boom/);
  assert.equal(machine.state, "waiting-for-writer");
  machine.dispatch("folder-changed");
  assert.equal(machine.state, "waiting-for-writer");
  assert.ok(calls >= 3);
});

/** The transitions a ```mermaid block of docs/design.md draws after `heading`, as "from --> to: event" lines. */
function drawn(heading: string): string[] {
  const design = readFileSync(resolve(import.meta.dirname, "../../docs/design.md"), "utf8");
  const at = design.indexOf(heading);
  assert.ok(at >= 0, `docs/design.md has no ${heading}`);
  const block = /```mermaid\n([\s\S]*?)```/.exec(design.slice(at));
  assert.ok(block, `no mermaid block after ${heading}`);
  return block[1]!.split("\n").map((line) => line.trim()).filter((line) => line.includes("-->") && !line.startsWith("[*]"));
}

function drawing<S, E, X>(table: readonly Transition<S, E, X>[]): string[] {
  // Mermaid's state names take no hyphen: waiting_for_lock.
  const id = (name: unknown) => String(name).replaceAll("-", "_");
  return table.map((t) => `${id(t.from)} --> ${id(t.to)}: ${String(t.on)}`);
}

test("docs/design.md draws exactly the wait table's transitions", () => {
  assert.deepEqual(drawn("### The wait as a state machine").sort(), drawing(WAIT_TRANSITIONS).sort());
});

test("docs/design.md draws exactly the folder table's transitions", () => {
  assert.deepEqual(drawn("The folder watch's own states").sort(), drawing(FOLDER_TRANSITIONS).sort());
});
