// How a rule's `args` glob (`*` only) matches a command line. Matched exactly, `push*` on
// the arguments joined by spaces misses `git -C . push` and `git -c alias.p=push p`: global
// options come first, and an alias moves the subcommand into another argument. A rule that
// asks a person must fail safe — asking too often is a nuisance, too rarely is the bug — so
// for those rules the glob also matches
//   - starting at any argument (`-C . push origin` matches `push*`), and
//   - when any single argument contains the glob's literal head (`alias.p=push` for `push*`), and
//   - when any argument defines an alias (`alias.…`, any case) or sets configuration on the
//     command line (`-c`, `--config-env`: git's include.path and help.autocorrect reach a
//     push with no alias and no "push" in sight, as a second review showed): what the command
//     will then do can no longer be read from its arguments, and
//   - when each of the glob's words matches some argument, in any order, a long option also
//     by a beginning of it (`--mir` for `--mirror*`): git takes options after the repository
//     and refspec, and a long option by any unambiguous beginning (a third review force-pushed
//     past `push --force*` with `git push origin main --force`, and mirrored with `--mir`), also
//     under a leading `*` (`*--force*` by `--forc`), and
//   - when a word that is a short option (`-f*`, `-rf`) has each of its letters among the
//     arguments' short options, bundled or not (`-qf`, `-fr`, `-r -f`), and a long option
//     (`--force*`) has its first letter there, in either case (`-f`): the usual short form of
//     a long option, which a fourth review force-pushed with past `push --force*` (a short
//     option's letters too match in either case: `rm -R` for `-r*`, found by a fifth review), and
//   - when a word that is no option is named by a beginning of two characters or more
//     (`npm publi` for `publish*`: npm takes a command by any unambiguous beginning), and
//   - when a word that is an option (`--force*`, `-f*`) meets an argument that starts with "+"
//     or ":": git forces the update of a ref so written (`git push origin +main`), as --force
//     does for all, and deletes the remote ref of a refspec with no source (`:main`), as
//     --delete does; other programs spell options with "+" too (`set +o`).
// This cannot see what a command reads from elsewhere (aliases in .git/config, a hook), so a
// rule on the whole command is the safe choice for commands with global options and aliases.
//
// Matching is linear in the command line (no regular expression backtracking on text the
// script chose, which would stall the host).

/**
 * Whether `glob` (`*` matches any run of characters, newlines included) matches all of `text`;
 * with `question`, `?` matches any one character too.
 */
export function starGlobMatches(glob: string, text: string, question = false): boolean {
  // The classic two-pointer wildcard match: on a mismatch, let the last `*` absorb one more character.
  let g = 0;
  let t = 0;
  let starAt = -1;
  let resumeAt = 0;
  while (t < text.length) {
    if (g < glob.length && glob[g] !== "*" && (glob[g] === text[t] || (question && glob[g] === "?"))) {
      g++;
      t++;
    } else if (g < glob.length && glob[g] === "*") {
      starAt = g++;
      resumeAt = t;
    } else if (starAt !== -1) {
      g = starAt + 1;
      t = ++resumeAt;
    } else {
      return false;
    }
  }
  while (g < glob.length && glob[g] === "*") g++;
  return g === glob.length;
}

/**
 * Whether `glob` matches the joined command line starting at the start of some argument
 * (or, erring towards a match, after any space). Since a `*` after the glob's literal head
 * can absorb any prefix, the earliest such start where the head fits is the only one to try.
 */
function matchesFromSomeArgument(glob: string, joined: string): boolean {
  const star = glob.indexOf("*");
  if (star === -1) return joined === glob || joined.endsWith(` ${glob}`);
  const head = glob.slice(0, star);
  const rest = glob.slice(star);
  for (let at = 0; at <= joined.length; at = joined.indexOf(" ", at) + 1) {
    if (joined.startsWith(head, at)) return starGlobMatches(rest, joined.slice(at + head.length));
    if (joined.indexOf(" ", at) === -1) break;
  }
  return false;
}

/** The option a word names: its text before any `*`, after leading ones (`--force` for `*--force*`). */
function optionOf(word: string): string {
  return word.replace(/^\*+/, "").split("*", 1)[0]!;
}

/**
 * Whether `arg` names `word` by a beginning of it: a long option (`--mir` for `--mirror*`), or
 * a word that is no option, by two characters or more (`publi` for `publish*`: npm takes a
 * command by any unambiguous beginning, and a fifth review published with `npm publi`).
 */
