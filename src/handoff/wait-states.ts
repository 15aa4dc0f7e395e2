// The wait wing's two state machines, in one place and without side effects: where a wait stands, what can happen to
// it, and what it does then. watch-hand-off.ts (a wait for a file and its writer) and watch-folder.ts (the folder
// watch it uses until it finds a baton writer) only run the effects, which are the system calls, and turn what the
// kernel tells them back into events. docs/design.md "The wait as a state machine" draws both tables;
// test/unit/wait-states.test.ts drives them and checks the drawing.
//
// One rule for both: an event with no row for the state it finds does nothing. Those are late news (a poll that was
// already due as the watch closed, a FIFO's wake-up after the lock told, anything after the end), never a new turn.

/** Where a wait for a file stands. The last four are the ends: the wait answers once, in one of them. */
export type WaitState =
  /** Nothing armed yet. */
  | "starting"
  /** No writer of baton's found yet: the folder watched (watch-folder.ts) and a safety poll; each look looks for one. */
  | "waiting-for-writer"
  /** A file no baton writes (a cancel file), or one whose writer's lock tells nothing: the folder watched, a safety poll. */
  | "waiting-for-file"
  /** A thread of the addon blocked on the writer's liveness lock, and the event loop polling its wake FIFO. */
  | "waiting-for-lock"
  /** The writer let go of its lock: another writer in its place (a restarted container), or one last look. */
  | "writer-let-go"
  /** The file (or what the caller counts, a post file's .err) is there: handed on. */
  | "handed-on"
  /** The writer let go of its lock and left nothing: it died. */
  | "writer-died"
  /** The file can never be seen: a folder on the way not searchable, or the look failed (the file is a folder). */
  | "refused"
  /** The caller aborted the wait (a signal, --wait-timeout). */
  | "cancelled";

export type WaitEvent =
  /** Start, for a file a baton may write (a post file, an Argo exitcode). */
  | "start"
  /** Start, for a file no baton writes. */
  | "start-stranger"
  /** A liveness file of baton's, and a thread now blocked on its lock. */
  | "writer-found"
  /** No liveness file of baton's; or no thread could start and the lock, looked at once, is held. */
  | "no-writer"
  /** The folder watch or the safety poll says something may have happened. */
  | "folder-changed"
  /** The writer's wake FIFO: it is handing on (or it exited). */
  | "woken"
  /** The writer's lock is free: its thread woke, or a look without a thread found it free. */
  | "lock-free"
  /** The lock could not be taken (a file system that keeps no locks): it tells nothing. */
  | "lock-failed"
  /** A look found the file. */
  | "file-seen"
  /** The last look, once the writer let go, found nothing. */
  | "file-missing"
  /** A folder on the way to the file may not be searched. */
  | "unsearchable"
  /** The look threw (the file is a folder). */
  | "look-failed"
  | "aborted";

export type WaitEffect =
  /** Open the writer's liveness file and block a thread on its lock: writer-found, no-writer or lock-free. */
  | "find-writer"
  /** The same, passing over the liveness file whose writer just let go. */
  | "find-new-writer"
  /** A folder watch and the safety poll: unsearchable when the folder can never be watched. */
  | "watch-folder"
  | "stop-watching-folder"
  /** Keep the writer that let go (its wake FIFO stays open until the wait ends: docs/design.md "Stepping aside"). */
  | "keep-gone-writer"
  /** A new writer took the old one's place: its FIFO is nobody's concern. */
  | "forget-gone-writer"
  /** One look at the file: file-seen, look-failed, or nothing. */
  | "look"
  /** One look that answers either way: file-seen, file-missing or look-failed. */
  | "last-look"
  /** Answer with what the look found / with the caller's "died" / with the error / with the abort reason. */
  | "answer-found"
  | "answer-died"
  | "answer-error"
  | "answer-aborted"
  /** Once the caller has moved on (its command is starting), close whatever is still open. */
  | "tidy-up-soon";

export interface Transition<S, E, X> {
  from: S;
  on: E;
  to: S;
  effects: readonly X[];
}

const WAITING = ["starting", "waiting-for-writer", "waiting-for-file", "waiting-for-lock", "writer-let-go"] as const;
const LOOKING = ["waiting-for-writer", "waiting-for-file", "waiting-for-lock", "writer-let-go"] as const;
const WATCHING = ["waiting-for-writer", "waiting-for-file"] as const;

type WaitRow = Transition<WaitState, WaitEvent, WaitEffect>;
const row = (from: WaitState, on: WaitEvent, to: WaitState, ...effects: WaitEffect[]): WaitRow => ({ from, on, to, effects });

