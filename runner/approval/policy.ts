// The `policy` section: which actions a person must approve. Without it every action the
// static allowlists permit is `allow` and the rest is denied, so unattended runs behave as
// before. A rule raises the actions it matches to `approve-once` or `always-ask`; with
// `beyondAllowlist` it also makes matching actions the allowlists refuse askable, so a person
// can extend them for one run. Rules only ever add a person to the loop: the highest tier
// among the matching rules wins, and nothing here allows what no one approved.

import { lstatSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import picomatch from "picomatch";
import { forPicomatch, withLiteralGroups } from "../fs/glob-classes.js";
import { isWithin, resolveRealOrSelf } from "../fs/containment.js";
import { z } from "zod";
import type { Tier } from "../audit/events.js";
import { type HostPattern, hostOf, hostPatternText, parseHostPattern, patternMatches, portMatches } from "../net/host-policy.js";
import type { ActionRequest } from "./action-request.js";
import { handsShellText, runsCodeText, runsItsInput, runsOtherPrograms, shellTextFamily, strictMatch } from "../exec/strict-denylist.js";
import { argsMatcher, configuresCommand, starGlobMatches } from "./args-pattern.js";
import { HostPlaces, type Places, samePlace } from "./host-places.js";
import { ProgramNames } from "./program-names.js";
import { isDirectory, programAtPath } from "../exec/program-path.js";
import { onFirstUse } from "../on-first-use.js";

export const RULE_ACTIONS = [
  "fs.read", "fs.stat", "fs.write", "fs.delete", "fs.mkdir", "fs.readClassified", "fs.writeClassified", "fs.open",
  "exec", "net", "chat",
] as const;
export type RuleAction = (typeof RULE_ACTIONS)[number];

/** A rule's schema: made only when a config with a policy is parsed (see policySchema). */
const ruleSchema = () => z
  .object({
    action: z.enum(RULE_ACTIONS),
    tier: z.enum(["approve-once", "always-ask"]),
    /** fs.*: a glob (picomatch, `**` across directories) on the absolute path; relative globs start at the working directory. */
    path: z
      .string()
      .min(1)
      // A shell expands "~", and tacit does not: the rule named a directory called "~" in the working
      // directory, and `~/deploy/**` asked about nothing in the home directory (a warning said only
      // that nothing existed there, which a client that shows no stderr never told anyone).
      .refine((glob) => !/^~[^/]*(?:\/|$)/.test(glob), {
        error: (issue) => {
          const glob = String(issue.input);
          const own = /^~(?:\/|$)/.test(glob);
          return (
            `${JSON.stringify(glob)} starts with "~", which tacit does not expand (it would name a directory called "${glob.split("/", 1)[0]}" in the working directory): ` +
            (own ? `write the home directory out (${JSON.stringify(path.join(homedir(), glob.slice(2)))})` : "write the absolute path of that user's home directory")
          );
        },
      })
      .optional(),
    // Each refusal below is of a pattern no action can match: the rule would ask about nothing,
    // in silence (`"command": "git push"` let every git push run unasked).
    /** exec: a glob (`*` only) on the command name. */
    command: z
      .string()
      .min(1)
      .regex(/^[^/]*$/, "a command pattern is a name glob, without \"/\"")
      .refine((command) => !/\s/.test(command), {
        error: (issue) => {
          const [name = "", ...rest] = String(issue.input).trim().split(/\s+/);
          return (
            `${JSON.stringify(issue.input)} holds a space, and a command's name holds none, so the rule would match nothing: ` +
            (rest.length === 0 ? `give the name alone (${JSON.stringify({ command: name })})` : `give the name as "command" and the rest as "args" (${JSON.stringify({ command: name, args: `${rest.join(" ")}*` })})`)
          );
        },
      })
      .optional(),
    /**
     * exec: a glob (`*` only) on the arguments joined by single spaces; since rules add a
     * person to the loop, it fails safe (also from any argument, and on aliases: see args-pattern.ts).
     */
    args: z.string().min(1, "is empty, which matches only the command run with no arguments: leave \"args\" out to match every command line").optional(),
    /** net: a host pattern, as in networkPermissions. */
    host: hostPatternText.optional(),
    /** net: the HTTP method (any when absent). */
    method: z
      .string()
      .regex(/^[!#$%&'+.^_`|~0-9A-Za-z-]+$/, "is no HTTP method (a token like GET, POST or DELETE, and no glob), so the rule would match nothing: give one method a rule, or leave \"method\" out to match every method")
      .optional(),
    /** Also ask about matching actions the static allowlists refuse (exec: the command; net: the host; fs.open: the root). */
    beyondAllowlist: z.boolean().optional(),
  })
  .strict()
  .superRefine((rule, ctx) => {
    const fields: Record<string, readonly RuleAction[]> = {
      path: ["fs.read", "fs.stat", "fs.write", "fs.delete", "fs.mkdir", "fs.readClassified", "fs.writeClassified", "fs.open"],
      command: ["exec"],
      args: ["exec"],
      host: ["net"],
      method: ["net"],
    };
    for (const [field, actions] of Object.entries(fields)) {
      if (rule[field as keyof typeof rule] !== undefined && !actions.includes(rule.action)) {
        ctx.addIssue({ code: "custom", path: [field], message: `"${field}" does not apply to action "${rule.action}" (it applies to ${actions.join(", ")})` });
      }
    }
    if (rule.beyondAllowlist) {
      const subject = rule.action === "exec" ? rule.command : rule.action === "net" ? rule.host : rule.action === "fs.open" ? rule.path : null;
      if (subject === null) {
        ctx.addIssue({ code: "custom", path: ["beyondAllowlist"], message: "beyondAllowlist applies to exec (with command), net (with host) and fs.open (with path)" });
      } else if (rule.args !== undefined || rule.method !== undefined) {
        ctx.addIssue({ code: "custom", path: ["beyondAllowlist"], message: "a beyondAllowlist rule cannot name args or method: it is decided when the scope opens, before any command line or request exists" });
      } else if (subject === undefined) {
        ctx.addIssue({ code: "custom", path: ["beyondAllowlist"], message: `beyondAllowlist needs the rule to name what it extends (${rule.action === "exec" ? "command" : rule.action === "net" ? "host" : "path"}): a person is never asked about everything` });
      }
    }
  });

/**
 * The policy section's schema, made on first use (on-first-use.ts): its rules' checks were some
 * 3 ms of zod at the start of every run, and only a config file that has a policy is parsed with it.
 */
export const policySchema = onFirstUse(() => z.object({ rules: z.array(ruleSchema()) }).strict());
export type PolicyConfig = z.infer<ReturnType<typeof policySchema>>;
export type PolicyRule = z.infer<ReturnType<typeof ruleSchema>>;

const TIER_RANK: Record<Tier, number> = { allow: 0, "approve-once": 1, "always-ask": 2 };

/**
 * The other actions a rule's action also covers, which do at least as much to the same file by
 * another call: a classified write is a write of it, a classified read a read of it, and a read
 * (a listing too) tells all a stat would. Matched by category alone, an always-ask rule on
 * fs.write of every .env let writeClassified(".env", classify(…)) replace the file unasked, one
 * on fs.read let readClassified(".env") take its token to an allowed host, and one on fs.stat
 * of private/** let read() return a file there. Rules on the others still name them alone.
 * A rule on opening a directory (fs.open) covers the file actions below it, in scopes opened above it.
 */
const KIN_OF: Partial<Record<RuleAction, readonly RuleAction[]>> = {
  "fs.write": ["fs.writeClassified"],
  "fs.read": ["fs.readClassified"],
  "fs.stat": ["fs.read", "fs.readClassified"],
  // A scope reaches everything below its root, and one opened above a directory reaches it too:
  // an always-ask rule on opening private/ was dodged by requestFileSystem(".") and a read of
  // private/secret.txt. Its path glob is matched on the directories above the action's path.
  "fs.open": ["fs.read", "fs.stat", "fs.write", "fs.delete", "fs.mkdir", "fs.readClassified", "fs.writeClassified"],
};

/**
 * `p` and each directory above it that lies within one of `bases` (where a glob's matches can lie:
 * no directory above them can match it, and most paths have none there).
 */
function ancestorsWithin(p: string, bases: readonly string[]): string[] {
  const found: string[] = [];
  for (let dir = p; bases.some((base) => isWithin(dir, base)); dir = path.dirname(dir)) {
    found.push(dir);
    if (dir === path.dirname(dir)) break;
  }
  return found;
}

function starGlob(glob: string): RegExp {
  return new RegExp(`^${glob.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`, "s");
}

/**
 * How far a rule reaches from what it names. "as-named": the command or host as the rule's text
 * matches it. "other-names": also another name for the same program or place (program-names.ts,
 * host-places.ts; not for a beyondAllowlist rule). "through-runners": also a command run through
 * another (a shell, env, xargs, …), and other names for a beyondAllowlist rule too. Past
 * "as-named" only for raising the tier of what the allowlists permit: beyond them, it would make
 * every shell and interpreter askable under a rule that extends them to one command.
 */
type RuleReach = "as-named" | "other-names" | "through-runners";

interface CompiledRule {
  rule: PolicyRule;
  matches(request: ActionRequest, reach: RuleReach): boolean;
}

/** Why a rule that does not name a request as it is written asked about it (see TierPolicy.indirectRuleOf). */
export interface IndirectRule {
  rule: PolicyRule;
  /** "other-name": the request names the rule's program or host by another name; "runner": its command may run the rule's. */
  through: "other-name" | "runner";
}

/**
 * A rule's path glob made absolute (relative globs start at the working directory) and normalized,
 * as tacit names every path it matches: written with `//`, `/./` or `/x/../`, an absolute glob
 * matched no path (a relative one was already joined, which normalizes), and an always-ask rule on
 * `/work/app//deploy/**` let a script write deploy/prod.conf unasked, with no warning (the
 * directory it names exists).
 */
function absoluteGlob(glob: string, cwd: string): string {
  return path.isAbsolute(glob) ? path.normalize(glob) : path.join(cwd, glob);
}

/**
 * A rule's path glob made absolute, and, when the directory it names before its first glob
 * character leads elsewhere through a symbolic link, the same glob from where that leads (now,
 * as the rules are read). Paths are matched as the script named them and as they really lead,
 * and tacit's working directory is its real path: a glob written through a link (the shell's
 * $PWD in a linked directory, macOS's /tmp) matched neither, and an always-ask rule on
 * `<link>/deploy/**` let a script write deploy/prod.conf unasked. Either glob matching asks.
 */
function ruleGlobs(glob: string, cwd: string): string[] {
  return directoryGlobs(absoluteGlob(glob, cwd)).flatMap(normalizationsOf).flatMap((absolute) => {
    const { base, glob: rest } = picomatch.scan(absolute);
    if (base === "") return [absolute];
    // For matching only: the operator's own pattern, resolved as classified patterns are.
    const realBase = resolveRealOrSelf(base);
    if (realBase === path.resolve(base)) return [absolute];
    return [absolute, rest === "" ? realBase : `${realBase.replace(/\/$/, "")}/${rest}`];
  });
}

/**
 * A glob in each Unicode normalization its text has (NFC and NFD, when they differ): a name is
 * bytes to the file system, and a rule typed "café/**" (é one character, as keyboards give it)
 * named nothing in a directory whose name holds e and a combining accent (as macOS writes names,
 * and archives made there keep them): a script wrote there unasked under an always-ask rule.
 */
function normalizationsOf(glob: string): string[] {
  return [...new Set([glob, glob.normalize("NFC"), glob.normalize("NFD")])];
}

/** Characters past ASCII: a name that has none is the same in every normalization. */
const PAST_ASCII = /[^\x00-\x7f]/;

/**
 * A glob ending in "/" (`deploy/`, a directory as .gitignore and classifiedPaths write one) as
 * that directory and everything below it; any other as it is. Matched as written it matched no
 * path (tacit names none with a trailing "/"), and an always-ask rule on writes to `deploy/` let
 * a script rewrite deploy/prod.conf unasked.
 */
function directoryGlobs(absolute: string): string[] {
  if (!absolute.endsWith("/")) return [absolute];
  const directory = absolute.replace(/\/+$/, "") || "/";
  return [directory, `${directory === "/" ? "" : directory}/**`];
}

/**
 * A rule's path glob as a test, with the options compile() explains. A glob with "(", ")" or "|" is also matched
 * with those characters as they are (withLiteralGroups): picomatch reads them as a group and an
 * alternation, so an always-ask rule on "backup(1)*" did not match "backup(1)-prod.sql", which
 * was written unasked. So is one with brackets or braces, with all of them as they are
 * (withLiteralSpecials). Any reading matches: every rule raises the tier, and asking about
 * more is the safe side.
 */
function ruleGlobTest(glob: string): (candidate: string) => boolean {
  const options = { dot: true, flags: "s" } as const;
  const readings = [glob, withLiteralGroups(glob), withLiteralSpecials(glob)].filter((reading): reading is string => reading !== null);
  const tests = readings.map((reading) => picomatch(forPicomatch(reading), options));
  return tests.length === 1 ? tests[0]! : (candidate) => tests.some((test) => test(candidate));
}

/** Characters picomatch reads as classes, braces, groups and alternation. */
const GLOB_SPECIALS = "[]{}()|";

/**
 * `glob` with each of GLOB_SPECIALS as the character it is (`*` and `?` still wildcards), or
 * null where it has none. Names hold them as written: Next.js names routes `app/[...slug]/`, and
 * picomatch read `[...slug]` as a class of one character and `{prod,staging}` as a choice, so an
 * always-ask rule on writes to `app/[...slug]/**` matched no file there, written unasked.
 */
function withLiteralSpecials(glob: string): string | null {
  if (![...GLOB_SPECIALS].some((c) => glob.includes(c))) return null;
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "\\") {
      out += c + (glob[i + 1] ?? "");
      i++;
    } else out += GLOB_SPECIALS.includes(c) ? `\\${c}` : c;
  }
  return out;
}

/** What rules read of the host to match what an action reaches (read once per policy, on first need). */
interface HostReadings {
  hostPlaces(): HostPlaces;
  programNames(): ProgramNames;
}

function compile(rule: PolicyRule, cwd: string, { hostPlaces, programNames }: HostReadings): CompiledRule {
  const pathGlobs = rule.path === undefined ? null : ruleGlobs(rule.path, cwd);
  // With "s": picomatch's `**` is a `.` in its expression, which matches no line break (\n, \r,
  // U+2028, U+2029) without it, so `deploy/**` missed `deploy/run\n.sh` and anything below a
  // directory so named: a security review wrote one past an always-ask rule on deploy/**, and a
  // `for f in deploy/*.sh` loop ran it. A rule that asks must match every name a glob covers.
  // A class's "[!…]" as "[^…]": picomatch read "[!_]" as the class of "!" and "_" (glob-classes.ts).
  const pathTests = pathGlobs?.map(ruleGlobTest) ?? null;
  // A path in mixed normalizations (a directory in one, a file in the other) is also tried in NFC, which one of the globs is in.
  const pathTest =
    pathTests === null ? null : (candidate: string) => pathTests.some((test) => test(candidate) || (PAST_ASCII.test(candidate) && test(candidate.normalize("NFC"))));
  // Where the glob's matches can lie: its text before the first glob character.
  const pathBases = pathGlobs?.map((glob) => picomatch.scan(glob).base || "/") ?? null;
  const commandTest = rule.command === undefined ? null : starGlob(rule.command.toLowerCase());
  /** The shortest name the rule's command glob matches, for a shell glob in a runner's words (`gi?`). */
  const commandSample = rule.command === undefined ? null : rule.command.toLowerCase().replaceAll("*", "");
  // A rule that raises the tier must not be dodged by reordering a command line: its args
  // pattern fails safe. (Every rule raises it today; one that lowered it would match exactly.)
  const failSafe = TIER_RANK[rule.tier] > TIER_RANK.allow;
  const argsTest = rule.args === undefined ? null : argsMatcher(rule.args, failSafe);
  /**
   * Whether the rule reaches past its own names to another name for the same program or host (see
   * RuleReach): not as named, and for a beyondAllowlist rule only through runners.
   */
  const reachesOtherNames = (reach: RuleReach): boolean => reach !== "as-named" && (reach === "through-runners" || !rule.beyondAllowlist);
  // The programs the rule's command names on PATH, and whether a name runs one of them: a rule
  // that asks holds for the program under any of its names (`gmake` for make, `gcc-12` for gcc:
  // see program-names.ts). As with hosts, only for raising the tier of what the allowlists permit.
  let rulePrograms: ReadonlySet<string> | undefined;
  const runsRuleProgram = (name: string): boolean => {
    if (commandTest === null || !failSafe) return false;
    const program = programNames().programOf(name);
    return program !== null && (rulePrograms ??= programNames().programsNamed((candidate) => commandTest.test(candidate))).has(program);
  };
  /** Whether a command's name (as run, or as a runner's word names it) is the rule's command. */
  const namesCommand = (name: string, reach: RuleReach): boolean =>
    commandTest !== null && (commandTest.test(name.toLowerCase()) || (reachesOtherNames(reach) && runsRuleProgram(name)));
  const hostPattern: HostPattern | null = rule.host === undefined ? null : parseHostPattern(rule.host);
  // A rule that asks names its host on every port when it names no port: read as an allowlist
  // reads a pattern (no port: the default ports alone), an always-ask rule on POST to a host
  // let a script POST to it at host:8443, `host:*` permitted, unasked. A beyondAllowlist rule
  // extends the allowlists, and keeps their reading.
  const host = hostPattern !== null && hostPattern.port === null && !rule.beyondAllowlist ? { ...hostPattern, port: "*" as const } : hostPattern;
  const method = rule.method?.toUpperCase() ?? null;
  // Where a rule's host leads (for a glob, the hosts it matches among those host-places.ts knows):
  // a request to another name or address for the same place is asked about too. Only for raising
  // the tier of what the allowlists permit, as with commands run through others: a beyondAllowlist
  // rule extends the allowlists to the host as named, and a person is asked about what they are shown.
  const rulePlaces: Places | null =
    host === null || !failSafe ? null : host.literalHost !== null ? hostPlaces().placesOf(host.literalHost) : hostPlaces().placesMatched((known) => host.host.test(known));
  const reachesRuleHost = (url: URL, reach: RuleReach): boolean =>
    rulePlaces !== null && reachesOtherNames(reach) && host !== null && portMatches(host, url) && samePlace(rulePlaces, hostPlaces().placesOf(hostOf(url)));
  // A rule on opening every scope asks before anything is reached; one on some directories also covers what lies below them.
  const kin = rule.action === "fs.open" && rule.path === undefined ? undefined : KIN_OF[rule.action];
  /** Whether an action in a scope is matched by the directories above its path: a rule on opening them. */
  const withinOpened = rule.action === "fs.open";
  return {
    rule,
    matches(request, reach) {
      if (request.category !== rule.action && !(kin?.includes(request.category as RuleAction) ?? false)) return false;
      const subject = request.subject;
      switch (subject.kind) {
        case "path": {
          if (pathTest === null) return true;
          // Matched against the path as named and as it really leads: a symlink does not dodge a rule.
          const paths = subject.paths();
          if (withinOpened) {
            // A rule on opening a directory covers opening one below it, and what a scope opened
            // above it reaches there (see KIN_OF); in a scope opened at it or below, the rule was
            // applied when the scope opened.
            const opened = (p: string): boolean => ancestorsWithin(p, pathBases!).some(pathTest);
            if (request.category !== "fs.open" && subject.scopeRoots.some(opened)) return false;
            if (paths.some(opened)) return true;
          } else if (paths.some((p) => pathTest(p))) return true;
          // A search or listing reads below its directory: a rule that may match anything there
          // applies to it (a security review read private/** through grepRecursive("."); over-
          // asking about a search that would have found nothing there is the price).
          return subject.tree && paths.some((dir) => pathBases!.some((base) => isWithin(base, dir) || isWithin(dir, base)));
        }
        case "command": {
          if ((commandTest === null || namesCommand(subject.command, reach)) && (argsTest === null || argsTest(subject.args))) return true;
          // A rule that asks is not dodged by running its command through another that runs it
          // (`env VAR=x git push`, `nice git push`, `sh -c "git push"`): a fourth review pushed
          // past a rule on git with env, nice and timeout permitted beside it.
          if (!failSafe || reach !== "through-runners" || commandTest === null) return false;
          // A shell's, an interpreter's or awk's arguments are code, which can name the command any
          // way it likes (`sh -c "'git' push"`, `awk 'BEGIN{system("git push")}'`: a fifth review
          // pushed through both): a rule on a command also asks about them.
          if (runsCodeText(subject.command)) return true;
          // A runner that gives its text to a shell (split --filter, flock -c, tar --to-command)
          // runs code text there, like a shell.
          if (handsShellText(path.basename(subject.command), subject.args)) return true;
          // A build tool reading its input may be reading a build file (`make -f -` with a recipe that runs the command).
          const given = (subject.input ?? null) !== null;
          if (given && runsItsInput(path.basename(subject.command))) return true;
          // Where the command's words that name a program by a path lead from (see pathPrograms).
          const line = { words: [subject.command, ...subject.args], cwd: path.resolve(cwd, subject.cwd ?? "."), given };
          const named = (name: string): boolean => namesCommand(name, "through-runners");
          if (runsOtherPrograms(subject.command)) return runsThrough(named, commandSample!, argsTest, line);
          // A program tacit does not know may run its arguments too (moreutils' chronic and
          // ifne, eatmydata, tini, gosu, cpulimit, …), and may hand them to a shell (hyperfine,
          // watchexec, nodemon --exec, moreutils' pee): its words are read as a runner's, an
          // expansion or a glob that may name the command included (read for names alone, a
          // review's `'$(printf t)ouch …'` and `'/usr/bin/t?uch …'` ran past a rule on touch).
          // Programs tacit knows not to run others (grep, cat, tar without its options above, ls, echo) are not read.
          const name = path.basename(subject.command);
          return strictMatch(name) === null && !RUNS_NO_PROGRAM.has(name) && runsThrough(named, commandSample!, argsTest, line);
        }
        case "url":
          return (
            (host === null ||
              patternMatches(host, subject.url) ||
              reachesRuleHost(subject.url, reach)) &&
            (method === null || method === subject.method || subject.overrides === "any" || (subject.overrides?.includes(method) ?? false))
          );
        case "none":
          return pathTest === null && commandTest === null && argsTest === null && host === null && method === null;
      }
    },
  };
}

/**
 * Programs that run no other program, whatever their arguments (coreutils' and the shell's
 * everyday ones), which --strict lets run and so has no entry for: their words are not read,
 * as grep's and cat's are not. Read as a program tacit does not know is, `ls *`, `echo $HOME`
 * or `ls ./build` (an executable no rule can judge) asked under a rule on any other command.
 */
const RUNS_NO_PROGRAM: ReadonlySet<string> = new Set([
  "ls", "dir", "vdir", "echo", "printf", "date", "wc", "stat", "du", "df", "pwd", "true", "false", "test", "[", "expr", "seq",
  "sleep", "basename", "dirname", "realpath", "readlink", "whoami", "id", "groups", "uname", "arch", "nproc", "logname", "tty",
  "yes", "mkdir", "mktemp", "md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum", "sum",
  "numfmt", "factor", "tr", "printenv", "uptime",
]);

/** env's -S/--split-string: env splits the string itself, with its own escapes (`git\_push`) and ${VAR}s. */
const SPLITS_STRING = /^(?:-[^-]*S|--s)/;
/**
 * find's and fd's options that run a program per file found: the word after one is that
 * program, and `{}` there makes it the file found (`find /usr/bin -name 'gi?' -exec {} push`).
 */
const RUNS_FOUND = /^(?:-exec|-execdir|-ok|-okdir|-x|--exec|-X|--exec-batch)$/;
/** find's options that run their program from the directory of each file found. */
const RUNS_IN_FOUND_DIRECTORY = /^-(?:execdir|okdir)$/;
/** What ends the command find runs (fd's ends with the command line). */
const ENDS_FOUND_COMMAND = /^[;+]$/;

/**
 * Whether the program find or fd runs may be the file it found: a `{}` where the program's
 * name goes, directly or after a runner (`-exec {} push`, `-exec env {} push`, `-exec nice -n
 * 1 {} push`). `-exec grep x {} ;` gives the file to grep, which is read as before.
 */
function runsFoundFile(words: readonly string[]): boolean {
  /** "program": the next word is what find runs; "runner": what it runs runs another program. */
  let position: "program" | "runner" | null = null;
  /** Whether the program is run from the directory of each file found (-execdir, -okdir). */
  let inFoundDirectory = false;
  for (const word of words) {
    if (RUNS_FOUND.test(word)) {
      position = "program";
      inFoundDirectory = RUNS_IN_FOUND_DIRECTORY.test(word);
    } else if (position === "program") {
      if (word.includes("{")) return true;
      // `-execdir ./x` runs an x from each directory find enters: no one file can be judged.
      if (inFoundDirectory && word.includes("/") && !path.isAbsolute(word)) return true;
      position = runsOtherPrograms(path.basename(word)) ? "runner" : null;
    } else if (position === "runner") {
      if (ENDS_FOUND_COMMAND.test(word)) position = null;
      else if (word.includes("{")) return true;
    }
  }
  return false;
}
/**
 * A word, followed by its value when it carries one (`--compress-program=deployer`,
 * `ProxyCommand=deployer`): programs take the program they run that way too (sort, tar,
 * rsync's --rsh=, ssh's -o), and a word is matched as a whole, so the value is also read as a
 * word of its own.
 */
function withOptionValue(word: string): string[] {
  const equals = word.indexOf("=");
  return equals > 0 ? [word, word.slice(equals + 1)] : [word];
}

/**
 * A word, followed by its comma-separated pieces when it has any: programs take a program and
 * its arguments as a list too (`gcc -wrapper touch,file` ran touch), so each piece is also read
 * as a word of its own.
 */
function withListPieces(word: string): string[] {
  return word.includes(",") ? [word, ...word.split(",").filter((piece) => piece !== "")] : [word];
}

/** A shell expansion that may yield any name: `$(…)`, `${…}`, `$x`, `$'…'`, a backquote. */
const SHELL_EXPANSION = /\$[\w{('"@*#?!$-]|`/;
/** What a shell splits words at besides spaces: its operators (`;`, `&&`, `|`, `(`, redirections). */
const SHELL_WORD_BREAK = /[\s;&|()<>]+/;
/** Quoting a shell (or rsync -e) drops from a word. */
const SHELL_QUOTING = /['"\\]/g;
/** Glob characters: a word with one may name a file a shell finds. */
const GLOB_CHARACTER = /[?*[]/;
/** Words longer than this with a glob character count as matching (the check below is quadratic). */
const GLOB_WORD_LIMIT = 256;

/** The index of the last of `words` with a glob character, or -1. */
function lastGlobIndex(words: readonly string[]): number {
  for (let at = words.length - 1; at >= 0; at--) if (GLOB_CHARACTER.test(words[at]!)) return at;
  return -1;
}

/**
 * Whether `word`, a shell glob (`gi?`, `g*`, `[g]it`), may match `name`. A bracket expression
 * counts as any one character (erring towards a match).
 */
function mayGlobTo(word: string, name: string): boolean {
  if (!GLOB_CHARACTER.test(word)) return false;
  if (word.length > GLOB_WORD_LIMIT) return true;
  return starGlobMatches(word.replace(/\[[^\]]*\]?/g, "?"), name, true);
}

/** Git and the names it runs as; what they run can be set in their configuration. */
const GIT_FAMILY = /^(?:git(?:-.*)?|scalar)$/;
/** Git's variables that name a command or set configuration (GIT_CONFIG_*, GIT_SSH_COMMAND, GIT_PAGER, GIT_EXEC_PATH, …), as env sets them. */
const GIT_VARIABLE = /^GIT_[A-Z0-9_]*=/i;
/**
 * Variables that decide which program a bare name runs, or what code every program loads, as
 * env sets them: `env PATH=dir x` runs a copy of the command named x from a directory the
 * script could fill, `LD_PRELOAD` loads a library into whatever runs.
 */
const PROGRAM_VARIABLE = /^(?:PATH|LD_[A-Z0-9_]*)=/i;

/** At most this many different words naming a path are looked up per command line; more count as running the command. */
const PATH_WORDS_LIMIT = 16;
/** At most this many different words are looked up as directories a path may lead from; more count as running the command. */
const DIRECTORY_WORDS_LIMIT = 256;
/** The longest path the system takes (PATH_MAX). */
const PATH_MAX_CHARS = 4096;
/** How much of a short option's word is tried for a value joined to it (`env -Csub`). */
const JOINED_VALUE_CHARS = 64;

/** What the words of a command line that name a program by a path run (see programAtPath), or "too many" to look up. */
type PathPrograms = ReadonlyMap<string, ReturnType<typeof programAtPath>> | "too many";

/**
 * What each word (after the first) with a "/" in it would run if a runner ran it: a runner
 * given a path runs the file there, whatever its name (read by name only, a review's `env
 * ./build` ran a project's executable that the script had rewritten to run the command under an
 * always-ask rule on it, `nice ./x` a link to it, `timeout 5 /tmp/y` a copy). A relative path is looked for
 * from the command's working directory and from each directory its words name (`git -C dir`,
 * `env --chdir dir`, and a value joined to a short option, `env -Cdir`). Bounded: each look-up is
 * a stat on the host's main thread.
 */
function pathPrograms(words: readonly string[], cwd: string): PathPrograms {
  // A word longer than a path can be names no file (the system refuses it): not looked up.
  const distinct = new Set(words.slice(1).filter((word) => word.length <= PATH_MAX_CHARS));
  const pathWords = [...distinct].filter((word) => word.includes("/"));
  const programs = new Map<string, ReturnType<typeof programAtPath>>();
  if (pathWords.length === 0) return programs;
  if (pathWords.length > PATH_WORDS_LIMIT) return "too many";
  const bases = [cwd];
  if (pathWords.some((word) => !path.isAbsolute(word))) {
    const named = new Set<string>();
    for (const word of distinct) {
      if (word.startsWith("--")) continue;
      if (!word.startsWith("-")) named.add(word);
      // A short option's value may be joined to it, after one letter or a bundle of them.
      else for (let from = 2; from < Math.min(word.length, JOINED_VALUE_CHARS); from++) named.add(word.slice(from));
      if (named.size > DIRECTORY_WORDS_LIMIT) return "too many";
    }
    for (const word of named) if (isDirectory(path.resolve(cwd, word))) bases.push(path.resolve(cwd, word));
  }
  for (const word of pathWords) programs.set(word, programAtPath(word, bases));
  return programs;
}

/**
 * The name a word of a command line is judged by: the program on PATH a path leads to (a link
 * named x to touch is touch), else its last path component; null when it names a program that
 * could run anything (a copy, a script: see pathPrograms).
 */
function judgedName(word: string, programs: Exclude<PathPrograms, "too many">): string | null {
  const program = programs.get(word);
  if (program === "unknown") return null;
  return (program?.name ?? path.basename(word)).toLowerCase();
}

/**
 * Whether `line` (the runner and its arguments; split at spaces too: a shell's -c takes one
 * command line) runs the rule's command: some word names it (by its last path component) with
 * the words after it matching the rule's args, or with no words after it; every such word is
 * tried, so runners may nest (`env nice git push`). A shell, an interpreter or xargs named
 * anywhere, env's split string, git given configuration, or a program find runs that is the
 * file it found runs what no word-by-word reading can follow: it counts as running the command.
 *
 * The args glob is tried once, on the words after the first word that names the command: a
 * fail-safe glob that matches some words matches every run of words that ends with them (see
 * args-pattern.ts), so a later word naming the command cannot match where the first did not.
 * Trying it after each such word cost the square of the command line's length on the host's
 * main thread: a security review held a tacit serve with `git --version "git git git …"`.
 */
/** A command line as runsThrough reads it: its words (the program first), where it runs, and whether it is given standard input. */
interface CommandLine {
  words: readonly string[];
  cwd: string;
  given: boolean;
}

function runsThrough(namesCommand: (name: string) => boolean, commandSample: string, argsTest: ((args: readonly string[]) => boolean) | null, { words: line, cwd, given }: CommandLine): boolean {
  // A runner's words may reach a shell (or a runner's own quoting: rsync -e): a name may be
  // quoted or escaped (`g''it`, `"git"`, `g\it`), follow an operator (`true;git`), come from an
  // expansion (`$(…)`, `${x}t`, a backquote) or a glob (`/usr/bin/gi?`). Quotes and
  // backslashes are dropped, operators split words like spaces, and an expansion, or a glob
  // that matches the rule's command, counts as naming it. Only ever adds questions.
  if (line.some((arg) => SHELL_EXPANSION.test(arg))) return true;
  const words = line
    .flatMap((arg) => (ENDS_FOUND_COMMAND.test(arg) ? [arg] : arg.split(SHELL_WORD_BREAK)))
    .map((word) => word.replace(SHELL_QUOTING, ""))
    .flatMap(withOptionValue)
    .flatMap(withListPieces)
    .filter((word) => word !== "");
  if (runsFoundFile(words)) return true;
  if (words.some((word, at) => at > 0 && mayGlobTo(path.basename(word).toLowerCase(), commandSample))) return true;
  const lastGlob = lastGlobIndex(words);
  const programs = pathPrograms(words, cwd);
  if (programs === "too many") return true;
  let env = false;
  let git = false;
  /** Whether the args glob was tried after an earlier word naming the command (and failed). */
  let argsTried = false;
  const scannedFamilies = new Set<string>();
  for (const [at, word] of words.entries()) {
    const name = at > 0 ? judgedName(word, programs) : path.basename(word).toLowerCase();
    // A program that could run anything, named by its path (see pathPrograms).
    if (name === null) return true;
    // By family only: a word shaped like a shell's name may be `push`.
    if (at > 0 && runsCodeText(name, { byShape: false })) return true;
    // A build tool it runs reads the input it is given (`env make -f -`), as one run directly does.
    if (at > 0 && given && runsItsInput(name)) return true;
    // A runner named here that gives text to a shell (`env split --filter=…`). Its words are
    // read once per family (a later one's are among them), then only its first (tar's bundle).
    const family = at > 0 ? shellTextFamily(name) : null;
    if (family !== null) {
      if (handsShellText(name, scannedFamilies.has(family) ? words.slice(at + 1, at + 2) : words.slice(at + 1))) return true;
      scannedFamilies.add(family);
    }
    if (env && SPLITS_STRING.test(word)) return true;
    // Git runs what its configuration names (`-c alias.x=!cmd`, core.pager, GIT_CONFIG_* from
    // env): a fifth review ran a command a rule asks about through both.
    if ((git && configuresCommand(word)) || (env && (GIT_VARIABLE.test(word) || PROGRAM_VARIABLE.test(word)))) return true;
    git ||= GIT_FAMILY.test(name);
    // A bare name as written (PATH's names keep their case); a path by the program it leads to.
    if (at > 0 && namesCommand(word.includes("/") ? name : word)) {
      if (argsTest === null || at === words.length - 1) return true;
      // A glob after it may be expanded by a shell into the words the rule names (`strace -o
      // '|git pu?h …'`, with a file named push at hand): it counts as matching.
      if (lastGlob > at) return true;
      if (!argsTried && argsTest(words.slice(at + 1))) return true;
      argsTried = true;
    }
    env ||= name === "env";
  }
  return false;
}

/**
 * The absolute globs of the rules that ask about reads (fs.read, and fs.stat and fs.open, which
 * cover reads: see KIN_OF) and put a person in the loop: a recursive search skips what they
 * cover when a link leads it there from elsewhere (its own directory is decided by the gate; a
 * link inside an ordinary directory is not, and a second review read a covered file through
 * one; so did a search of public/ through public/flink -> ../private/secret.txt under a rule on
 * fs.stat or on opening private/). An fs.open rule covers what lies below what it matches.
 */
export function askedReadGlobs(config: PolicyConfig | null, cwd: string): string[] {
  return (config?.rules ?? [])
    .filter((rule) => rule.path !== undefined && TIER_RANK[rule.tier] > TIER_RANK.allow && (rule.action === "fs.read" || (KIN_OF[rule.action]?.includes("fs.read") ?? false)))
    .flatMap((rule) => ruleGlobs(rule.path!, cwd).flatMap((glob) => (rule.action === "fs.open" ? [glob, `${glob.replace(/\/+$/, "")}/**`] : [glob])));
}

/**
 * Whether something exists at `base`, its names compared in NFC (as rules match names in either
 * normalization, see normalizationsOf): a rule on an NFC "café/**" matches files under a directory
 * named in NFD, and the warning that it matched nothing told the operator to check a spelling
 * that worked. Each name not found as written is looked for among its directory's entries.
 */
function existsInAnyNormalization(base: string): boolean {
  if (entryExists(base)) return true;
  if (!PAST_ASCII.test(base)) return false;
  let real = path.parse(base).root;
  for (const name of base.slice(real.length).split(path.sep).filter(Boolean)) {
    const next = path.join(real, name);
    if (entryExists(next)) {
      real = next;
      continue;
    }
    let entries: string[];
    try {
      entries = readdirSync(real);
    } catch {
      return false;
    }
    const wanted = name.normalize("NFC");
    const found = entries.find((entry) => entry.normalize("NFC") === wanted);
    if (found === undefined) return false;
    real = path.join(real, found);
  }
  return true;
}

/** Whether lstat finds an entry at `file` (a link counts, wherever it leads); false on any error. */
function entryExists(file: string): boolean {
  try {
    lstatSync(file);
    return true;
  } catch {
    return false;
  }
}

/**
 * A warning for each rule whose path glob starts in a directory that does not exist: such a rule
 * matches nothing there now, which a misspelt rule (`deplyo/**`) or a relative one read in
 * another working directory (an MCP client starting tacit in the home directory) does in
 * silence. Not an error: a rule may be for files a script has yet to make.
 */
export function absentRuleBases(config: PolicyConfig | null, cwd: string): string[] {
  return (config?.rules ?? []).flatMap((rule, index) => {
    if (rule.path === undefined) return [];
    const base = picomatch.scan(directoryGlobs(absoluteGlob(rule.path, cwd))[0]!).base || "/";
    if (existsInAnyNormalization(base)) return [];
    return [
      `policy.rules.${index} (${rule.action}) path ${JSON.stringify(rule.path)}: nothing exists at ${base}, so the rule matches nothing ` +
        `there now${path.isAbsolute(rule.path) ? "" : ` (a relative path starts at the working directory, ${cwd})`}; check the spelling, ` +
        "or ignore this if the rule is for files yet to be made",
    ];
  });
}

/**
 * Whether a person's yes to extending the allowlists answered for `rule` on `request`: a
 * beyondAllowlist rule on what the request touches itself that matches what they were asked
 * about (one of `extendedBy`), as beyondTierOf matched it when it asked.
 */
function answeredByExtension(rule: PolicyRule, matches: CompiledRule["matches"], request: ActionRequest, extendedBy: readonly ActionRequest[] = []): boolean {
  return rule.beyondAllowlist === true && extendedBy.length > 0 && matches(request, "other-names") && extendedBy.some((asked) => matches(asked, "other-names"));
}

export class TierPolicy {
  private readonly rules: CompiledRule[];

  constructor(config: PolicyConfig | null, cwd: string) {
    // The hosts file and the machine's addresses, and PATH's names, are read once, and only for a rule on a host or a command.
    let hostPlaces: HostPlaces | undefined;
    let programNames: ProgramNames | undefined;
    const readings: HostReadings = { hostPlaces: () => (hostPlaces ??= new HostPlaces()), programNames: () => (programNames ??= new ProgramNames()) };
    this.rules = (config?.rules ?? []).map((rule) => compile(rule, cwd, readings));
  }

  /** True when no rule exists: every decision is the static allowlists', as without a policy. */
  get empty(): boolean {
    return this.rules.length === 0;
  }

  /**
   * The tier for an action the allowlists permit: the highest among matching rules. With
   * `extendedBy` (the extensions of the allowlists a person granted this run that cover what it
   * touches, as they were asked about), the beyondAllowlist rules on what it touches itself (its
   * command, host or root) that also match one of those are left out: that yes answered for them.
   * A beyondAllowlist rule on another command it may run still applies: leaving every one out, a
   * security review had a remembered yes to extend the allowlists to env run `env touch marker`
   * with no question under an always-ask rule on touch. So does one on a root inside the one
   * extended, which the yes to opening the outer one was not asked under (see RunGrants.askedAs).
   */
  tierOf(request: ActionRequest, options: { extendedBy?: readonly ActionRequest[] } = {}): Tier {
    let tier: Tier = "allow";
    for (const { rule, matches } of this.rules) {
      if (TIER_RANK[rule.tier] <= TIER_RANK[tier] || !matches(request, "through-runners")) continue;
      if (answeredByExtension(rule, matches, request, options.extendedBy)) continue;
      tier = rule.tier;
    }
    return tier;
  }

  /**
   * The rule behind `tier` (what tierOf gave, with the same options) when only rules that do not
   * name the request as written raised it: one on the same program or host under another name
   * (`gmake` for a rule on make, 127.0.0.1 for one on localhost), or one on a command that the
   * request's command may run (`sh`, `python3`, `env`, `xargs`); or null. A question or refusal
   * then says which rule asked and why, where it showed the rule's tier alone.
   */
  indirectRuleOf(request: ActionRequest, tier: Tier, options: { extendedBy?: readonly ActionRequest[] } = {}): IndirectRule | null {
    if (tier === "allow") return null;
    let otherName: PolicyRule | null = null;
    let runner: PolicyRule | null = null;
    for (const { rule, matches } of this.rules) {
      if (rule.tier !== tier) continue;
      const underOtherNames = matches(request, "other-names");
      // Left out by tierOf (see there): the extension's yes answered for it.
      if (answeredByExtension(rule, matches, request, options.extendedBy)) continue;
      if (matches(request, "as-named")) return null;
      if (underOtherNames) otherName ??= rule;
      else if (runner === null && matches(request, "through-runners")) runner = rule;
    }
    if (otherName !== null) return { rule: otherName, through: "other-name" };
    return runner === null ? null : { rule: runner, through: "runner" };
  }

  /** The tier for an action the allowlists refuse: null (stays refused) unless a beyondAllowlist rule matches. */
  beyondTierOf(request: ActionRequest): Tier | null {
    let tier: Tier | null = null;
    for (const { rule, matches } of this.rules) {
      if (rule.beyondAllowlist && (tier === null || TIER_RANK[rule.tier] > TIER_RANK[tier]) && matches(request, "other-names")) tier = rule.tier;
    }
    return tier;
  }
}
