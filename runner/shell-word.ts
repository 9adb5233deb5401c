// Shell words, both ways: text quoted as one word for a POSIX shell, and shell text split into
// the words the shell would give a command. The splitting serves the checks that find the files
// a configuration makes a shell run later (git's command settings, a hook manager's commands,
// direnv's `.envrc`, an MCP client's one-string command): a word read differently from the shell
// names another file than the one that runs (`sh scr"ipts"/deploy.sh` runs scripts/deploy.sh).

export function singleQuoted(text: string): string {
  return `'${text.replace(/'/g, "'\\''")}'`;
}

/**
 * A word as tacit shows it to a person (a question, the audit log): as it is when it is plain
 * (letters, digits and `@%+=:,./_-`), else as a JSON string, so that no blank, quote or line
 * break in it can make it read as several words, or as the rest of what is shown.
 */
export function shownWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : JSON.stringify(word);
}

/** One word of shell text, as the shell gives it to the command where that is known without running anything. */
export interface ShellWord {
  /** Quotes and escapes removed; an expansion whose value is not known (`$X`, `${X:-d}`, `$(…)`, `` `…` ``) left as written. */
  text: string;
  /** Whether it holds such an expansion: what it really is becomes known only when the shell runs. */
  expands: boolean;
}

export interface ShellWordOptions {
  /**
   * "sh" (the default): a POSIX shell's reading. "shlex": Python's shlex.split, which programs
   * that run a command without a shell use (pre-commit's `entry:`): no operators, expansions or
   * comments (`;`, `$`, `` ` `` and `#` are ordinary characters), and inside double quotes a
   * backslash escapes only `"` and `\`.
   */
  dialect?: "sh" | "shlex";
  /** Variables whose value is known (direnv's `$PWD`): `$NAME` and `${NAME}` become it. */
  known?: Readonly<Record<string, string>>;
  /** A `~` that starts a word, unquoted, alone or before `/`, becomes this directory. */
  home?: string;
}

const BLANK = /[ \t\r\n]/;
/** Characters that end a word unquoted: the shell's operators (`;`, `&&`, `|`, redirections, subshells). */
const OPERATOR = /[;&|<>()]/;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;
/** What a backslash inside double quotes escapes; before anything else it stays a backslash. */
const ESCAPED_IN_DOUBLE_QUOTES = new Set(["$", "`", '"', "\\"]);
const SHLEX_ESCAPED_IN_DOUBLE_QUOTES = new Set(['"', "\\"]);

/**
 * The words of `text` as a POSIX shell reads them: split at blanks and operators, a `#` that
 * starts a word starting a comment, quotes ('…', "…") and backslashes taken off, pieces next to
 * each other forming one word (`a"b"'c'` is `abc`), a backslash before a newline joining lines.
 * Expansions are not performed (see ShellWord), nor are globs, aliases or field splitting.
 * Unterminated quotes run to the end of the text, as far as the shell reads before failing.
 */
export function shellWords(text: string, options: ShellWordOptions = {}): ShellWord[] {
  const shell = options.dialect !== "shlex";
  const escapedInDoubleQuotes = shell ? ESCAPED_IN_DOUBLE_QUOTES : SHLEX_ESCAPED_IN_DOUBLE_QUOTES;
  const words: ShellWord[] = [];
  let word = "";
  let inWord = false;
  let expands = false;
  let at = 0;
  const end = (): void => {
    if (inWord) words.push({ text: word, expands });
    word = "";
    inWord = false;
    expands = false;
  };
  /** Reads the expansion starting at `at` (a `$` or a backtick): its value if known, else its text. */
  const expansion = (): void => {
    const start = at;
    if (text[at] === "`") {
      at = closing(text, at + 1, "`");
    } else if (text[at + 1] === "{" || text[at + 1] === "(") {
      at = balanced(text, at + 1);
      const braced = text[start + 1] === "{" ? text.slice(start + 2, at - 1) : null;
      if (braced !== null && NAME.exec(braced)?.[0] === braced && options.known && Object.hasOwn(options.known, braced)) {
        word += options.known[braced];
        return;
      }
    } else {
      const name = NAME.exec(text.slice(at + 1))?.[0];
      if (name === undefined) {
        // $1, $?, $@ and the like; a `$` before anything else is itself.
        if (text[at + 1] !== undefined && /[0-9?@*#!$-]/.test(text[at + 1]!)) at += 2;
        else {
          word += "$";
          at += 1;
          return;
        }
      } else {
        at += 1 + name.length;
        if (options.known && Object.hasOwn(options.known, name)) {
          word += options.known[name];
          return;
        }
      }
    }
    word += text.slice(start, at);
    expands = true;
  };
  while (at < text.length) {
    const char = text[at]!;
    if (char === "\\") {
      // A backslash before a newline joins the lines (in a shell); before anything else, that character is itself.
      if (text[at + 1] !== "\n" || !shell) {
        if (at + 1 < text.length) word += text[at + 1];
        inWord = true;
      }
      at += 2;
    } else if (BLANK.test(char) || (shell && OPERATOR.test(char))) {
      end();
      at += 1;
    } else if (char === "#" && !inWord && shell) {
      const newline = text.indexOf("\n", at);
      at = newline === -1 ? text.length : newline;
    } else if (char === "'") {
      const close = text.indexOf("'", at + 1);
      const stop = close === -1 ? text.length : close;
      word += text.slice(at + 1, stop);
      inWord = true;
      at = stop + 1;
    } else if (char === '"') {
      inWord = true;
      at += 1;
      while (at < text.length && text[at] !== '"') {
        const inner = text[at]!;
        if (inner === "\\" && text[at + 1] === "\n" && shell) at += 2;
        else if (inner === "\\" && escapedInDoubleQuotes.has(text[at + 1] ?? "")) {
          word += text[at + 1];
          at += 2;
        } else if ((inner === "$" || inner === "`") && shell) expansion();
        else {
          word += inner;
          at += 1;
        }
      }
      at += 1;
    } else if ((char === "$" || char === "`") && shell) {
      inWord = true;
      expansion();
    } else if (char === "~" && !inWord && shell && options.home !== undefined && (at + 1 === text.length || /[/ \t\r\n;&|<>()]/.test(text[at + 1]!))) {
      word += options.home;
      inWord = true;
      at += 1;
    } else {
      word += char;
      inWord = true;
      at += 1;
    }
  }
  end();
  return words;
}

/** The index just past the `close` that ends a piece starting at `from` (a backslash escapes, except in single quotes), or the text's end. */
function closing(text: string, from: number, close: string): number {
  for (let at = from; at < text.length; at++) {
    if (text[at] === "\\" && close !== "'") at++;
    else if (text[at] === close) return at + 1;
  }
  return text.length;
}

/** The index just past the bracket that closes the one at `open` (`{` or `(`), nested ones and quotes skipped; or the text's end. */
function balanced(text: string, open: number): number {
  const pairs: Record<string, string> = { "{": "}", "(": ")" };
  const stack = [pairs[text[open]!]!];
  for (let at = open + 1; at < text.length; at++) {
    const char = text[at]!;
    if (char === "\\") at++;
    else if (char === "'") at = closing(text, at + 1, "'") - 1;
    else if (char === '"') at = closing(text, at + 1, '"') - 1;
    else if (char === "{" || char === "(") stack.push(pairs[char]!);
    else if (char === stack[stack.length - 1]) {
      stack.pop();
      if (stack.length === 0) return at + 1;
    }
  }
  return text.length;
}
