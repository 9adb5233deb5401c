// Which paths hold secrets. Patterns are gitignore-like:
//   - no "/"            matches any path component      (".env", "*.pem", ".env.*")
//   - relative with "/" is anchored at the filesystem root ("home/*/.ssh", "srv/**/keys")
//   - absolute          matches the full path; its non-glob prefix is resolved through symlinks
// A trailing "/" is dropped; a path is classified if it or any ancestor matches.
// A pattern matches as written and in any case (see FOLDED_GLOB_OPTIONS).

import path from "node:path";
import picomatch from "picomatch";
import { caseFolded } from "./case-folding.js";
import { forPicomatch, withLiteralBracesAndGroups, withLiteralGroups } from "./glob-classes.js";
import { isWithin, resolvedPath, resolveReal, resolveRealOrSelf } from "./containment.js";

export const DEFAULT_CLASSIFIED_PATHS: readonly string[] = [
  ".ssh", ".gnupg", ".env", ".env.*", ".netrc", ".npmrc", ".pypirc", ".docker", ".kube", ".aws", ".azure", ".gcloud",
  // Further stores of credentials in plain files: git's credential store, PostgreSQL's and
  // MySQL's passwords, Vault's and Terraform's tokens, and under ~/.config the gcloud SDK's
  // credentials (it keeps none in ~/.gcloud) and GitHub CLI's tokens (hosts.yml), and cargo's.
  ".git-credentials", ".pgpass", ".my.cnf", ".vault-token", ".terraformrc",
  "**/.config/gcloud", "**/.config/gh", "**/.cargo/credentials", "**/.cargo/credentials.toml",
  // The tokens of the coding agents that drive tacit (Claude Code, Codex CLI, Gemini CLI,
  // GitHub Copilot), in the home directory: tacit started there makes it the default root, and
  // a script read them as text (a confined command finds them covered, as every hidden entry).
  "**/.claude/.credentials.json", "**/.codex/auth.json", "**/.gemini/oauth_creds.json", "**/.config/github-copilot",
  // Private keys and key stores wherever they lie (Let's Encrypt's privkey.pem, Rails's
  // config/master.key, Java's keystores), Terraform's variables and state (state holds every
  // secret a plan touched), Cloudflare Wrangler's local secrets, s3cmd's and boto's keys, and
  // the shells' and database clients' histories, where tokens typed on a command line stay.
  "*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore",
  "*.tfvars", "*.tfstate", "*.tfstate.backup", ".dev.vars", ".s3cfg", ".boto", ".htpasswd",
  ".bash_history", ".zsh_history", ".psql_history", ".mysql_history", ".python_history", ".node_repl_history",
  // The secrets a container is given as files: Docker's and Compose's secrets, and Kubernetes's
  // (a service account's token, which speaks to the cluster's API as that account). tacit is a
  // container's entrypoint too, where --allowed-roots / made them plain text to a script. And
  // systemd's credentials of a service (LoadCredential=, SetCredential=: $CREDENTIALS_DIRECTORY
  // is /run/credentials/<unit>), for tacit run as one.
  "/run/secrets", "/var/run/secrets", "/run/credentials",
];

const GLOB_CHAR = /[*?[\]{}!]/;

/** A pattern as it is matched: surrounding space and a trailing "/" dropped. */
export function cleanedPattern(pattern: string): string {
  return pattern.trim().replace(/\/+$/, "");
}

/**
 * `pattern` as gitignore reads it: trailing spaces dropped unless escaped with a backslash
 * (git's trim_trailing_spaces), leading space kept, then a trailing "/" dropped. cleanedPattern
 * trims every space, so an operator's `credentials\ ` (gitignore's way to write the name
 * "credentials ") or ` notes` classified no file of that name, and a script read it as text.
 */
export function gitignorePattern(pattern: string): string {
  let lastSpace = -1;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === " ") {
      if (lastSpace === -1) lastSpace = i;
      continue;
    }
    // A backslash escapes the next character (an escaped space is kept); one at the very end, nothing.
    if (c === "\\") {
      i++;
      if (i === pattern.length) return pattern.replace(/\/+$/, "");
    }
    lastSpace = -1;
  }
  return (lastSpace === -1 ? pattern : pattern.slice(0, lastSpace)).replace(/\/+$/, "");
}

