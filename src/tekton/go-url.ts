// The parts of Go's net/url and fmt that Tekton's git credentials go through, so that .gitconfig and .git-credentials
// come out byte for byte as Tekton writes them: url.Parse (its errors too), URL.String with the userinfo replaced by
// url.UserPassword, and %q. Only what those files can show is modelled; the raw path, query and fragment are kept
// as given, as Go does for any that are validly escaped.

export interface GoUrl {
  scheme: string;
  opaque: string;
  host: string;
  /** true when "//" introduced an authority (even an empty one) */
  hasAuthority: boolean;
  path: string;
  query: string | undefined;
  fragment: string | undefined;
}

/** Go's url.Parse, as far as it decides between error, scheme, opaque, authority and path. */
export function parseGoUrl(raw: string): GoUrl {
  if (/[\x00-\x1f\x7f]/.test(raw)) throw new Error(`parse ${JSON.stringify(raw)}: net/url: invalid control character in URL`);
  let rest = raw;
  let fragment: string | undefined;
  const hash = rest.indexOf("#");
  if (hash !== -1) {
    fragment = rest.slice(hash + 1);
    rest = rest.slice(0, hash);
  }
  let scheme = "";
  for (let i = 0; i < rest.length; i++) {
    const c = rest[i]!;
    if (/[A-Za-z]/.test(c)) continue;
    if (/[0-9+.-]/.test(c)) {
      if (i === 0) break;
      continue;
    }
    if (c === ":") {
      if (i === 0) throw new Error(`parse ${JSON.stringify(raw)}: missing protocol scheme`);
      scheme = rest.slice(0, i).toLowerCase();
      rest = rest.slice(i + 1);
    }
    break;
  }
  let query: string | undefined;
  if (rest.endsWith("?") && rest.split("?").length === 2) {
    query = "";
    rest = rest.slice(0, -1);
  } else {
    const q = rest.indexOf("?");
    if (q !== -1) {
      query = rest.slice(q + 1);
      rest = rest.slice(0, q);
    }
  }
  const url: GoUrl = { scheme, opaque: "", host: "", hasAuthority: false, path: "", query, fragment };
  if (!rest.startsWith("/") && scheme !== "") {
    url.opaque = rest;
    return url;
  }
  if (scheme === "") {
    const colon = rest.indexOf(":");
    const slash = rest.indexOf("/");
    if (colon !== -1 && (slash === -1 || colon < slash)) {
      throw new Error(`parse ${JSON.stringify(raw)}: first path segment in URL cannot contain colon`);
    }
  }
  if (rest.startsWith("//") && !rest.startsWith("///")) {
    const end = rest.slice(2).search(/\//);
    const authority = end === -1 ? rest.slice(2) : rest.slice(2, 2 + end);
    rest = end === -1 ? "" : rest.slice(2 + end);
    const at = authority.lastIndexOf("@");
    url.host = at === -1 ? authority : authority.slice(at + 1);
    url.hasAuthority = true;
    if (/[\s<>"{}|\\^`]/.test(url.host)) throw new Error(`parse ${JSON.stringify(raw)}: invalid character in host name`);
  }
  url.path = rest;
  return url;
}

/** Tekton's urlHasPath: the parsed path is neither empty nor "/" (a scheme-less "github.com" is all path). */
export function urlHasPath(raw: string): boolean {
  try {
    const { path } = parseGoUrl(raw);
    return path !== "" && path !== "/";
  } catch {
    return false;
  }
}

/** URL.String() after URL.User = url.UserPassword(username, password). */
export function urlWithUserPassword(raw: string, username: string, password: string): string {
  const url = parseGoUrl(raw);
  if (url.opaque !== "") return `${url.scheme}:${url.opaque}${suffix(url)}`;
  let out = url.scheme === "" ? "" : `${url.scheme}:`;
  // A user is always set here, so "//" and the userinfo always come (Go: Scheme, Host or User non-empty).
  out += `//${escapeUserinfo(username)}:${escapeUserinfo(password)}@${url.host}`;
  if (url.path !== "" && !url.path.startsWith("/") && url.host !== "") out += "/";
  return out + url.path + suffix(url);
}

function suffix(url: GoUrl): string {
  return (url.query !== undefined ? `?${url.query}` : "") + (url.fragment !== undefined && url.fragment !== "" ? `#${url.fragment}` : "");
}

/** Go's escape(s, encodeUserPassword): unreserved and $&+,;= kept, everything else %XX (upper-case, UTF-8 bytes). */
export function escapeUserinfo(value: string): string {
  let out = "";
  for (const byte of Buffer.from(value, "utf8")) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.~$&+,;=]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** Go's %q of a printable string: JSON's quoting, plus \u2028/\u2029 escaped as Go does (not printable there). */
export function goQuote(value: string): string {
  return JSON.stringify(value)
    .replace(/\\u00([0-9a-f]{2})/g, (_, hex: string) => `\\x${hex}`)
    .replace(/[\u2028\u2029\u007f]/g, (c) => (c === "\u007f" ? "\\x7f" : `\\u${c.charCodeAt(0).toString(16)}`));
}
