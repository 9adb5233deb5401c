// A call's arguments against what the host takes in one action (ACTION_LIMITS). Past them the
// host ends the sandbox as a protocol violation, which the script cannot catch and which names
// no call: a path of 6,000 characters, made by a loop that joined one too many times, ended a
// run so. Checked here, the call throws instead, naming the argument and what to do.

import { ACTION_LIMITS as L, type Action } from "../protocol.js";

/** The start of a long text, for a message. */
const startOf = (text: string): string => JSON.stringify(text.length <= 60 ? text : `${text.slice(0, 60)}…`);

/** Why `action` is more than the host takes, or null. */
export function overLimits(action: Action): string | null {
  const tooLong = (what: string, text: string, max: number, instead: string): string | null =>
    text.length <= max ? null : `${what} ${startOf(text)} is ${text.length} characters, more than the ${max} the host takes; nothing was sent. ${instead}`;
  const tooMany = (what: string, count: number, max: number, instead: string): string | null =>
    count <= max ? null : `${count} ${what} are more than the ${max} the host takes in one call; nothing was sent. ${instead}`;
  /** What `check` finds in the first of `texts` where it finds something (a loop: lists can be long). */
  const firstFound = (texts: readonly string[], check: (text: string) => string | null): string | null => {
    for (const text of texts) {
      const found = check(text);
      if (found !== null) return found;
    }
    return null;
  };
  const path = (what: string, value: string | null): string | null =>
    value === null ? null
    : value.includes("\0") ? `${what} ${startOf(value)} holds a NUL character, which no path can; nothing was sent.`
    : tooLong(what, value, L.pathChars, "Use a shorter path: the system takes at most 4096 bytes for one.");
  switch (action.kind) {
    case "FsOpenScope":
      return path("the root", action.root);
    case "FsFind":
      return path("the path", action.path) ?? tooLong("the glob", action.glob, L.globChars, "Use a shorter glob.");
    case "FsGrep":
    case "FsGrepRecursive":
      return (
        path("the path", action.path) ??
        tooLong("the pattern", action.pattern, L.patternChars, "Use a shorter pattern: search for fewer alternatives in each call.") ??
        (action.kind === "FsGrepRecursive" && action.glob !== null ? tooLong("the glob", action.glob, L.globChars, "Use a shorter glob.") : null)
      );
    case "FsReadClassified":
    case "FsWriteClassified":
    case "FsStat":
    case "FsSize":
    case "FsRead":
    case "FsReadChunk":
    case "FsWrite":
    case "FsDelete":
    case "FsMkdir":
    case "FsList":
      return path("the path", action.path);
    case "ClassifiedMap":
      return (
        tooLong("the map function", action.source, L.mapSourceChars, "Use a shorter function: compute what it needs before the map, and capture that.") ??
        tooMany("captured names", Object.keys(action.captures).length, L.captures, "Gather what the function needs into one object, and capture that.")
      );
    case "NetOpenScope":
      return (
        tooMany("hosts", action.hosts.length, L.hosts, "Ask for fewer hosts in one scope.") ??
        firstFound(action.hosts, (host) => tooLong("the host", host, L.hostChars, "Name the host alone."))
      );
    case "HttpRequest":
    case "HttpRequestClassified":
      return (
        tooLong("the method", action.method, L.methodChars, "Use an HTTP method's name.") ??
        tooLong("the URL", action.url, L.urlChars, "Send large data in the body.") ??
        tooMany("headers", Object.keys(action.headers).length, L.headers, "Send fewer headers.") ??
        tooMany("secret headers", Object.keys(action.secretHeaders).length, L.headers, "Send fewer headers.") ??
        firstFound(Object.keys(action.headers), (name) => tooLong("the header name", name, L.headerNameChars, "Use a header's name.")) ??
        firstFound(Object.keys(action.secretHeaders), (name) => tooLong("the header name", name, L.headerNameChars, "Use a header's name.")) ??
        firstFound(Object.keys(action.headers), (name) => tooLong(`the ${name} header's value`, action.headers[name]!, L.headerValueChars, "Send large data in the body."))
      );
    case "ExecOpenScope":
      return (
        tooMany("commands", action.commands.length, L.commands, "Ask for fewer commands in one scope.") ??
        firstFound(action.commands, (command) => tooLong("the command", command, L.commandChars, "Name the command by a shorter path."))
      );
    case "Exec":
      return (
        tooLong("the command", action.command, L.commandChars, "Name the command by a shorter path.") ??
        tooMany("arguments", action.args.length, L.args, "Pass fewer at once: run the command several times, or write the list to a file the command reads.") ??
        path("the working directory", action.cwd)
      );
    case "Print":
    case "Classify":
    case "ReadInput":
    case "CloseScope":
    case "Chat":
    case "ChatClassified":
      return null;
  }
}
