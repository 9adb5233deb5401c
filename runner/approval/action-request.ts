// What an action is, for deciding its tier and for the audit log: a category rules can
// name, the subject rules match on, and a canonical pattern — a stable one-line name that
// approvals are remembered under and people read ("exec git push *", "fs.delete /w/a.txt",
// "net POST api.example.com"). Built from the action alone and the host's own records (a
// scope's root), never from anything the model says about it.

import path from "node:path";
import type { Action } from "../../library/protocol.js";
import { digestOf } from "../audit/digest.js";
import { realPathInScope, resolvedPath, resolveRealOrSelf } from "../fs/containment.js";
import { hostOf } from "../net/host-policy.js";
import { shownWord } from "../shell-word.js";
import type { RuleAction } from "./policy.js";
import type { PathUse } from "../fs/protected-paths.js";

/** A path an action names, and where it leads. */
export interface PathSubject {
  kind: "path";
  /** Absolute, as named (paths()[0], without resolving anything). */
  named: string;
  /** As named, and as it really leads (symlinks resolved); computed only when a rule needs them. */
  paths: () => string[];
  /** The action reads what lies below the path too (a search, a listing): a rule on anything there applies. */
  tree: boolean;
  /** Where a path (as named) really leads, as the action will be carried out: for paths() now, and again after a question. */
  realOf: (absolute: string) => string;
  /** What paths() found, if a rule (or a question) needed it: what the action was judged by. */
  judged: () => string[] | undefined;
  /** The root of the scope the action is in, as named and as it really led when the scope opened; empty for none. */
  scopeRoots: readonly string[];
}

export type RequestSubject =
  | PathSubject
  | {
      kind: "command";
      command: string;
      args: readonly string[];
      /** What it is given on standard input (exec's `input`), or null. */
      input?: string | null;
      /** Its working directory, absolute, as named (exec's `cwd`); absent: tacit's own. */
      cwd?: string;
    }
  | {
      kind: "url";
      method: string;
      url: URL;
      /**
       * The methods the request also names for a server to take instead of its own (see
       * methodOverrides), "any" where one is named out of sight; absent: none.
       */
      overrides?: readonly string[] | "any";
    }
  | { kind: "none" };

export interface ActionRequest {
  /** What rules name; "internal" for actions no rule can raise (printing, scopes, classify). */
  category: RuleAction | "internal";
  pattern: string;
  subject: RequestSubject;
}

export interface ScopeLookup {
  /** Where relative roots start. */
  cwd: string;
  /**
   * A live file-system scope's root, as named (made absolute) and as it really led when the
   * scope opened (where its actions are carried out), or null when the token names none.
   */
  fsScope(token: string): { root: string; realRoot: string } | null;
}

const FS_CATEGORY = {
  FsStat: "fs.stat",
  FsSize: "fs.read",
  FsRead: "fs.read",
  FsReadChunk: "fs.read",
  FsList: "fs.read",
  FsFind: "fs.read",
  FsGrep: "fs.read",
  FsGrepRecursive: "fs.read",
  FsWrite: "fs.write",
  FsDelete: "fs.delete",
  FsMkdir: "fs.mkdir",
  FsReadClassified: "fs.readClassified",
  FsWriteClassified: "fs.writeClassified",
} as const satisfies Partial<Record<Action["kind"], RuleAction>>;

/** An action on one path inside a file-system scope. */
export type FsPathAction = Extract<Action, { kind: keyof typeof FS_CATEGORY }>;

export function isFsPathAction(action: Action): action is FsPathAction {
  return Object.hasOwn(FS_CATEGORY, action.kind);
}

/**
 * An action that reads one file (or looks at it) and is carried out by the executor within the
 * monitor's dispatch call, before it returns its promise: nothing it does waits.
 */
export type SingleFileRead = Extract<Action, { kind: "FsRead" | "FsReadChunk" | "FsStat" | "FsSize" }>;