/** An empty component, or a "." one before another, of a pattern with "/". */
const UNNORMALIZED = /\/\/|(?:^|\/)\.\//;

/**
 * A pattern with "/" written with `//` or `/./` (a prefix joined to a part that begins with "/",
 * say), as the path it names: as written it matched no path past its first glob (tacit names
 * every path normalized), so `/work/app/*\/\/token.json` left the tokens readable as plain text,
 * with no warning. Anchored at the filesystem root as before: one left without a "/" (`./x`) is
 * written absolute. ".." is left as written: what a glob's parent is, a pattern does not say.
 */
function normalizedPattern(pattern: string): string {
  if (!pattern.includes("/") || !UNNORMALIZED.test(pattern)) return pattern;
  let normalized = pattern.replace(/\/{2,}/g, "/");
  while (normalized.includes("/./")) normalized = normalized.replace("/./", "/");
  if (normalized.startsWith("./")) normalized = normalized.slice(2);
  return normalized.includes("/") ? normalized : `/${normalized}`;
}

/**
 * The patterns a configured one is matched as: cleanedPattern's form, gitignore's where it differs
 * (spaces at its ends), and each normalized (normalizedPattern). Any of them classifies: a pattern
 * is never matched more narrowly than gitignore would, nor than tacit did before.
 */
function patternForms(pattern: string): string[] {
  const forms = [cleanedPattern(pattern), gitignorePattern(pattern)];
  // "/" alone is no pattern, as before (a trailing "/" is dropped): it would classify every path.
  return [...new Set([...forms, ...forms.map(normalizedPattern)])].filter((p) => p !== "" && p !== "/");
}

type Matcher = (absolute: string) => boolean;

/**
 * Compiled forms, kept for the process: each evaluation builds its ClassifiedPaths anew (an
 * absolute pattern's prefix is resolved again, the file system may have changed), but what a
 * pattern compiles to never changes. Compiling the defaults cost tacit serve about half a
 * millisecond a call. The expressions have neither the g nor the y flag: they keep no state.
 */
const compiled = new Map<string, unknown>();
const COMPILED_KEPT = 1_000;

function once<T>(key: string, compile: () => T): T {
  if (compiled.has(key)) return compiled.get(key) as T;
  const value = compile();
  if (compiled.size >= COMPILED_KEPT) compiled.clear();
  compiled.set(key, value);
  return value;
}

/**
 * picomatch's options for a classified pattern: dot files included, and flags "s", so that `**`
 * (a `.` in picomatch's expression) also matches a name holding a line break (\n, \r, U+2028,
 * U+2029). Without it `secrets/**` left `secrets/a\nb` ordinary, as a review found for the
 * approval rules' globs (policy.ts).
 */
const GLOB_OPTIONS = { dot: true, flags: "s" } as const;

/**
 * The same, in any case ("i"): tried on a text in lower case (see caseFolded). On a
 * case-insensitive file system whose paths keep the case they were named in (Linux's casefold
 * directories on ext4, f2fs or tmpfs, FAT and exFAT drives, SMB shares, WSL's /mnt/c) `.ENV` opens
 * `.env` and `ID.PEM` opens `id.pem`, and the real path is still `.ENV` (macOS's realpath, which
 * resolveReal uses, gives the case on disk): matched by their letters as written, a script read
 * both as text. A pattern is also still tried as written (GLOB_OPTIONS), so that case never
 * makes a path ordinary that was classified (`.env.[!e]*` classifies `.env.Example`).
 */
const FOLDED_GLOB_OPTIONS = { dot: true, flags: "is" } as const;


/**
 * A pattern as picomatch is given it: a class's "[!…]" written "[^…]", which picomatch reads as
 * gitignore does, every character but those listed (see glob-classes.ts). As written, ".env.[!e]*"
 * (every .env.* but .env.example) classified .env.example and left .env.production readable.
 */
const asGiven = forPicomatch;

type GlobOptions = typeof GLOB_OPTIONS | typeof FOLDED_GLOB_OPTIONS;

