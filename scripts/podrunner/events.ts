// Follows the JSON-lines event file one container's baton writes (BATON_EVENTS): fs.watch on its folder for promptness,
// a slow poll as a safety net, and a final read once the container has exited so no line is lost.
import { closeSync, openSync, readSync, watch, type FSWatcher } from "node:fs";
import { basename, dirname } from "node:path";
import { StringDecoder } from "node:string_decoder";

/** One lifecycle event as baton writes it: {"t":<epoch ms>,"pid":N,"step":"name","event":"...", ...fields}. */
export interface BatonEvent {
  t: number;
  pid: number;
  step: string;
  event: string;
  [field: string]: unknown;
}

export class EventTail {
  private offset = 0;
  private partial = "";
  private readonly decoder = new StringDecoder("utf8");
  private readonly watcher: FSWatcher;
  private readonly timer: NodeJS.Timeout;

  /** `onOtherFile` hears of the other files of the events file's folder, so one watch serves both. */
  constructor(
    private readonly path: string,
    private readonly onEvent: (event: BatonEvent) => void,
    onOtherFile: (name: string) => void = () => {},
  ) {
    this.watcher = watch(dirname(path), (_type, name) => {
      if (name === null || name === basename(path)) this.read();
      else onOtherFile(name);
    });
    this.timer = setInterval(() => this.read(), 250);
  }

  /** Reads whatever was appended since the last read and hands each complete line on. */
  read(): void {
    let fd: number;
    try {
      fd = openSync(this.path, "r");
    } catch {
      return;
    }
    try {
      const buffer = Buffer.alloc(64 * 1024);
      for (;;) {
        const n = readSync(fd, buffer, 0, buffer.length, this.offset);
        if (n === 0) break;
        this.offset += n;
        this.partial += this.decoder.write(buffer.subarray(0, n));
      }
    } finally {
      closeSync(fd);
    }
    const lines = this.partial.split("\n");
    this.partial = lines.pop()!;
    for (const line of lines) {
      if (line.trim() === "") continue;
      try {
        const event = JSON.parse(line) as BatonEvent;
        if (typeof event.t === "number" && typeof event.event === "string") this.onEvent(event);
      } catch {
        // Not an event line (an older baton, or something else wrote here): ignore it.
      }
    }
  }

  close(): void {
    this.read();
    this.watcher.close();
    clearInterval(this.timer);
  }
}