export function isSingleFileRead(action: Action): action is SingleFileRead {
  return action.kind === "FsRead" || action.kind === "FsReadChunk" || action.kind === "FsStat" || action.kind === "FsSize";
}

/** Whether a file-system action only reads its path, or may change what is there. */
export function fsPathUse(action: FsPathAction): PathUse {
  const category = FS_CATEGORY[action.kind];
  return category === "fs.read" || category === "fs.stat" || category === "fs.readClassified" ? "read" : "change";
}

function internal(pattern: string): ActionRequest {
  return { category: "internal", pattern, subject: { kind: "none" } };
}

export function pathSubject(
  absolute: string,
  tree = false,
  realOf: (absolute: string) => string = resolveRealOrSelf,
  scopeRoots: readonly string[] = [],
): RequestSubject {
  let paths: string[] | undefined;
  return {
    kind: "path",
    named: absolute,
    tree,
    realOf,
    scopeRoots,
    judged: () => paths,
    paths: () => {
      if (paths) return paths;
      const real = realOf(absolute);
      return (paths = real === absolute ? [absolute] : [absolute, real]);
    },
  };
}

/**
 * The pattern a person is asked about and a yes is remembered under. For a path that leads
 * elsewhere through a link, where it leads is part of it: a security review had a person
 * asked about "fs.write /w/docs/notes.txt" where docs linked into deploy/ (the rule on
 * deploy/** was why they were asked, and the question did not say so), and a yes given while
 * a path was plain went on covering it once it had become a link to somewhere else.
 *
 * For a command given a working directory other than tacit's own, that directory (where it
 * really leads, `runsIn`: the gate resolves it once, for this and for the question) is part of it: `make deploy` or `rm -r build` act on what is there, and a
 * security review's yes to "rm victim.txt (in …/scratch)", remembered as `exec rm victim.txt`,
 * later removed important/victim.txt with no question. A command run in tacit's working
 * directory keeps the plain pattern, which approvals are already remembered in. The suffix
 * cannot be part of a command's shape: neither a command name nor a subcommand holds a "/".
 *
 * So is what a command reads on standard input, by its digest (the question shows it whole):
 * `sh`, `git apply`, `psql` or `crontab` do what it says, and a security review's yes to `sh`
 * reading "echo hello > hello.txt", remembered as `exec sh`, later ran "rm important.txt" unasked.
 */
export function approvalPattern(request: ActionRequest, runsIn: string | null = null): string {
  if (request.subject.kind === "command") {
    const input = request.subject.input ?? null;
    // The directory as a shown word (plain, else a JSON string): written as it was, a script's
    // directory named `sub) (input sha256:<digest of "rm important.txt">` made `sh`, reading
    // nothing there, ask and be remembered as `sh` reading that input in sub/, which the yes then ran unasked.
    return `${request.pattern}${runsIn === null ? "" : ` (in ${shownWord(runsIn)})`}${input === null ? "" : ` (input ${digestOf(input)})`}`;
  }
  if (request.subject.kind !== "path") return request.pattern;
  const real = request.subject.paths()[1];
  return real === undefined ? request.pattern : `${request.pattern} -> ${real}`;
}

/**
 * The shape of a command line approvals are remembered by: the command, its first argument
 * when that is a plain word (a subcommand: "git push", "npm test"), and "*" for the rest.
 */
export function commandShape(command: string, args: readonly string[]): string {
  const words = [command];
  let rest = args;
  if (args.length > 0 && /^[A-Za-z][A-Za-z0-9:._-]*$/.test(args[0]!)) {
    words.push(args[0]!);
    rest = args.slice(1);
  }
  if (rest.length > 0) words.push("*");
  return words.join(" ");
}

/** The parameter Rails, Laravel and Symfony name the method by (`_method=DELETE`), in the query or a form body. */
const METHOD_PARAMETER = "_method";