/** picomatch's test for `pattern` with `options` (see GLOB_OPTIONS, FOLDED_GLOB_OPTIONS). */
const globTest = (pattern: string, options: GlobOptions): picomatch.Matcher =>
  once(`test\0${options.flags}\0${pattern}`, () => picomatch(asGiven(pattern), options));

/** All of `patterns` as one expression, or null where one has other flags than `options` give and cannot be joined. */
function combinedExpression(patterns: readonly string[], options: GlobOptions): RegExp | null {
  return once(`names\0${options.flags}\0${patterns.join("\0")}`, () => {
    const expressions = patterns.map((pattern) => picomatch.makeRe(asGiven(pattern), options));
    return expressions.every((expression) => expression.flags === options.flags)
      ? new RegExp(expressions.map((expression) => `(?:${expression.source})`).join("|"), options.flags)
      : null;
  });
}

/** A part of a plain pattern (see isPlainPattern): letters, digits, ".", "_", "-" and "*". */
const PLAIN_PART = /^[\w.*-]+$/;

/**
 * Whether every "/"-separated part of `pattern` is a name of letters, digits, ".", "_" and "-",
 * with "*" anywhere in it, or is "**", and none is empty, "." or ".." (which picomatch reads
 * otherwise): picomatch reads each of its characters but "*" as that character. The defaults
 * are all plain.
 */
function isPlainPattern(pattern: string): boolean {
  return pattern
    .split("/")
    .every((part) => PLAIN_PART.test(part) && part !== "." && part !== ".." && (part === "**" || !part.includes("**")));
}

/** What every text a plain pattern matches starts with, and what it ends with (see plainEnds). */
interface PlainEnds {
  prefix: string;
  suffix: string;
}

/**
 * What every text that the plain pattern `pattern` matches starts and ends with: its text before
 * the first "*" and after the last (all of it, and nothing, for a pattern without one), each
 * without the "/" next to the "*", which "**" can do without ("a/**" matches "a", "**\/b" matches
 * "b"); dropped beside a single "*" too, which only lets more texts through to the expression.
 */
function plainEnds(pattern: string): PlainEnds {
  const first = pattern.indexOf("*");
  if (first === -1) return { prefix: pattern, suffix: "" };
  const prefix = pattern.slice(0, first);
  const suffix = pattern.slice(pattern.lastIndexOf("*") + 1);
  return { prefix: prefix.endsWith("/") ? prefix.slice(0, -1) : prefix, suffix: suffix.startsWith("/") ? suffix.slice(1) : suffix };
}

const SLASH = 0x2f;

/** The lower case of the ASCII character `code`, or `code` itself for any other. */
const lowerAscii = (code: number): number => (code >= 0x41 && code <= 0x5a ? code + 0x20 : code);

/** Per UTF-16 code unit past ASCII: 0 not yet asked, 1 caseFolded makes no ASCII of it, 2 it does. */
const FOLDS_TO_ASCII = new Uint8Array(0x10000);

/**
 * Whether caseFolded may make the text whose first (or last) character is `code` begin (or end)
 * otherwise than with that character's lower case: it is past ASCII and folds to ASCII letters
 * (the Kelvin sign to "k", the long s to "s", the ligature "ﬁ" to "fi", "İ" to "i" and a dot), or
 * it is not there (an empty text). Any other character past ASCII (a name in Japanese, say) is
 * none of the patterns' ASCII ends, in any case. A code unit of a surrogate pair folds alone to
 * itself: no character past the first 64 Ki folds to ASCII.
 */
function foldsUnseen(code: number): boolean {
  if (code <= 0x7f) return false;
  if (!(code <= 0xffff)) return true;
  if (FOLDS_TO_ASCII[code] === 0) FOLDS_TO_ASCII[code] = /[\x00-\x7f]/.test(caseFolded(String.fromCharCode(code))) ? 2 : 1;
  return FOLDS_TO_ASCII[code] === 2;
}

