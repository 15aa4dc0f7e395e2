import { BatonError } from "../base/errors.js";

// Go's encoding/json refuses nesting deeper than 10000 levels (scanner.go's maxNestingDepth), and so Argo's emissary
// refuses such a template or args file. JSON.parse takes any depth: a template of '[' nested millions deep held the
// main thread (no signal handled) for seconds and gigabytes before it failed on its type. So it is refused first, in
// one pass over the text, with Go's message.
const MAX_DEPTH = 10_000;

export function checkJsonDepth(text: string, context: string): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_DEPTH) throw new BatonError(`${context}: invalid character '${text[i]}' exceeded max depth`);
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
}