/**
 * The methods a request names for the server to take instead of its own, and how its pattern says
 * so ("" for none): its query's `_method` parameters; "any" where its body may name one (one that
 * holds `_method` anywhere, or a classified one, out of sight: tacit does not parse bodies, and
 * frameworks read the parameter from forms and JSON alike). Judged by the request line's method
 * alone, an always-ask rule on DELETE to a host let a script POST `_method=DELETE` to it, which
 * such a server deletes on, unasked. Said in the pattern, a yes to a POST is none to a POST that
 * may be taken as another method. (The override headers, X-HTTP-Method-Override and the like, are
 * refused outright: see the net executor.)
 */
function methodOverrides(action: Extract<Action, { kind: "HttpRequest" | "HttpRequestClassified" }>, url: URL): { overrides: string[] | "any"; said: string } {
  if (action.classifiedBody !== null) return { overrides: "any", said: " (method override: maybe, in the classified body)" };
  if (action.body !== null && mayNameMethodParameter(action.body)) return { overrides: "any", said: " (method override: maybe, in the body)" };
  const overrides = queryMethodOverrides(url);
  return { overrides, said: overrides.length === 0 ? "" : ` (method override: ${overrides.map(shownWord).join(" ")})` };
}

/** The methods a URL's query names by `_method` (upper case, each once). */
export function queryMethodOverrides(url: URL): string[] {
  const named = [...url.searchParams.entries()].filter(([name]) => asPhpNames(name).toLowerCase() === METHOD_PARAMETER).map(([, value]) => value.trim().toUpperCase());
  return [...new Set(named)];
}

/**
 * A parameter's name as PHP makes it a key of $_GET and $_POST (where Laravel and Symfony read
 * `_method`): leading spaces dropped, and each space, ".", "[" and character 0x80–0x9f made "_".
 * Compared as written, `.method=DELETE` was no override to tacit and `_method` to PHP.
 */
