// Turns `import … from "tacit"` into reads of the sandbox's library object, keeping every
// other character where it was so that line:column in errors still point at the agent's
// own source. (A blob: module cannot resolve the bare specifier "tacit".)

import { LIBRARY_GLOBAL, PURE_CAPTURES_GLOBAL } from "../library/protocol.js";
import type { PureFunctionSite } from "./pure-functions.js";
import type { TacitImport } from "./validator.js";

/**
 * What an import becomes. One that binds nothing at run time (`import "tacit"`, a type-only
 * import) becomes an empty statement, not nothing: blanked away, it no longer ended the statement
 * before it, and with no semicolon there Deno read that one and the one after as one
 * (`const h = g` and `(1)` as `const h = g(1)`), a call the checks, which read the script as
 * written, never saw (`f === f.constructor` then `("…")()` called the Function constructor).
 */
function replacementFor(entry: TacitImport): string {
  const parts: string[] = [];
  if (entry.namespace) parts.push(`const ${entry.namespace}=${LIBRARY_GLOBAL};`);
  if (entry.named.length > 0) {
    const bindings = entry.named.map(([name, local]) => (name === local ? name : `${name}:${local}`));
    parts.push(`const{${bindings.join(",")}}=${LIBRARY_GLOBAL};`);
  }
  return parts.length > 0 ? parts.join("") : ";";
}

/**
 * The replacement laid over the original's shape: same line breaks, and blanks for the rest,
 * so that everything after the import keeps its line and column. (When the replacement is
 * longer than the import's first line, later columns on that line shift; rare.)
 */
function sameShape(original: string, replacement: string): string {
  const blank = original.replace(/[^\r\n\u2028\u2029]/g, " ");
  const firstBreak = blank.search(/[\r\n\u2028\u2029]/);
  const firstLine = firstBreak === -1 ? blank.length : firstBreak;
  return replacement.length <= firstLine ? replacement + blank.slice(replacement.length) : replacement + blank.slice(firstLine);
}

export interface Edit {
  at: number;
  /** Characters replaced from `at` (0 for an insertion). */
  length: number;
  text: string;
}

function applyEdits(code: string, edits: readonly Edit[]): string {
  let result = "";
  let cursor = 0;
  // Stable order: by position; at one position, in the order given (an opener before a closer).
  for (const edit of [...edits].sort((a, b) => a.at - b.at)) {
    result += code.slice(cursor, edit.at) + edit.text;
    cursor = edit.at + edit.length;
  }
  return result + code.slice(cursor);
}

/**
 * The code the sandbox runs: tacit imports turned into reads of the library object (same
 * line count), and functions passed to map/flatMap wrapped so their captured variables can
 * be handed to the pure evaluator: `fn` becomes `__tacitPure(fn, () => ({ a, b }))`.
 */
export function rewriteForSandbox(
  code: string,
  imports: readonly TacitImport[],
  pureFunctions: readonly PureFunctionSite[] = [],
  extraEdits: readonly Edit[] = [],
): string {
  const edits: Edit[] = [...extraEdits];
  for (const entry of imports) {
    edits.push({ at: entry.start, length: entry.end - entry.start, text: sameShape(code.slice(entry.start, entry.end), replacementFor(entry)) });
  }
  // Nested sites are fine: each insertion is independent text at its own offset.
  for (const site of pureFunctions) {
    if ("space" in site) {
      edits.push({ at: site.start, length: 0, text: " " });
      continue;
    }
    edits.push({ at: site.start, length: 0, text: `${PURE_CAPTURES_GLOBAL}(` });
    edits.push({ at: site.end, length: 0, text: `, () => ({ ${site.captures.join(", ")} }))` });
  }
  return applyEdits(code, edits);
}