/**
 * A quick look that rules out, for most texts, that any of `patterns` matches (true: none can;
 * false: the joined expression decides), where the patterns are all plain (isPlainPattern); null
 * for any other set, and for one holding a pattern that may match anything ("*"). Every name a
 * search walks, and every path a read opens, is tried on the classified patterns, and the
 * expression's run (which tries "*.pem", "*.key", … at each character) cost about a third of a
 * microsecond each for a name and a path, where a text's first and last characters rule out
 * nearly every pattern: "f12.txt" starts with no pattern's prefix and ends with no pattern's
 * suffix. It rules out matches in any case (so also those as written): the patterns' ends are
 * ASCII, kept in lower case, and looked up by the text's first and last characters in lower case;
 * only a text that passes is folded (caseFolded, about 30 ns a name) to compare the ends, and one
 * that begins or ends past ASCII is left to the expression. Its "none can" is only ever where
 * picomatch answers no for each pattern too (test/files/classified-paths.test.ts holds it to
 * that); a text ending in "/", which picomatch matches more loosely ("x.pem/"), is left to the expression.
 */
function quickRefusal(patterns: readonly string[]): ((text: string) => boolean) | null {
  if (!patterns.every(isPlainPattern)) return null;
  /** Patterns by the first character of their prefix; those without a prefix, by the last character of their suffix. */
  const byFirst = new Map<number, PlainEnds[]>();
  const byLast = new Map<number, PlainEnds[]>();
  for (const { prefix, suffix } of patterns.map(plainEnds)) {
    if (prefix === "" && suffix === "") return null;
    const ends = { prefix: prefix.toLowerCase(), suffix: suffix.toLowerCase() };
    const [table, key] = ends.prefix !== "" ? [byFirst, ends.prefix.charCodeAt(0)] : [byLast, ends.suffix.charCodeAt(ends.suffix.length - 1)];
    table.set(key, [...(table.get(key) ?? []), ends]);
  }
  const fits = (candidates: readonly PlainEnds[] | undefined, folded: string): boolean =>
    candidates !== undefined && candidates.some(({ prefix, suffix }) => folded.startsWith(prefix) && folded.endsWith(suffix));
  return (text) => {
    const first = text.charCodeAt(0);
    const last = text.charCodeAt(text.length - 1);
    if (last === SLASH || foldsUnseen(first) || foldsUnseen(last)) return false;
    const startingSo = byFirst.get(lowerAscii(first));
    const endingSo = byLast.get(lowerAscii(last));
    if (startingSo === undefined && endingSo === undefined) return true;
    const folded = caseFolded(text);
    return !fits(startingSo, folded) && !fits(endingSo, folded);
  };
}

/**
 * One test for all of `patterns`, as picomatch's own test of each would answer, as written or in
 * any case (on the text in lower case, FOLDED_GLOB_OPTIONS): their regular expressions joined
 * into one, plus picomatch's exact-text match, and nothing for "". `refuses`: the quick look that
 * rules out most texts before either, without folding them (see quickRefusal), or null.
 */
function combinedTest(patterns: readonly string[]): { test: Matcher; refuses: ((text: string) => boolean) | null } {
  if (patterns.length === 0) return { test: () => false, refuses: null };
  const asWritten = combinedExpression(patterns, GLOB_OPTIONS);
  const inAnyCase = combinedExpression(patterns, FOLDED_GLOB_OPTIONS);
  if (asWritten === null || inAnyCase === null) {
    const tests = patterns.map((pattern) => globTest(pattern, GLOB_OPTIONS));
    const foldedTests = patterns.map((pattern) => globTest(pattern, FOLDED_GLOB_OPTIONS));
    return { test: inAnyNormalization((text) => tests.some((test) => test(text)) || foldedTests.some((test) => test(caseFolded(text)))), refuses: null };
  }
  const exact = new Set(patterns);
  const exactFolded = new Set(patterns.map(caseFolded));
  const refuses = once(`refuses\0${patterns.join("\0")}`, () => quickRefusal(patterns));
  const test = inAnyNormalization((text) => {
    if (text === "") return false;
    if (exact.has(text) || asWritten.test(text)) return true;
    const folded = caseFolded(text);
    return exactFolded.has(folded) || inAnyCase.test(folded);
  });
  return { test: refuses === null ? test : (text) => !refuses(text) && test(text), refuses };
}

const NOT_ASCII = /[^\x00-\x7f]/;