function asPhpNames(name: string): string {
  return name.replace(/^ +/, "").replace(/[ .[\u0080-\u009f]/g, "_");
}

/**
 * Whether a body may name the method parameter in any spelling a framework decodes to it: read
 * with its escapes undone (a form's `+` and `%XX`, which Rack and PHP decode in names, and
 * JSON's `\uXXXX`), `_method` anywhere, or a name PHP makes `_method` (see asPhpNames) where a
 * name may start. Looked for only as written, `%5Fmethod=DELETE`, `{"\u005fmethod":"DELETE"}`
 * and `.method=DELETE` each reached a server that takes them as a DELETE, unasked.
 */
export function mayNameMethodParameter(body: string): boolean {
  const decoded = body
    .replace(/\+/g, " ")
    .replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
    .replace(/\\u([0-9a-f]{4})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
    .toLowerCase();
  return decoded.includes(METHOD_PARAMETER) || PHP_METHOD_NAME.test(decoded);
}

/** A name PHP makes `_method` (see asPhpNames), at a name's start: the body's, or after a character no name holds. */
const PHP_METHOD_NAME = /(?:^|[^a-z0-9_])[ ]*[.[\u0080-\u009f]method/;

/**
 * A request's pattern: method, scheme (when plain HTTP), host and port. An IPv6 host keeps its
 * brackets: without them `http://[::1]:8080` and `http://[::1:8080]` (port 80, another address)
 * were both `net GET http://::1:8080`, and a yes to one was remembered for the other.
 */
export function urlPattern(method: string, url: URL): string {
  const port = url.port === "" ? "" : `:${url.port}`;
  const host = hostOf(url);
  return `net ${method.toUpperCase()} ${url.protocol === "http:" ? "http://" : ""}${host.includes(":") ? `[${host}]` : host}${port}`;
}

export function describeAction(action: Action, scopes: ScopeLookup): ActionRequest {
  switch (action.kind) {
    case "Print":
      return internal("print");
    case "Classify":
      return internal("classify");
    case "ClassifiedMap":
      return internal(action.flat ? "classified.flatMap" : "classified.map");
    case "ReadInput":
      return internal("input.read");
    case "CloseScope":
      return internal("scope.close");
    case "FsOpenScope": {
      const absolute = path.resolve(scopes.cwd, action.root);
      return { category: "fs.open", pattern: `fs.open ${absolute}`, subject: pathSubject(absolute) };
    }
    case "NetOpenScope":
      return internal(`net.open ${action.hosts.join(" ")}`);
    case "ExecOpenScope":
      return internal(`exec.open ${action.commands.join(" ")}`);
    case "Exec":
      return {
        category: "exec",
        pattern: `exec ${commandShape(action.command, action.args)}`,
        subject: {
          kind: "command",
          command: action.command,
          args: action.args,
          input: action.input,
          cwd: path.resolve(scopes.cwd, action.cwd ?? "."),
        },
      };
    case "HttpRequest":
    case "HttpRequestClassified": {
      let url: URL;
      try {
        url = new URL(action.url);
      } catch {
        return { category: "net", pattern: "net (not a URL)", subject: { kind: "none" } };
      }
      const { overrides, said } = methodOverrides(action, url);
      return {
        category: "net",
        pattern: `${urlPattern(action.method, url)}${said}`,
        subject: { kind: "url", method: action.method.toUpperCase(), url, ...(said === "" ? {} : { overrides }) },
      };
    }
    case "Chat":
      return { category: "chat", pattern: "chat", subject: { kind: "none" } };
    case "ChatClassified":
      return { category: "chat", pattern: "chat classified", subject: { kind: "none" } };
    default: {
      if (!isFsPathAction(action)) return assertNever(action);
      const category = FS_CATEGORY[action.kind];
      const scope = scopes.fsScope(action.scope);
      // Not a live scope: the executor refuses it; nothing to match.
      if (scope === null) return { category, pattern: `${category} (no scope)`, subject: { kind: "none" } };
      // The stub sends absolute paths, mostly normalized already: resolvedPath keeps those as they are.
      const absolute = path.sep === "/" && action.path.startsWith("/") ? resolvedPath(action.path) : path.resolve(scope.root, action.path);
      const tree = action.kind === "FsGrepRecursive" || action.kind === "FsFind" || action.kind === "FsList";
      // Where the path leads is found as the executor finds it: below the real root the scope
      // opened at. Resolved from the root as named, a link to the root that had since gone (or
      // led elsewhere) hid where the action landed from the rules: a security review opened
      // requestFileSystem("dep") with dep -> deploy, deleted the link dep, and wrote
      // dep/prod.conf into deploy/ with no question under an always-ask rule on deploy/**.
      const realOf = (named: string): string => {
        try {
          return realPathInScope(scope.root, scope.realRoot, named);
        } catch {
          return resolveRealOrSelf(named); // the executor refuses such a path; for naming only
        }
      };
      return { category, pattern: `${readKind(action) ?? category} ${absolute}`, subject: pathSubject(absolute, tree, realOf, [scope.root, scope.realRoot]) };
    }
  }
}

/**
 * What a read below a directory is called in its pattern, when it reads more than the directory's
 * own entries: every name below it (walk, find), or every file's content below it (a recursive
 * search). They are asked about under a rule on anything below (see policy.ts) and were all
 * `fs.read <dir>`, a listing's pattern too: a security review had a person approve listing the
 * project's root (under a rule on private/**), and the remembered yes let grepRecursive(".") read
 * every file in private/ unasked. Null for the rest (their category names them).
 */
function readKind(action: FsPathAction): string | null {
  if (action.kind === "FsGrepRecursive") return "fs.search";
  if (action.kind === "FsFind" || (action.kind === "FsList" && action.recursive)) return "fs.walk";
  return null;
}

function assertNever(action: never): never {
  throw new Error(`tacit: no description for action ${JSON.stringify(action)}`);
}
