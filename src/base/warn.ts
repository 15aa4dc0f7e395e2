import { writeSync } from "node:fs";

// baton's own lines ("baton: ...") go straight to descriptor 2 with write(2), never through process.stderr: creating
// that stream makes a pipe non-blocking (Node opens pipes with O_NONBLOCK), and the command, which shares the open
// file description, then loses output to EAGAIN; and a closed reader (a log shipper that died) would be an unhandled
// EPIPE 'error': a stack trace and no post file. A line that cannot be written is dropped: the outcome must survive.

export function warn(message: string): void {
  try {
    writeSync(2, `baton: ${message}\n`);
  } catch {
    // EPIPE, EAGAIN (someone else made it non-blocking), EBADF (closed): nowhere to say it.
  }
}