/**
 * `test`, tried on a text past ASCII also as composed (NFC). The patterns are matched in either
 * normalization (inEitherNormalization), but a name can mix them: `gültig-clé.txt` with "ü" as "u"
 * and a diaeresis and "é" as one character is neither the pattern's NFC nor its NFD, and a casefold
 * directory (ext4, f2fs, tmpfs) or macOS finds the file by it all the same: a script read a file so
 * classified as text. Composed, it is the NFC spelling. (An ASCII text composes to itself.)
 */
function inAnyNormalization(test: Matcher): Matcher {
  return (text) => {
    if (test(text)) return true;
    if (!NOT_ASCII.test(text)) return false;
    const composed = text.normalize("NFC");
    return composed !== text && test(composed);
  };
}

/**
 * One test for all the name patterns (most configured patterns are names), answering by name:
 * a walk asks it of every entry, and meets the same names again and again (index.ts,
 * package.json, f0.ts in every directory), and an answer depends on the name alone. A name the
 * quick look rules out is answered at once, not remembered: 10,000 reads of 10,000 files filled
 * and emptied the answers for nothing.
 */
function namesMatcher(patterns: readonly string[]): (name: string) => boolean {
  if (patterns.length === 0) return () => false;
  const { test, refuses } = combinedTest(patterns);
  const answers = new Map<string, boolean>();
  return (name) => {
    if (refuses !== null && refuses(name)) return false;
    let answer = answers.get(name);
    if (answer === undefined) {
      answer = test(name);
      if (answers.size >= NAME_ANSWERS) answers.clear();
      answers.set(name, answer);
    }
    return answer;
  };
}

/** Names whose answers are kept, at most (then they are forgotten and asked again). */
const NAME_ANSWERS = 10_000;

/**
 * The path patterns (anchored ones, tried on the path below the filesystem root, and absolute
 * ones, on the whole path) as joined tests: each was a picomatch test of its own, asked of
 * every path a read opens and every entry a search walks.
 *
 * A pattern whose last component is plain text (see PLAIN_COMPONENT) matches only paths whose
 * last component is that text, so it is tried only on those: the defaults' patterns that start
 * with "**" (.config/gcloud at any depth, and their like), joined, cost about a microsecond a
 * path, a tenth of a recursive search's time over small files, for paths that end in none of
 * their names. The last component is taken from the path itself, never from a caller.
 */
function pathsMatcher(patterns: readonly string[]): PathPatterns {
  const byLastComponent = new Map<string, string[]>();
  const others: string[] = [];
  for (const pattern of patterns) {
    const last = pattern.slice(pattern.lastIndexOf("/") + 1);
    // Keyed in lower case: such a pattern matches, in any case, paths ending in its component in any case.
    const key = last.toLowerCase();
    if (PLAIN_COMPONENT.test(last)) byLastComponent.set(key, [...(byLastComponent.get(key) ?? []), pattern]);
    else others.push(pattern);
  }
  const endingIn = new Map([...byLastComponent].map(([last, ending]) => [last, joinedPathTest(ending)]));
  // The first and last characters (in lower case) of those components: a path whose last component
  // begins or ends with no such character (and with no character that folds past what it shows,
  // foldsUnseen) ends in none of them, found without folding it (most paths: a read's, a walk's).
  const componentFirsts = new Set([...endingIn.keys()].map((last) => last.charCodeAt(0)));
  const componentLasts = new Set([...endingIn.keys()].map((last) => last.charCodeAt(last.length - 1)));
  const mayEndInOne = (component: string): boolean => {
    const first = component.charCodeAt(0);
    const last = component.charCodeAt(component.length - 1);
    return (foldsUnseen(first) || componentFirsts.has(lowerAscii(first))) && (foldsUnseen(last) || componentLasts.has(lowerAscii(last)));
  };
  const rest = others.length === 0 ? null : joinedPathTest(others);
  // What every path one of the others matches starts with: an anchored pattern is tried on the path below "/".
  // In lower case, and compared with a prefix in lower case: a path in any case may match (see caseFolded).
  const restStarts = others.map((pattern) => ((pattern.startsWith("/") ? "" : "/") + literalStart(pattern)).toLowerCase());
  return {
    test: (p) => {
      const component = p.slice(p.lastIndexOf("/") + 1);
      const ending = mayEndInOne(component) ? endingIn.get(caseFolded(component)) : undefined;
      return (ending !== undefined && ending(p)) || (rest !== null && rest(p));
    },
    endsInOne: (name) => mayEndInOne(name) && endingIn.has(caseFolded(name)),
    othersMayMatchIn: (prefix) => {
      const folded = caseFolded(prefix);
      return restStarts.some((start) => folded.startsWith(start) || start.startsWith(folded));
    },
  };
}

