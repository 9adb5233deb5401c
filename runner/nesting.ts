// How deeply a script nests, measured before anything parses it. oxc's native parser (run in
// the host's own process) crashes the whole process on a script nested some thousands deep
// (`(((…)))` 10,000 deep, or a chain of some 50,000 binary operators): a security review took
// `tacit serve` down with 20 KB of brackets. A scan of the text refuses such a script first.
// It over-counts (a bracket in a regular expression counts too), which only refuses sooner.

/** Brackets ( [ { and template `${` open at once, at most. */
export const MAX_NESTING = 1000;
/** Operator characters in the whole script, at most: long chains build deep trees too. */
export const MAX_OPERATORS = 40_000;

const OPERATOR = new Set(["+", "-", "*", "/", "%", "<", ">", "&", "|", "^", "!", "~", "?", "="]);

/** Why the script is too deep to parse safely (with where), or null. */
export function nestingRefusal(code: string): { offset: number; message: string } | null {
  let depth = 0;
  let operators = 0;
  // What each open bracket is: "(" "[" "{", or "`" for a template's ${…}.
  const open: string[] = [];
  for (let i = 0; i < code.length; i++) {
    const c = code[i]!;
    if (c === "/" && code[i + 1] === "/") {
      const end = code.indexOf("\n", i);
      i = end === -1 ? code.length : end;
      continue;
    }
    if (c === "/" && code[i + 1] === "*") {
      const end = code.indexOf("*/", i + 2);
      i = end === -1 ? code.length : end + 1;
      continue;
    }
    if (c === "'" || c === '"') {
      for (i++; i < code.length && code[i] !== c && code[i] !== "\n"; i++) if (code[i] === "\\") i++;
      continue;
    }
    if (c === "`" || (c === "}" && open.at(-1) === "`")) {
      if (c === "}") {
        open.pop();
        depth--;
      }
      // Template text up to its end or its next ${.
      for (i++; i < code.length && code[i] !== "`"; i++) {
        if (code[i] === "\\") i++;
        else if (code[i] === "$" && code[i + 1] === "{") {
          open.push("`");
          depth++;
          i++;
          break;
        }
      }
      if (depth > MAX_NESTING) return refusal(i, `brackets and template expressions nest more than ${MAX_NESTING} deep`);
      continue;
    }
    if (c === "(" || c === "[" || c === "{") {
      open.push(c);
      if (++depth > MAX_NESTING) return refusal(i, `brackets and template expressions nest more than ${MAX_NESTING} deep`);
    } else if (c === ")" || c === "]" || c === "}") {
      if (open.length > 0) {
        open.pop();
        depth--;
      }
    } else if (OPERATOR.has(c) && ++operators > MAX_OPERATORS) {
      return refusal(i, `the script holds more than ${MAX_OPERATORS} operators`);
    }
  }
  return null;
}

function refusal(offset: number, why: string): { offset: number; message: string } {
  return { offset, message: `${why}, more than tacit's parser takes safely` };
}
