// A glob's "[!…]" as a shell, fnmatch and gitignore read it: the class of every character but
// those listed. picomatch 4 reads it (without its `posix` option) as the class of "!" and the
// characters listed, the opposite: find(".", "[!a]*") answered with the names that start with
// "a", and a classified pattern ".env.[!e]*" (every .env.* but .env.example) classified
// .env.example and left .env.production readable. Its `posix` option reads it right, but also
// drops picomatch's reading of a class as its own text too ("[id]" matches a file named "[id]"),
// which a classified pattern relies on to classify no less; so "[!" is written as "[^", which
// picomatch reads as the shell does, and nothing else changes.

/** What rewriteGlob does to a class's leading negation mark, and to each character outside classes. */
interface GlobRewrite {
  negation(mark: "!" | "^"): string;
  outside(character: string): string;
  /** An escaped character outside a class, written with its backslash (the default: kept as it is). */
  escapedOutside?(character: string): string;
}

/**
 * `glob` rewritten a character at a time, knowing which lie in a class: an escaped character is
 * kept with its backslash (an escaped "\[" opens no class), a class's leading "!" or "^" is a
 * negation, and a "]" first in a class (after the negation, if any) is one of its characters,
 * not its end, as the shell and gitignore read it.
 */
function rewriteGlob(glob: string, rewrite: GlobRewrite): string {
  let out = "";
  let inClass = false;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "\\") {
      const next = glob[i + 1] ?? "";
      out += !inClass && next !== "" && rewrite.escapedOutside ? rewrite.escapedOutside(next) : c + next;
      i++;
      continue;
    }
    if (!inClass && c === "[") {
      inClass = true;
      out += c;
      const next = glob[i + 1];
      if (next === "!" || next === "^") {
        out += rewrite.negation(next);
        i++;
      }
      if (glob[i + 1] === "]") out += glob[++i];
      continue;
    }
    if (inClass) {
      if (c === "]") inClass = false;
      out += c;
      continue;
    }
    out += rewrite.outside(c);
  }
  return out;
}

/** `glob` with each class's leading "!" written "^". */
export function withCaretNegation(glob: string): string {
  if (!glob.includes("[!")) return glob;
  return rewriteGlob(glob, { negation: () => "^", outside: (c) => c });
}

/**
 * `glob` with each "(", ")" and "|" outside a class escaped, or null where it has none. A
 * gitignore pattern (a classified path) takes them as the characters they are; picomatch reads
 * them as a regular expression's group and alternation (and "(" after "*", "?", "+", "@", "!"
 * as an extglob), so "backup(1)*" classified "backup1-x" and left "backup(1)-prod.txt" readable.
 */
export function withLiteralGroups(glob: string): string | null {
  if (!/[()|]/.test(glob)) return null;
  const out = rewriteGlob(glob, { negation: (mark) => mark, outside: (c) => (c === "(" || c === ")" || c === "|" ? `\\${c}` : c) });
  return out === glob ? null : out;
}

/**
 * `glob` as gitignore reads it, every "{", "}", "(", ")" and "|" outside a class escaped (the
 * characters they are), or null where it has none. A classified pattern is also matched so
 * (see ClassifiedPaths): picomatch reads braces as an alternation and nothing else, so a config
 * file's `secret{*.txt` (a brace never closed) classified no name but that very text, and
 * `creds{dev,prod}*` not `creds{dev,prod}.json`: a script read both as text.
 */
export function withLiteralBracesAndGroups(glob: string): string | null {
  if (!/[{}()|]/.test(glob)) return null;
  const out = rewriteGlob(glob, { negation: (mark) => mark, outside: (c) => ("{}()|".includes(c) ? `\\${c}` : c) });
  return out === glob ? null : out;
}

/**
 * `glob` with each escaped backslash outside a class (a backslash written twice, which matches one)
 * written as a class holding the backslash, which matches the same one character. picomatch 4.0.7
 * never returns from compiling a glob with a "/" that ends in two escaped backslashes (four
 * backslashes after "x/a"): a script's find(".", that glob) held the host's search thread at full
 * CPU until the time limit, and an operator's --secure-output ending so hung tacit's search.
 */
export function withBackslashClasses(glob: string): string {
  if (!glob.includes("\\\\")) return glob;
  return rewriteGlob(glob, { negation: (mark) => mark, outside: (c) => c, escapedOutside: (c) => (c === "\\" ? "[\\\\]" : `\\${c}`) });
}

/**
 * A glob as tacit gives it to picomatch, wherever it compiles one (scripts' globs, classified and
 * protected patterns, policy rules' paths): a class's "[!…]" as the shell reads it, and escaped
 * backslashes as classes, which picomatch compiles without hanging (see both). A policy rule's path
 * ending in two escaped backslashes hung tacit at its start, past SIGTERM.
 */
export function forPicomatch(glob: string): string {
  return withBackslashClasses(withCaretNegation(glob));
}