/** The path patterns as pathsMatcher compiles them. */
interface PathPatterns {
  test: Matcher;
  /** Whether `name` (in any case) is the last component of a pattern tried only on paths ending in it. */
  endsInOne: (name: string) => boolean;
  /**
   * False only where no path `prefix` + name (a name without "/") can match one of the other
   * patterns: neither the prefix nor what such a pattern's matches all start with (literalStart)
   * begins with the other.
   */
  othersMayMatchIn: (prefix: string) => boolean;
}

/**
 * What every text `pattern` matches starts with, as picomatch reads it: its characters up to the
 * first that is not a letter, digit, "_", "-", "/" or ".", cut before a "." that begins a
 * component (picomatch drops a leading "./": "./x/*" matches "x/y") and before "//", and without a
 * final "/" ("/a/**" matches "/a"); nothing for a pattern with a "|". Shorter than it could be
 * is only slower: the text is tried on the pattern. A character of any other kind may be glob syntax or an escape, and ends it.
 */
export function literalStart(pattern: string): string {
  // A "|" outside a group picomatch reads as an alternation of the whole pattern ("/a/x|/b/**"
  // matches "/b/k", which read() refuses): matches of such a pattern may start anywhere.
  if (pattern.includes("|")) return "";
  let start = /^[A-Za-z0-9_\-/.]*/.exec(pattern)![0];
  const dotComponent = start.search(/(?:^|\/)\.|\/\//);
  if (dotComponent !== -1) start = start.slice(0, dotComponent);
  return start.endsWith("/") ? start.slice(0, -1) : start;
}

/**
 * A component that picomatch reads as the characters it is, whatever surrounds it: letters,
 * digits, ".", "_" and "-", and not "." or "..". Every other character may be glob syntax
 * ("*", "?", "[", "{", "(", "|", "!", "+", "@", "\\"), which may match other text, or a "/"
 * (in a class or a brace), which would make the component a different one.
 */
const PLAIN_COMPONENT = /^(?!\.\.?$)[A-Za-z0-9._-]+$/;

/** Absolute patterns tried on the whole path, anchored ones on the path below the filesystem root, as one test. */
function joinedPathTest(patterns: readonly string[]): Matcher {
  if (patterns.length === 0) return () => false;
  const absolute = combinedTest(patterns.filter((p) => p.startsWith("/"))).test;
  const anchored = combinedTest(patterns.filter((p) => !p.startsWith("/"))).test;
  // path.parse(p).root, on POSIX: "/" for an absolute path, "" for any other.
  return (p) => absolute(p) || anchored(p.startsWith("/") ? p.slice(1) : p);
}

/** An absolute pattern with its non-glob prefix resolved through symlinks (now), and that prefix as written. */
function resolvedAbsolute(pattern: string): { anchored: string; prefix: string; realPrefix: string } {
  const parts = pattern.split("/");
  const firstGlob = parts.findIndex((part) => GLOB_CHAR.test(part));
  const prefix = (firstGlob === -1 ? parts : parts.slice(0, firstGlob)).join("/") || "/";
  const rest = firstGlob === -1 ? [] : parts.slice(firstGlob);
  // The operator's pattern, resolved as before even through a link into procfs ("/proc/self/environ"): for matching only.
  const realPrefix = resolveReal(prefix, "follow");
  return { anchored: [realPrefix.replace(/\/$/, ""), ...rest].join("/"), prefix: resolvedPath(prefix), realPrefix };
}

/**
 * `pattern`, and its other Unicode normalizations where they differ (a pattern past ASCII):
 * `schlüssel.txt` with "ü" as one character (NFC, as most keyboards type it) and as "u" and a
 * diaeresis (NFD, as macOS hands names over). A casefold directory (ext4, f2fs, tmpfs) finds a
 * file by either spelling and keeps the spelling asked for in the path, so a pattern matched only
 * as typed let a script read the file by the other; elsewhere the other is another file,
 * classified all the same (as approval rules' globs match either).
 */
function inEitherNormalization(pattern: string): string[] {
  return [...new Set([pattern, pattern.normalize("NFC"), pattern.normalize("NFD")])];
}

/**
 * `p` as a case-insensitive, normalizing file system tells names apart: in lower case (caseFolded)
 * and in one Unicode normalization (NFC; "ü" as one character or as "u" and a diaeresis are one
 * name). Only letters and accents change: no "/" is made or removed. classifiesThrough compared
 * the name of a link to delete with the patterns' prefixes as written: on a casefold directory
 * (ext4, f2fs, tmpfs), a FAT drive or macOS, deleting `vault` for a pattern's `Vault`, or
 * `schlüssel` typed in NFD for a pattern's NFC, removed the link itself, and the files it led to
 * were ordinary from the next evaluation on. Elsewhere the other spelling is another link, kept all
 * the same (as classified names match in any case).
 */
function anySpelling(p: string): string {
  return caseFolded(p.normalize("NFC")).normalize("NFC");
}

/** What a name alone says of an entry (see ClassifiedPaths.entriesOf). */
const CLASSIFIED_BY_NAME = 0;
/** Not classified by name, but a path pattern is tried on paths ending in it. */
const TRIED_BY_PATH = 1;
const NOT_BY_NAME = 2;
type NameVerdict = typeof CLASSIFIED_BY_NAME | typeof TRIED_BY_PATH | typeof NOT_BY_NAME;

export class ClassifiedPaths {
  /** Patterns without "/": tested against the last component of a path. */
  private readonly matchesName: (name: string) => boolean;
  /** Anchored and absolute patterns: tested against the whole path. */
  private readonly matchesPath: Matcher;
  /** The same, with what entriesOf needs to try them a directory at a time. */
  private readonly pathPatterns: PathPatterns;

  /**
   * The patterns as this instance matches them: an absolute one with its prefix resolved when
   * it was built. What a search in the worker must skip: given the patterns as written, the
   * worker resolved them again, so a script that deleted the link a prefix named (an ordinary
   * link, deletable) had grepRecursive read the files the pattern classified, which read() still
   * refused (a security review read a secret under `/…/vault/*`, vault a link to store/, that way).
   */
  readonly resolvedPatterns: readonly string[];

  /**
   * The prefixes of absolute patterns, as written, that led elsewhere through a link when this
   * instance was built. In anySpelling, as classifiesThrough compares them.
   */
  private readonly linkedPrefixes: readonly string[];

  /**
   * Whether removing `named` would change what an absolute pattern classifies: it is (or leads
   * to) a link on the way to the pattern's prefix. Deleted, the files behind it were ordinary
   * in the next evaluation, readable by their own names.
   */
  classifiesThrough(named: string): boolean {
    const spelled = anySpelling(named);
    return this.linkedPrefixes.some((prefix) => isWithin(prefix, spelled)) || this.linkedEntries.has(spelled);
  }

  /**
   * Where the entries on the way to those prefixes really are (their directory resolved): the same
   * entries named another way. In anySpelling, as classifiesThrough compares them.
   */
  private readonly linkedEntries: ReadonlySet<string>;

  constructor(readonly patterns: readonly string[]) {
    const cleaned = [...new Set(patterns.flatMap(patternForms))];
    const absolute = cleaned.filter((p) => p.startsWith("/")).map((p) => [p, resolvedAbsolute(p)] as const);
    const anchored = new Map(absolute.map(([p, resolved]) => [p, resolved.anchored]));
    this.resolvedPatterns = cleaned.map((p) => anchored.get(p) ?? p);
    const linked = absolute.filter(([, r]) => r.realPrefix !== r.prefix).map(([, r]) => r.prefix);
    this.linkedPrefixes = linked.map(anySpelling);
    const entries = new Set<string>();
    for (const prefix of linked) {
      for (let entry = prefix; entry !== path.dirname(entry); entry = path.dirname(entry)) {
        entries.add(anySpelling(path.join(resolveRealOrSelf(path.dirname(entry)), path.basename(entry))));
      }
    }
    this.linkedEntries = entries;
    // A pattern with "(", ")" or "|" is also matched with those characters as they are (see
    // withLiteralGroups), and one with braces too as gitignore reads it, braces as they are
    // (see withLiteralBracesAndGroups): any reading classifies.
    const resolved = this.resolvedPatterns.flatMap(inEitherNormalization).flatMap((p) => {
      const readings = [p, withLiteralGroups(p), withLiteralBracesAndGroups(p)].filter((reading): reading is string => reading !== null);
      return [...new Set(readings)];
    });
    this.matchesName = namesMatcher(resolved.filter((p) => !p.includes("/")));
    this.pathPatterns = pathsMatcher(resolved.filter((p) => p.includes("/")));
    this.matchesPath = this.pathPatterns.test;
  }

  /** This exact path matches a pattern (its ancestors not considered); `name` is its last component, if the caller has it. */
  matchesExactly(absolute: string, name: string = path.basename(absolute)): boolean {
    return this.matchesName(name) || this.matchesPath(absolute);
  }

  /**
   * matchesExactly for the entries of the directory `dir` (absolute and normalized), asked by
   * name: what a recursive search asks of every entry it walks. The same answers, reached with
   * less: what a name alone decides (the name patterns, and whether any path pattern is tried only
   * on paths ending in it) is remembered by name (a tree holds the same names again and again),
   * and the other path patterns are tried only in directories where one of them may match an
   * entry (othersMayMatchIn): most of those are absolute, and name a few places (tacit's own files).
   * Asked of every entry of 20,000 files, matchesExactly cost about a tenth of a search's CPU,
   * with the compilation of its closures. Only for the search's walk.
   */
  entriesOf(dir: string): (name: string) => boolean {
    const prefix = dir === "/" ? "/" : `${dir}/`;
    const othersMayMatch = this.pathPatterns.othersMayMatchIn(prefix);
    return (name) => {
      // Never so from a listing; answered the long way, whatever it is.
      if (name === "" || name.includes("/")) return this.matchesExactly(prefix + name, name);
      const verdict = this.nameVerdict(name);
      if (verdict === CLASSIFIED_BY_NAME) return true;
      return (verdict === TRIED_BY_PATH || othersMayMatch) && this.matchesPath(prefix + name);
    };
  }

  /** What a name alone decides (see entriesOf), remembered for at most NAME_ANSWERS names. */
  private readonly nameVerdicts = new Map<string, NameVerdict>();

  private nameVerdict(name: string): NameVerdict {
    let verdict = this.nameVerdicts.get(name);
    if (verdict === undefined) {
      verdict = this.matchesName(name) ? CLASSIFIED_BY_NAME : this.pathPatterns.endsInOne(name) ? TRIED_BY_PATH : NOT_BY_NAME;
      if (this.nameVerdicts.size >= NAME_ANSWERS) this.nameVerdicts.clear();
      this.nameVerdicts.set(name, verdict);
    }
    return verdict;
  }

  /**
   * Answers for directories already asked about. Matching depends only on the path string
   * (the patterns are fixed at construction), so a remembered answer is always right.
   */
  private readonly directoryAnswers = new Map<string, boolean>();

  /** True if the absolute path or one of its ancestors matches a pattern. */
  matches(absolute: string): boolean {
    const resolved = resolvedPath(absolute);
    return this.matchesExactly(resolved) || this.directoryMatches(path.dirname(resolved));
  }

  private directoryMatches(dir: string): boolean {
    let answer = this.directoryAnswers.get(dir);
    if (answer === undefined) {
      const parent = path.dirname(dir);
      answer = this.matchesExactly(dir) || (parent !== dir && this.directoryMatches(parent));
      if (this.directoryAnswers.size > 50_000) this.directoryAnswers.clear();
      this.directoryAnswers.set(dir, answer);
    }
    return answer;
  }

  /**
   * Classified if the path as named or where it really leads is: a link to a secret is a
   * secret, and so is a secret's name pointing somewhere ordinary.
   */
  isClassified(named: string, real: string): boolean {
    return this.matches(named) || (real !== named && this.matches(real));
  }
}
