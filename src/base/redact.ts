// A URL's password never reaches stderr, the events or a file other steps read (docs/reference.md, "Shared folders
// are hostile"): what baton shows of a URL it was given is this, as Go's URL.Redacted() shows it. Works on text that
// is not a valid URL too, since a usage error quotes what it could not parse.

/** `text` with the password of a `scheme://user:password@host` replaced by xxxxx; anything else unchanged. */
export function redactPassword(text: string): string {
  return text.replace(/(\/\/[^/?#@:]*):[^/?#]*@/, "$1:xxxxx@");
}
