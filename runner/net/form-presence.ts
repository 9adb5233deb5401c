// Whether a text can hold one of a few forms of a secret, as redact finds them (in the text as it
// is, or with escapes decoded: see redaction.ts) and as a plain search does: a search that tells
// the texts holding none, left as they are, from the few that need the whole masking. Masking
// the host's LLM key in a text a server chose (HostSecrets.inServerText) cost tens of ms a MiB
// (three decoding passes and the forms' automaton over every character, then a search for each
// form): too slow for every HTTP answer body a script reads, which went without it.
//
// One pass of a regular expression finds the places where a form could start: its first
// LEAD_CHARS characters as they are, or an escape (in any syntax redact decodes) that stands for
// one of the characters forms begin with, which can be a form's first escape only that many
// characters into it (see escapesFor). Only there is the text read as redact reads it, an escape or
// a character at a time, along the forms (a trie); the walk stops at a form's end or WALK_CHARS
// characters into one, and the caller then masks the whole text the slow way. Where a place can be
// read more than one way (a "%" that may start an escape or stand for itself), every way is tried:
// what any pass of redact reads there is one of them, so no text a form is found in is passed
// over. Some are read where no pass would be, and then the text is masked the slow way for
// nothing: never the other way round.

import { escapesAt, NAMED_REFERENCES, STANDS_FOR_ITSELF } from "./redaction.js";

/**
 * How many characters into a form the walk goes before it hands the text to the whole masking:
 * past a key's public prefix ("sk-proj-"), so that texts quoting that alone stay on the fast path,
 * and short enough that a text of near misses costs a few dozen steps a place, never a form's length.
 */
const WALK_CHARS = 32;

/**
 * How many of a form's first characters the search looks for as they are: four, which ordinary
 * text seldom holds by chance ("sk-p", "c2st"), where two ("sk", "73") were in every page.
 */
const LEAD_CHARS = 4;

/** Walks every text may take before it is handed to the whole masking (see mayHold). */
const WALKS_ALWAYS = 256;
/**
 * And one more for each 2 ** this many characters of it: bodies seldom hold more than a few
 * places a form's lead is (none in most). Few, because a walk takes longer the further a place
 * matches a form, and a server that gives back what a script sends could turn that into a
 * measure of how far a guess of the key's first characters is right: the walks a text may take
 * bound what that could show (a few tens of ns a walk, at most about 0.1 ms a MiB), against
 * what every answer's own time varies by.
 */
const WALK_SHARE_SHIFT = 8;

/** The characters an escape starts with, in any syntax redact decodes (% and &, and \ for JSON's, JavaScript's and CSS's). */
const ESCAPE_STARTS = new Set(["%", "&", "\\"].map((c) => c.charCodeAt(0)));

export class FormPresence {
  /** The forms' trie: each node's children by code unit. */
  private readonly children: Array<Map<number, number>> = [new Map()];
  /** Nodes where a form ends. */
  private readonly ends: boolean[] = [false];
  /** Where a form can start: its lead as it is, or (the group) an escape for a character of a form's lead. */
  private readonly starts: RegExp;

  constructor(forms: readonly string[]) {
    for (const form of forms) this.add(form);
    const leads = new Set<string>();
    const escaped = new Set<number>();
    for (const form of forms) {
      // A lead past ASCII is looked for up to its first such character: one escape can stand for two
      // code units there (a CSS or JavaScript escape of a character past U+FFFF), and any escape start may begin it.
      const lead = form.slice(0, LEAD_CHARS);
      const ascii = /^[\0-\x7f]*/.exec(lead)![0];
      leads.add(ascii.length > 0 ? ascii : lead.slice(0, 1));
      for (const unit of lead) escaped.add(unit.charCodeAt(0));
    }
    const literal = [...leads].map((lead) => [...lead].map(patternOf).join(""));
    const escapes = escapesFor([...escaped]);
    // No form: a pattern that never matches. The escapes come first: where a form's lead is an
    // escape itself ("\u002B…", the JSON form of a key that begins with "+"), matched first it hid
    // the escape at the same place, and with it the forms whose first escape that is, which start
    // up to LEAD_CHARS - 1 characters before ("+\u0061bc…" of the key "+abc…" was passed over).
    // An escape's walks start at it too, so a lead there is still read.
    this.starts = literal.length === 0 ? /(?!)/g : new RegExp(`(${escapes})|${literal.join("|")}`, "g");
  }

  private add(form: string): void {
    let node = 0;
    for (let i = 0; i < form.length; i++) {
      const unit = form.charCodeAt(i);
      let child = this.children[node]!.get(unit);
      if (child === undefined) {
        child = this.children.length;
        this.children.push(new Map());
        this.ends.push(false);
        this.children[node]!.set(unit, child);
      }
      node = child;
    }
    this.ends[node] = true;
  }

  /** False when `text` holds none of the forms, as it is or with escapes decoded; true when it may. */
  mayHold(text: string): boolean {
    const starts = this.starts;
    // Past this many walks, the whole masking costs less than more of them: a text of escapes for
    // the leads' characters ("%41%42…" of a key whose base64 begins "AG") was a walk at each, 40
    // times the masking's own time.
    let walks = WALKS_ALWAYS + (text.length >> WALK_SHARE_SHIFT);
    starts.lastIndex = 0;
    for (let match = starts.exec(text); match !== null; match = starts.exec(text)) {
      const at = match.index;
      // An escape for a lead's character (the group) is the form's first escape, after as many characters as stand before it.
      const from = match[1] === undefined ? at : Math.max(0, at - (LEAD_CHARS - 1));
      for (let start = at; start >= from; start--) {
        if (--walks < 0 || this.formFrom(text, start)) return true;
      }
      starts.lastIndex = at + 1; // A form may start inside what the pattern matched.
    }
    return false;
  }