function abbreviates(arg: string, word: string): boolean {
  const option = optionOf(word);
  if (!option.startsWith("-")) return !arg.startsWith("-") && arg.length >= 2 && option.startsWith(arg);
  if (!arg.startsWith("--") || !option.startsWith("--")) return false;
  const name = arg.split("=", 1)[0]!;
  return name.length > 2 && option.startsWith(name);
}

/**
 * The characters of every argument that is a group of short options (`-qf` gives q and f; a
 * value bundled after its option counts too, which can only add a match).
 */
function shortOptionLetters(args: readonly string[]): Set<string> {
  const letters = new Set<string>();
  for (const arg of args) {
    if (arg.length > 1 && arg[0] === "-" && arg[1] !== "-") for (const letter of arg.slice(1).split("=", 1)[0]!) letters.add(letter);
  }
  return letters;
}

/** Whether `letters` holds `letter` in either case. */
function hasEitherCase(letters: ReadonlySet<string>, letter: string): boolean {
  return letters.has(letter.toLowerCase()) || letters.has(letter.toUpperCase());
}

/**
 * Whether the short options among the arguments cover `word`'s: all letters of `-rf*`, or the
 * first of `--force*`, in either case (`rm -R` is `rm -r`: a fifth review removed a tree with
 * it past `-r*`).
 */
function shortFormsAppear(word: string, letters: ReadonlySet<string>): boolean {
  const option = optionOf(word);
  const long = /^--([A-Za-z0-9])/.exec(option);
  if (long) return hasEitherCase(letters, long[1]!);
  const short = /^-([A-Za-z0-9]+)/.exec(option);
  return short !== null && [...short[1]!].every((letter) => hasEitherCase(letters, letter));
}

/**
 * Whether `word` is an option and some argument is a refspec that acts as one: git's forced
 * refspec (`+HEAD:main`) is --force for that ref, and one with no source (`:main`) --delete:
 * `git push origin +HEAD:main` force-pushed past `push --force*` unasked, `git push origin
 * :keep` deleted a branch past `push --delete*`.
 */
function refspecFormAppears(word: string, args: readonly string[]): boolean {
  return optionOf(word).startsWith("-") && args.some((arg) => arg.startsWith("+") || arg.startsWith(":"));
}

/** Whether each of the glob's space-separated words (those with text besides `*`) matches some argument, in any order. */
function wordsAppear(words: readonly string[], args: readonly string[]): boolean {
  if (words.length === 0) return false;
  const letters = shortOptionLetters(args);
  return words.every(
    (word) => shortFormsAppear(word, letters) || refspecFormAppears(word, args) || args.some((arg) => starGlobMatches(word, arg) || abbreviates(arg, word)),
  );
}

/** The glob's literal text before its first `*`, trimmed (`push --force` for `push --force*`), or null when there is none. */
function literalHead(glob: string): string | null {
  const head = glob.split("*", 1)[0]!.trim();
  return head === "" ? null : head;
}

const DEFINES_ALIAS = /alias\./i;
/** An argument that sets configuration for the command: `-c`, `-ckey=value`, `--config-env…`. */
// Case matters: git -C names a directory.
// git's --exec-path=DIR runs its subcommands from DIR (`git --exec-path=. x` runs ./git-x, which
// git itself can make: hash-object, update-index --cacheinfo 100755, checkout-index).
const SETS_CONFIG = /^(?:(?:-c|--config-env|--config)(?:$|=|[a-z.])|--exec-path=)/;

/** Whether an argument gives the command configuration or an alias (git's `-c`, `alias.…`, `--exec-path=`): what it runs is then open. */
export function configuresCommand(arg: string): boolean {
  return DEFINES_ALIAS.test(arg) || SETS_CONFIG.test(arg);
}

/**
 * The test a rule's `args` glob applies to a command's arguments. `failSafe` (rules that add
 * a person to the loop) widens it as described above; without it the glob must match the
 * arguments joined by single spaces, exactly. A fail-safe test that matches some arguments
 * also matches them with more arguments before them (each way above only gains starts and
 * arguments to match in), which policy.ts relies on to try it once per command line.
 */
export function argsMatcher(glob: string, failSafe: boolean): (args: readonly string[]) => boolean {
  if (!failSafe) return (args) => starGlobMatches(glob, args.join(" "));
  const head = literalHead(glob);
  const words = glob.split(" ").filter((word) => word.replaceAll("*", "") !== "");
  return (args) => {
    // Starting at the first argument is one of the starts tried: the exact match is included.
    if (matchesFromSomeArgument(glob, args.join(" "))) return true;
    if (wordsAppear(words, args)) return true;
    return args.some((arg) => (head !== null && arg.includes(head)) || configuresCommand(arg));
  };
}