/** Every transition of a wait for a file. */
export const WAIT_TRANSITIONS: readonly WaitRow[] = [
  // A writer that is already there needs no folder watch at all (not even an inotify instance opened and closed).
  row("starting", "start", "starting", "find-writer"),
  row("starting", "start-stranger", "waiting-for-file", "watch-folder", "look"),
  row("starting", "writer-found", "waiting-for-lock", "look"),
  row("starting", "no-writer", "waiting-for-writer", "watch-folder", "look"),
  row("starting", "lock-free", "writer-let-go", "find-new-writer"),
  // Each look for the file is also a look for its writer, which ends the folder watch once found.
  row("waiting-for-writer", "folder-changed", "waiting-for-writer", "find-writer"),
  row("waiting-for-writer", "no-writer", "waiting-for-writer", "look"),
  row("waiting-for-writer", "writer-found", "waiting-for-lock", "stop-watching-folder", "look"),
  row("waiting-for-writer", "lock-free", "writer-let-go", "find-new-writer"),
  row("waiting-for-file", "folder-changed", "waiting-for-file", "look"),
  // The lock decides; the FIFO only makes the look earlier (a wake-up with nothing to see changes nothing).
  row("waiting-for-lock", "woken", "waiting-for-lock", "look"),
  row("waiting-for-lock", "lock-free", "writer-let-go", "keep-gone-writer", "find-new-writer"),
  row("waiting-for-lock", "lock-failed", "waiting-for-file", "keep-gone-writer", "watch-folder", "look"),
  // A restarted container's new baton renamed its liveness file into place: follow that one.
  row("writer-let-go", "writer-found", "waiting-for-lock", "forget-gone-writer", "stop-watching-folder", "look"),
  row("writer-let-go", "lock-free", "writer-let-go", "keep-gone-writer", "find-new-writer"),
  row("writer-let-go", "no-writer", "writer-let-go", "last-look"),
  row("writer-let-go", "file-missing", "writer-died", "answer-died", "tidy-up-soon"),
  ...LOOKING.map((from) => row(from, "file-seen", "handed-on", "answer-found", "tidy-up-soon")),
  ...LOOKING.map((from) => row(from, "look-failed", "refused", "answer-error", "tidy-up-soon")),
  ...WATCHING.map((from) => row(from, "unsearchable", "refused", "answer-error", "tidy-up-soon")),
  ...WAITING.map((from) => row(from, "aborted", "cancelled", "answer-aborted", "tidy-up-soon")),
];

/** Where a folder watch (watch-folder.ts) stands. */
export type FolderState =
  /** Opening an inotify instance of its own. */
  | "opening"
  /** An inotify watch on the deepest existing folder on the way to the file, moved at each event. */
  | "watching"
  /** No watch (no instance left, no addon, a folder that may be searched but not read): a poll that slows down. */
  | "polling"
  /** The file can never be looked up (a folder on the way not searchable): polling would wait for ever. */
  | "refused"
  | "closed";

export type FolderEvent =
  | "opened"
  /** No instance, or no watch, while the file can be looked up. */
  | "watch-failed"
  | "unsearchable"
  /** inotify read something (events are coalesced: one turn of the event loop for all of them). */
  | "events"
  /** The turn after events. */
  | "next-turn"
  /** The poll's timer. */
  | "tick"
  | "close";

export type FolderEffect =
  /** Watch the deepest existing folder (and the folders of symlinks on the way): watch-failed or unsearchable. */
  | "arm"
  /** next-turn, once for any number of events. */
  | "next-turn-once"
  | "stop-inotify"
  /** Say once on stderr that this wait polls. */
  | "warn-polling"
  /** The next tick, twice as late as the last, at most FALLBACK_POLL_MAX_MS. */
  | "poll"
  | "stop-poll"
  /** Tell the caller to look. */
  | "tell-caller"
  /** Tell the caller the file can never be seen. */
  | "refuse";

type FolderRow = Transition<FolderState, FolderEvent, FolderEffect>;
const folderRow = (from: FolderState, on: FolderEvent, to: FolderState, ...effects: FolderEffect[]): FolderRow => ({ from, on, to, effects });

/** Every transition of a folder watch. */
export const FOLDER_TRANSITIONS: readonly FolderRow[] = [
  folderRow("opening", "opened", "watching", "arm"),
  folderRow("watching", "events", "watching", "next-turn-once"),
  folderRow("watching", "next-turn", "watching", "arm", "tell-caller"),
  // arm failed during that turn: the caller looks all the same.
  folderRow("polling", "next-turn", "polling", "tell-caller"),
  folderRow("polling", "tick", "polling", "poll", "tell-caller"),
  ...(["opening", "watching"] as const).flatMap((from) => [
    folderRow(from, "watch-failed", "polling", "stop-inotify", "warn-polling", "poll"),
    folderRow(from, "unsearchable", "refused", "stop-inotify", "refuse"),
  ]),
  ...(["opening", "watching", "polling", "refused"] as const).map((from) => folderRow(from, "close", "closed", "stop-inotify", "stop-poll")),
];

/** The transition `event` takes from `state`; undefined when it has none (the event is late news: nothing happens). */
export function transitionOf<S, E, X>(table: readonly Transition<S, E, X>[], state: S, event: E): Transition<S, E, X> | undefined {
  return table.find((transition) => transition.from === state && transition.on === event);
}

/**
 * Runs a table: `dispatch(event)` takes the transition and runs its effects in order through `run`, which may return
 * the event an effect's system call answered with. Those events, and any dispatched while effects run, wait their
 * turn: each transition's effects run whole before the next event is taken (so an effect never sees its state move
 * under it).
 */
export function machineOf<S, E, X>(table: readonly Transition<S, E, X>[], initial: S, run: (effect: X) => E | undefined) {
  const queue: E[] = [];
  let running = false;
  const machine = {
    state: initial,
    dispatch(event: E): void {
      queue.push(event);
      if (running) return;
      running = true;
      try {
        for (let next = queue.shift(); next !== undefined; next = queue.shift()) machine.take(next);
      } catch (error) {
        queue.length = 0; // what was queued behind a failed effect is stale now
        throw error;
      } finally {
        running = false;
      }
    },
    take(event: E): void {
      const transition = transitionOf(table, machine.state, event);
      if (transition === undefined) return;
      machine.state = transition.to;
      for (const effect of transition.effects) {
        const answer = run(effect);
        if (answer !== undefined) queue.push(answer);
      }
    },
  };
  return machine;
}