  /** Whether a form (or its first WALK_CHARS characters) can be read from `at`, each character as it is or escaped. */
  private formFrom(text: string, at: number): boolean {
    const pending: Array<[position: number, node: number, depth: number]> = [[at, 0, 0]];
    const seen = new Set<number>();
    const nodes = this.children.length;
    while (pending.length > 0) {
      const [position, node, depth] = pending.pop()!;
      if (this.ends[node] || depth >= WALK_CHARS) return true;
      if (position >= text.length) continue;
      const key = position * nodes + node;
      if (seen.has(key)) continue;
      seen.add(key);
      const unit = text.charCodeAt(position);
      const literal = this.children[node]!.get(unit);
      if (literal !== undefined) pending.push([position + 1, literal, depth + 1]);
      if (!ESCAPE_STARTS.has(unit)) continue;
      for (const { decoded, end } of escapesAt(text, position)) {
        // An escape of an escape's start ("&amp;", "%26", "\u0026" for "&") partway into a form: the
        // text may be escaped twice over ("&amp;#x2F;" for "/"), which redact undoes again and this
        // walk does not follow; the whole masking decides. Walked past, a key with a "/" escaped so
        // was left unmasked.
        if (depth > 0 && decoded.length === 1 && ESCAPE_STARTS.has(decoded.charCodeAt(0))) return true;
        let next: number | undefined = node;
        for (let i = 0; i < decoded.length && next !== undefined; i++) next = this.children[next]!.get(decoded.charCodeAt(i));
        if (next !== undefined) pending.push([end, next, depth + decoded.length]);
      }
    }
    return false;
  }
}

/**
 * Every escape that a decoding of redact reads as one of the characters of code unit `units` (a
 * superset of them): each alternative follows a pattern of redaction.ts, and form-presence.test.ts
 * checks every spelling of every ASCII character those read. Past ASCII, any escape start: such
 * keys are rare, and the walk tells the rest.
 */
export function escapesFor(units: readonly number[]): string {
  const ascii = [...new Set(units)].filter((unit) => unit < 0x80).sort((a, b) => a - b);
  const any = (values: readonly string[]): string => `(?:${values.join("|")})`;
  const two = any(ascii.map((unit) => anyCase(hex(unit, 2))));
  const least = any(ascii.map((unit) => anyCase(unit.toString(16))));
  const chars = new Set(ascii.map((unit) => String.fromCharCode(unit)));
  const names = Object.keys(NAMED_REFERENCES).filter((name) => chars.has(NAMED_REFERENCES[name]!));
  const shorts = [...new Set([...Object.keys(JSON_SHORT).filter((letter) => chars.has(JSON_SHORT[letter]!)), ...[...chars].filter((c) => IDENTITY_ESCAPED.test(c))])];
  const ways =
    ascii.length === 0
      ? []
      : [
          // ESCAPE: a percent-escape, a character reference in hex, in decimal or by name, \u00XX, "\/".
          `%${two}`,
          `&#[xX]0*${least};`,
          `&#0*${any(ascii.map(String))};`,
          ...(names.length === 0 ? [] : [`&${any(names.map(anyCase))};`]),
          `\\\\[uU]00${two}`,
          ...(chars.has("/") ? ["\\\\/"] : []),
          // BACKSLASH_ESCAPE: JavaScript's \xXX; CSS's \ and up to six hex digits (a white space after is the next character's business).
          `\\\\[xX]${two}`,
          `\\\\0*${least}`,
          // JSON_ESCAPE: a short escape (a letter, or the punctuation or space a backslash stands before), or \u and four hex digits (\u00XX, as above, for these).
          ...(shorts.length === 0 ? [] : [`\\\\${any(shorts.map((short) => (/[a-z]/i.test(short) ? anyCase(short) : patternOf(short))))}`]),
        ];
  if (units.some((unit) => unit >= 0x80)) ways.push("[%&\\\\]");
  return ways.length === 0 ? "(?!)" : ways.join("|");
}

/** A pattern of the code unit `unit` as it is. */
function patternOf(unit: string): string {
  return unit.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&").replace(/[\0-\x1f\x7f-\uffff]/g, (c) => `\\u${hex(c.charCodeAt(0), 4)}`);
}

/** The characters a backslash before them stands for, besides JSON's short escapes (as redaction.ts's JSON_ESCAPE): ASCII punctuation and the space. */
const IDENTITY_ESCAPED = new RegExp(`^[${STANDS_FOR_ITSELF}]$`);

/** JSON's short escapes, by the character after the backslash (as redaction.ts's JSON_SHORT_UNESCAPES). */
const JSON_SHORT: Readonly<Record<string, string>> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

function hex(value: number, digits: number): string {
  return value.toString(16).padStart(digits, "0");
}

/** A pattern of `text` (letters and digits) with each letter in either case. */
function anyCase(text: string): string {
  return text.replace(/[a-z]/gi, (c) => `[${c.toLowerCase()}${c.toUpperCase()}]`);
}
