// Redaction of what a request carried in secret from what the agent sees of its answer, in
// one pass over the text whatever the number of forms. Searching for each form in turn cost
// forms × text: a security review sent a classified value of 1,500 words as a secret header
// and held the host's only thread 11 s on an 8 MiB answer (past the wall-clock limit, and
// every session of tacit serve with it), and a classified body of 2 million words failed a
// request and took the error message's redaction to 2 GB and a minute. Here the forms go into
// one automaton (Aho-Corasick) and the text is read once.

import { domainToASCII } from "node:url";
import { base64Forms } from "../secret-forms.js";

/** Shorter forms are not redacted: replacing every "a" in a body would destroy it. */
export const MIN_REDACTED_LENGTH = 4;
export const REDACTED = "[redacted]";
/** Words of a secret value this long or longer are redacted on their own too. */
const MIN_REDACTED_WORD_LENGTH = 8;
/**
 * Long words are looked for in all their forms in this much of each secret. Header values are
 * capped well below it (see MAX_SECRET_HEADER_CHARS); a classified body can be far longer, and
 * its later words matter only for error messages, which quote no body but do quote what a
 * server chose (a redirect's URL, a content coding's name): those are looked for anywhere in the
 * message, glued to other text too (laterWordsIn).
 */
const WORD_SCAN_CHARS = 64 * 1024;

/**
 * The forms an echo commonly gives back of a value that was sent: as sent, trimmed (servers
 * trim header values), lower- or upper-cased, JSON-escaped (Go's way too), HTML-escaped,
 * URL-encoded (a space as "+" too), base64. And the same for each long word of it: a server
 * that parses "Bearer <token>" or "a=<token>" echoes the token alone. A value reshaped character by
 * character is beyond any redaction (see the README): no echoing host where secrets are sent.
 */
function formsOf(sent: string): string[] {
  // What goes out is UTF-8, where a lone surrogate becomes U+FFFD, so that is what an echo
  // holds; encodeURIComponent also throws on one (which ended the evaluation: see echoedForms).
  const value = wellFormed(sent);
  const base64 = Buffer.from(value, "utf8").toString("base64");
  const json = JSON.stringify(value).slice(1, -1);
  // A header value goes out one byte per character (latin-1), and an answer is read as UTF-8:
  // a server that echoes the bytes gives "ä" back as U+FFFD, and Python's json.dumps as
  // \u00e4. Either way the rest of a secret with one such character came back unredacted.
  const nonAscii = /[^\x00-\x7f]/.test(value);
  const echoedBytes = nonAscii ? [Buffer.from(value, "latin1").toString("utf8")] : [];
  const asciiJson = nonAscii ? [json.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)] : [];
  // Go's encoding/json writes each byte that is not UTF-8 as the escape \ufffd (and <, >, &
  // escaped): a Go echo of such a header gave "p\ufffdssw\ufffdrd-<canary>" back.
  const goEchoedBytes = nonAscii
    ? [JSON.stringify(goDecoded(Buffer.from(value, "latin1"))).slice(1, -1).replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026").replace(/\ufffd/g, "\\ufffd")]
    : [];
  return [
    ...echoedBytes,
    ...asciiJson,
    ...goEchoedBytes,
    value,
    value.toLowerCase(),
    value.toUpperCase(),
    json,
    // Go's encoding/json, and HTML pages (a second review got echoes back in both).
    json.replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026"),
    // PHP's json_encode (and some Java encoders) escape "/" as "\/": a base64 key such as an
    // AWS secret came back from a PHP echo in pieces between the escapes, none of them a form.
    json.replace(/\//g, "\\/"),
    value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;"),
    // Encoders that also escape "+" (a base64 key holds it: an AWS secret access key came back
    // whole past these, and JSON.parse undid the first by itself): ASP.NET Core's JSON, Razor's
    // HTML and Go's html/template.
    systemTextJson(value),
    razorHtml(value),
    value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&#34;").replace(/'/g, "&#39;").replace(/\+/g, "&#43;").replace(/\0/g, "\ufffd"),
    encodeURIComponent(value),
    // Form-encoded (a query string, a form body: URLSearchParams, Python's quote_plus, PHP's
    // urlencode, .NET's UrlEncode), a space is "+": its escapes are undone where the forms are
    // looked for (see REFERENCE_DECODING), its "+"s are not. A passphrase whose words are too
    // short to be masked on their own came back whole ("correct+horse+battery+staple").
    ...(value.includes(" ") ? [value.replace(/ /g, "+")] : []),
    // In the path of an http or https URL, where "\" is read as "/": a Location that holds a
    // Windows account's password ("CORP\svc-backup") as it is names "CORP/svc-backup" once
    // tacit follows it (the page it leads to, a refusal of it, quote that URL).
    ...(value.includes("\\") ? [value.replace(/\\/g, "/")] : []),
    // In a host, in its ASCII form: a URL names a host with letters past ASCII as "xn--", its
    // ASCII letters in lower case, then punycode's deltas ("pässwörd-<key>" is "xn--psswrd-<key>-…").
    // A server that put such a secret into a redirect's host had it named so by the URL tacit
    // followed and by Node's messages ("getaddrinfo ENOTFOUND xn--…"), which a script decoded
    // back. The whole label's form when the secret is the label; its ASCII letters, which stand
    // together in any label that holds it, when the server put more into it.
    ...(nonAscii ? hostForms(value) : []),
    ...(nonAscii ? uriForms(value) : []),
    base64,
    base64.replace(/=+$/, ""),
    Buffer.from(value, "utf8").toString("base64url"),
    // Its base64 forms inside a longer text that was encoded (a server answered with the raw request
    // base64-encoded, as an inspection API gives one, and a script decoded the secret header out of
    // it): the same forms HostSecrets masks the LLM key by.
    ...base64Forms(value),
    ...(nonAscii ? headerByteForms(value) : []),
  ];
}

/**
 * The bytes a server may hold of `value` sent as a header: where it has characters past ASCII,
 * not its UTF-8 (what the forms above encode) but one byte per character (latin-1, as a header
 * goes out), and those bytes read as UTF-8 (each that is not UTF-8 a U+FFFD: see echoedBytes).
 * Empty for a value with a character past \xff, which no header carries (it is sent empty), and
 * for one longer than a server takes in a header (see MAX_HEX_SECRET_CHARS): a classified body's
 * bytes are its UTF-8, and its forms are searched for each on its own (LongForm).
 */
function headerBytesOf(value: string): Buffer[] {
  if (value.length > MAX_HEX_SECRET_CHARS || !/[^\x00-\x7f]/.test(value) || !/^[\x00-\xff]*$/.test(value)) return [];
  const wire = Buffer.from(value, "latin1");
  return [wire, Buffer.from(wire.toString("utf8"), "utf8")];
}

/**
 * `value`'s forms as a header's bytes (see headerBytesOf) percent-escaped and in base64. A server
 * that escapes a string of bytes (PHP's urlencode, Python's quote of bytes), or shows the raw
 * request in base64, writes these: "pässwörd-<canary>" came back as "p%E4ssw%F6rd-<canary>", as
 * "p%EF%BF%BDssw%EF%BF%BDrd-<canary>" once read as UTF-8, and as the base64 of either, none of them
 * a form of its UTF-8, and the script decoded the canary. ASCII bytes are kept as they are: where
 * the forms are looked for their escapes are undone (see REFERENCE_DECODING).
 */
function headerByteForms(value: string): string[] {
  return headerBytesOf(value).flatMap((bytes) => {
    const upper = [...bytes].map((byte) => (byte < 0x80 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase()}`)).join("");
    const lower = upper.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase());
    const base64 = bytes.toString("base64");
    return [
      upper,
      lower,
      ...(upper.includes(" ") ? [upper.replace(/ /g, "+"), lower.replace(/ /g, "+")] : []),
      base64,
      base64.replace(/=+$/, ""),
      bytes.toString("base64url"),
      ...base64Forms(bytes),
    ];
  });
}

/**
 * The bytes of `value` (UTF-8) in hex, either case, with nothing, a space or a colon between them:
 * as a server that shows a raw request in hex writes them (Go's %x, Python's bytes.hex(), Node's
 * toString("hex"); bytes.hex(" ") and packet dumps), from which a script decoded a secret header.
 * For a secret whole (see hexValuesOf), not each of its words: a raw request holds it whole.
 */
function hexForms(value: string): string[] {
  // And a header's own bytes where they are not its UTF-8 (see headerBytesOf): a raw request holds those.
  return [Buffer.from(value, "utf8"), ...headerBytesOf(value)].flatMap((sent) => {
    const bytes = [...sent].map((byte) => byte.toString(16).padStart(2, "0"));
    return ["", " ", ":"].flatMap((between) => {
      const lower = bytes.join(between);
      return [lower, lower.toUpperCase()];
    });
  });
}

/**
 * The longest host name DNS looks up (RFC 1035): past it, the ASCII form of a whole value is not
 * made (punycode takes time in the square of a label's different characters: 64 Ki of CJK took 4 s).
 */
const MAX_HOST_NAME_CHARS = 253;

/**
 * A value with letters past ASCII as a URL's host names it: its ASCII (xn--) form, and the ASCII
 * letters that form holds together, when they are as long as a word masked on its own (shorter,
 * what is left of a secret mostly past ASCII would mask ordinary text: "パスワード1234" is "1234").
 */
function hostForms(value: string): string[] {
  const whole = value.length <= MAX_HOST_NAME_CHARS ? domainToASCII(value) : "";
  const ascii = value.toLowerCase().replace(/[^\x00-\x7f]/g, "");
  return [...(whole === "" ? [] : [whole]), ...(ascii.length >= MIN_REDACTED_WORD_LENGTH ? [ascii] : [])];
}

/**
 * A value with letters past ASCII in a URL or a link: those letters as UTF-8 percent-escapes (in
 * upper- or lower-case hex, a space as "+" too), its ASCII characters as they are. Where the
 * forms are looked for, the escapes of ASCII characters are undone (see REFERENCE_DECODING), so
 * this holds whichever of them an encoder escaped; encodeURIComponent's form, with every one
 * escaped, holds only what an echo that kept none as it is does. "pässwörd/<key>" came back
 * unmasked as Python's quote writes it ("p%C3%A4ssw%C3%B6rd/<key>", "/" kept), as .NET's
 * UrlEncode does ("%c3%a4"), and as the URL of a Location that echoed it (tacit follows it, and
 * a refusal of one quotes it), which escapes "ä" and keeps "/".
 */
function uriForms(value: string): string[] {
  const upper = value.replace(/[^\x00-\x7f]+/g, (run) => encodeURIComponent(run));
  const lower = upper.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase());
  return value.includes(" ") ? [upper, lower, upper.replace(/ /g, "+"), lower.replace(/ /g, "+")] : [upper, lower];
}

/** \uXXXX with upper-case digits, as .NET writes it. */
const dotnetEscape = (code: number): string => `\\u${code.toString(16).toUpperCase().padStart(4, "0")}`;
const JSON_SHORT_ESCAPES: Record<string, string> = { "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f" };

/**
 * A string inside JSON as System.Text.Json writes it by default (JavaScriptEncoder.Default,
 * ASP.NET Core's): " & ' + < > ` and every character outside printable ASCII as \uXXXX in upper
 * case, the backslash and the usual controls in short form.
 */
function systemTextJson(value: string): string {
  let out = "";
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    const code = value.charCodeAt(i);
    out += JSON_SHORT_ESCAPES[c] ?? (code < 0x20 || code > 0x7e || "\"&'+<>`".includes(c) ? dotnetEscape(code) : c);
  }
  return out;
}

const HTML_NAMED: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" };

/** A string as Razor's default HtmlEncoder writes it: & < > " named, ' + and what is not printable ASCII as &#xHEX;. */
function razorHtml(value: string): string {
  let out = "";
  for (const c of value) {
    const code = c.codePointAt(0)!;
    out += HTML_NAMED[c] ?? (code < 0x20 || code > 0x7e || c === "'" || c === "+" ? `&#x${code.toString(16).toUpperCase()};` : c);
  }
  return out;
}

/**
 * Bytes read as UTF-8 the way Go does: each byte that does not start a valid sequence is one
 * U+FFFD (Node makes one of a truncated sequence's bytes together).
 */
function goDecoded(bytes: Buffer): string {
  let out = "";
  for (let i = 0; i < bytes.length; ) {
    const lead = bytes[i]!;
    const length = lead < 0x80 ? 1 : lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
    // The second byte's range depends on the lead (no overlong forms, surrogates or past U+10FFFF).
    const low = lead === 0xe0 ? 0xa0 : lead === 0xf0 ? 0x90 : 0x80;
    const high = lead === 0xed ? 0x9f : lead === 0xf4 ? 0x8f : 0xbf;
    let valid = length > 0 && i + length <= bytes.length;
    for (let k = 1; valid && k < length; k++) {
      const byte = bytes[i + k]!;
      valid = k === 1 ? byte >= low && byte <= high : byte >= 0x80 && byte <= 0xbf;
    }
    out += valid ? bytes.subarray(i, i + length).toString("utf8") : "\ufffd";
    i += valid ? length : 1;
  }
  return out;
}

/** The string with each lone surrogate replaced by U+FFFD, as UTF-8 encoding does. */
function wellFormed(text: string): string {
  return text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd");
}

/**
 * A value's first `length` UTF-16 units, one more when the cut would fall inside a surrogate
 * pair: a cut there left a lone surrogate, and a classified body with an emoji where an error
 * message's length fell ended the evaluation (the host's reply failed), a signal that told the
 * script where the secret's astral characters are.
 */
function prefixOf(value: string, length: number): string {
  const code = value.charCodeAt(length - 1);
  return value.slice(0, code >= 0xd800 && code <= 0xdbff ? length + 1 : length);
}

/**
 * The forms of `secret` that a text of `room` characters can hold, each with whether it can
 * be there whole. A value longer than the text can only end it partway (an answer cut at the
 * size limit), so only the forms of its first `room + 1` characters are needed, as prefixes:
 * a 256 MiB body costs what a text-sized one does. null when the text cannot be searched for
 * the secret's words past WORD_SCAN_CHARS (see laterWordsIn): it is then masked whole.
 */
function echoedForms(secret: string, text: string, room = text.length): Array<{ form: string; whole: boolean }> | null {
  const scanned = secret.length > WORD_SCAN_CHARS ? prefixOf(secret, WORD_SCAN_CHARS) : secret;
  // First: a text it cannot search is masked whole, and none of the rest is needed.
  const later = scanned === secret ? [] : laterWordsIn(secret, scanned.length, text);
  if (later === null) return null;
  const out: Array<{ form: string; whole: boolean }> = [];
  for (const value of [...valuesOf(secret, scanned), ...later]) {
    const whole = value.length <= room;
    for (const form of formsOf(whole ? value : prefixOf(value, room + 1))) out.push({ form, whole: whole && form.length <= room });
  }
  for (const value of hexValuesOf(scanned)) {
    const whole = value.length <= room;
    for (const form of hexForms(whole ? value : prefixOf(value, room + 1))) out.push({ form, whole: whole && form.length <= room });
  }
  return out;
}

/**
 * A secret longer than this is not looked for in hex: servers refuse a header line or a request's
 * headers past 8 or 16 KiB (nginx, Node), so none echoes it, and the forms of a longer one (six,
 * each two or three times its length) slowed redacting an 8 MiB answer by half for a script that
 * sent 60 KiB of words as a secret header (1.1 s to 1.7 s of the host's only thread, each request).
 */
const MAX_HEX_SECRET_CHARS = 16 * 1024;

/** The values whose hex forms are looked for: the secret as sent and trimmed (see hexForms), when it could be echoed. */
function hexValuesOf(secret: string): string[] {
  return secret.length > MAX_HEX_SECRET_CHARS ? [] : [...new Set([secret, secret.trim()])];
}

/**
 * The values whose forms are looked for, but the words past `scanned` (see laterWordsIn): the
 * secret, it trimmed, its long words, and the long runs of ASCII in a word with characters past
 * it. An echo may write those characters in a way no form knows ("&#228;", "&auml;", "?" for what
 * ASCII cannot hold, as Java's and Python's ASCII encoders do), and the rest of the word then came
 * back whole: "pässwörd-<canary>" as "p&#228;ssw&#246;rd-<canary>", the canary in plaintext.
 */
function valuesOf(secret: string, scanned: string): string[] {
  const pieces = [...new Set(scanned.split(/[\s=;,:"']+/))];
  const words = pieces.filter((word) => word.length >= MIN_REDACTED_WORD_LENGTH && word !== secret);
  const asciiRuns = pieces
    .filter((word) => /[^\x00-\x7f]/.test(word))
    .flatMap((word) => word.split(/[^\x00-\x7f]+/))
    .filter((run) => run.length >= MIN_REDACTED_WORD_LENGTH);
  return [secret, secret.trim(), ...words, ...new Set(asciiRuns)];
}

/**
 * Every form redact(text, secrets, [], false) masks where it finds one whole, in any text (the
 * forms a text shorter than one holds only in part are masked only at a cut end); null when a
 * secret is too long for them to be known before the text is (its words past WORD_SCAN_CHARS are
 * looked for in the text: see laterWordsIn). For a search that tells a text holding none of them
 * (see form-presence.ts), which redact then leaves as it is.
 */
export function wholeForms(secrets: readonly string[]): string[] | null {
  if (secrets.some((secret) => secret.length > WORD_SCAN_CHARS)) return null;
  const forms = secrets.flatMap((secret) => [...valuesOf(secret, secret).flatMap(formsOf), ...hexValuesOf(secret).flatMap(hexForms)]);
  return [...new Set(forms)].filter((form) => form.length >= MIN_REDACTED_LENGTH);
}

/** Where a URL (or a message) breaks a word into pieces; a secret's words end only at WORD_END. */
const PIECE_SEPARATOR = /[\s=;,:"'/.?#&@%+\\<>()[\]{}|]/;
const PIECE_SEPARATORS = new RegExp(`${PIECE_SEPARATOR.source}+`);
const ASCII_PIECE_SEPARATORS = Array.from({ length: 128 }, (_, unit) => PIECE_SEPARATOR.test(String.fromCharCode(unit)));
const WORD_END = /[\s=;,:"']/;

function separatesPieces(unit: number): boolean {
  return unit < 128 ? ASCII_PIECE_SEPARATORS[unit]! : PIECE_SEPARATOR.test(String.fromCharCode(unit));
}

/**
 * The most characters of a text's long pieces laterWordsIn indexes (its SubstringIndex takes up
 * to about 150 bytes a character): texts it is given are error messages and redirect hops, tens of
 * KiB at most (Node reads 16 KiB of headers). A longer one is not searched: redact masks it whole.
 */
const LATER_WORDS_TEXT_CHARS = 256 * 1024;

/** Work laterWordsIn did, for the test that it stays linear: characters read and index steps taken. */
export interface WordSearchSteps {
  steps: number;
}

/**
 * The long pieces of `secret` past `from` that `text` holds anywhere, as they are or lower-cased,
 * each with the word around it; null when the text is too long to search (see
 * LATER_WORDS_TEXT_CHARS) or holds more of the secret's words than it could be masked by: the
 * caller then masks the text whole. An error message quotes what a server chose (a redirect's
 * host, path and query, a content coding's name), and a security review had a server reflect a
 * key from past the first 64 KiB of a classified .env into a refused redirect's host name, which
 * the error named in plaintext; and one glued to other text ("xx<key>yy", a content coding named
 * so) was missed when the text was split at separators and only whole pieces compared. So the
 * text's long pieces are indexed (a suffix automaton: every substring, built in one pass) and
 * each long piece of the secret is looked up in it: the text's length to build, the secret's to
 * search, never their product (a redaction that was quadratic held the host's thread 11 s).
 */
export function laterWordsIn(secret: string, from: number, text: string, counted: WordSearchSteps = { steps: 0 }): string[] | null {
  const pieces = text.toLowerCase().split(PIECE_SEPARATORS).filter((piece) => piece.length >= MIN_REDACTED_WORD_LENGTH);
  if (pieces.length === 0) return [];
  if (pieces.reduce((total, piece) => total + piece.length + 1, 0) > LATER_WORDS_TEXT_CHARS) return null;
  const indexed = pieces.join("\n"); // A separator: no piece of the secret holds one, so none spans two pieces.
  const index = new SubstringIndex(indexed, counted);
  const found = new Set<string>();
  // The found words together, which become forms to mask (see echoedForms): a secret made of many
  // different pieces of a text the server chose would make them far longer than the text. Past a
  // few times its length, masking it whole is the answer.
  let foundChars = 0;
  const budget = 4 * text.length + 1024;
  const keep = (word: string): boolean => {
    if (found.has(word)) return true;
    found.add(word);
    foundChars += word.length;
    return foundChars <= budget;
  };
  // Where the last word found ends: a piece before it is in that word (each character of the
  // secret is looked at once, however many pieces a word of it has).
  let wordEnd = from;
  // The pieces are found by a loop, not a regular expression: a piece of ten million characters
  // (a classified body of one long word) overflowed the expression's backtracking stack, and the
  // RangeError ended the evaluation, which told the script how long the secret was.
  for (let at = from; at < secret.length; ) {
    if (separatesPieces(secret.charCodeAt(at))) {
      at++;
      continue;
    }
    const pieceStart = at;
    while (at < secret.length && !separatesPieces(secret.charCodeAt(at))) at++;
    const length = at - pieceStart;
    counted.steps += length;
    if (length < MIN_REDACTED_WORD_LENGTH || length > text.length) continue;
    const piece = secret.slice(pieceStart, at);
    if (!index.holds(piece.toLowerCase())) continue;
    if (!keep(piece)) return null;
    if (pieceStart < wordEnd) continue;
    let start = pieceStart;
    while (start > wordEnd && !WORD_END.test(secret[start - 1]!)) start--;
    let end = at;
    while (end < secret.length && !WORD_END.test(secret[end]!)) end++;
    counted.steps += end - start;
    wordEnd = end;
    if (end - start <= text.length && !keep(secret.slice(start, end))) return null;
  }
  return [...found];
}

/**
 * Every substring of a text, as its suffix automaton (Blumer et al.): built in one pass, with at
 * most two states and three edges a character, and a string is looked up in as many steps as it
 * has characters. Edges in an EdgeTable; each state's edges also listed, by code unit, for the
 * copy a split makes of them.
 */
class SubstringIndex {
  private readonly edges = new EdgeTable();
  private length: Int32Array;
  private link: Int32Array;
  /** Each state's first listed edge (-1: none); edgeUnit and edgeNext hold the lists. */
  private firstEdge: Int32Array;
  private edgeUnit = new Uint16Array(1024);
  private edgeNext = new Int32Array(1024);
  private edgeCount = 0;
  private states = 1;

  constructor(text: string, counted: WordSearchSteps) {
    const capacity = 2 * text.length + 2;
    this.length = new Int32Array(capacity);
    this.link = new Int32Array(capacity);
    this.firstEdge = new Int32Array(capacity).fill(-1);
    this.link[0] = -1;
    let last = 0;
    for (let i = 0; i < text.length; i++) {
      const unit = text.charCodeAt(i);
      const current = this.states++;
      this.length[current] = this.length[last]! + 1;
      let state = last;
      while (state !== -1 && this.edges.get(state, unit) === -1) {
        this.addEdge(state, unit, current);
        state = this.link[state]!;
        counted.steps++;
      }
      if (state === -1) {
        this.link[current] = 0;
      } else {
        const next = this.edges.get(state, unit);
        if (this.length[state]! + 1 === this.length[next]) {
          this.link[current] = next;
        } else {
          const clone = this.states++;
          this.length[clone] = this.length[state]! + 1;
          this.link[clone] = this.link[next]!;
          for (let edge = this.firstEdge[next]!; edge !== -1; edge = this.edgeNext[edge]!) {
            this.addEdge(clone, this.edgeUnit[edge]!, this.edges.get(next, this.edgeUnit[edge]!));
            counted.steps++;
          }
          while (state !== -1 && this.edges.get(state, unit) === next) {
            this.edges.set(state, unit, clone);
            state = this.link[state]!;
            counted.steps++;
          }
          this.link[next] = clone;
          this.link[current] = clone;
        }
      }
      last = current;
    }
  }

  private addEdge(state: number, unit: number, target: number): void {
    this.edges.add(state, unit, target);
    if (this.edgeCount === this.edgeUnit.length) {
      const units = new Uint16Array(this.edgeCount * 2);
      units.set(this.edgeUnit);
      this.edgeUnit = units;
      const next = new Int32Array(this.edgeCount * 2);
      next.set(this.edgeNext);
      this.edgeNext = next;
    }
    this.edgeUnit[this.edgeCount] = unit;
    this.edgeNext[this.edgeCount] = this.firstEdge[state]!;
    this.firstEdge[state] = this.edgeCount++;
  }

  /** Whether the text holds `piece`. */
  holds(piece: string): boolean {
    let state = 0;
    for (let i = 0; i < piece.length && state !== -1; i++) state = this.edges.get(state, piece.charCodeAt(i));
    return state !== -1;
  }
}

/**
 * The automaton's edges: (node, code unit) → child, in open addressing over typed arrays. A
 * Map keyed by node × 0x10000 + unit held its keys as heap numbers past 32,768 nodes (the
 * small-integer range), and a long classified body makes a million nodes (its fifteen forms,
 * each a path as long as the body): on a 1 MiB answer the Map cost about 40% more time.
 */
class EdgeTable {
  private nodes = new Int32Array(1024);
  private units = new Uint16Array(1024);
  /** 0: an empty slot (the root is never a child). */
  private children = new Int32Array(1024);
  private mask = 1023;
  private size = 0;

  private slot(node: number, unit: number): number {
    let hash = Math.imul(node, 0x9e3779b1) ^ Math.imul(unit + 1, 0x85ebca77);
    hash ^= hash >>> 15;
    return hash & this.mask;
  }

  /** The child of `node` by `unit`, or -1. */
  get(node: number, unit: number): number {
    for (let at = this.slot(node, unit); ; at = (at + 1) & this.mask) {
      const child = this.children[at]!;
      if (child === 0) return -1;
      if (this.nodes[at] === node && this.units[at] === unit) return child;
    }
  }

  /** Points an edge that is there at another child. */
  set(node: number, unit: number, child: number): void {
    for (let at = this.slot(node, unit); ; at = (at + 1) & this.mask) {
      if (this.nodes[at] === node && this.units[at] === unit && this.children[at] !== 0) {
        this.children[at] = child;
        return;
      }
    }
  }

  /** Adds an edge that is not there yet. */
  add(node: number, unit: number, child: number): void {
    if ((this.size + 1) * 2 > this.mask + 1) this.grow();
    let at = this.slot(node, unit);
    while (this.children[at] !== 0) at = (at + 1) & this.mask;
    this.nodes[at] = node;
    this.units[at] = unit;
    this.children[at] = child;
    this.size++;
  }

  private grow(): void {
    const { nodes, units, children } = this;
    const capacity = (this.mask + 1) * 2;
    this.nodes = new Int32Array(capacity);
    this.units = new Uint16Array(capacity);
    this.children = new Int32Array(capacity);
    this.mask = capacity - 1;
    this.size = 0;
    for (let at = 0; at < children.length; at++) if (children[at] !== 0) this.add(nodes[at]!, units[at]!, children[at]!);
  }
}

/**
 * Forms longer than this are not put in the automaton but searched for each on its own
 * (LongForm): a long classified body's fifteen forms made the automaton a path as long as the
 * body for each, a million nodes to build for every answer, most of a redaction's time.
 */
const AUTOMATON_FORM_CHARS = 256;
/**
 * The most characters of long forms put together in an automaton of their own (see
 * FormMatcher.longFinds), the shortest first: a request's secret headers (64 KiB at most) make
 * about 2 Mi characters of forms at most, a long classified body's forms many times its length.
 */
const LONG_AUTOMATON_CHARS = 4 * 1024 * 1024;
/**
 * What a character of a long form costs to put in an automaton, against what a character of a
 * text costs a pass of one long form over it (LongForm.scan): about 1 µs against 10 ns here.
 */
const LONG_BUILD_COST = 100;

/**
 * One long form, found by a pass of its own over the text (Knuth-Morris-Pratt): linear in the
 * text whatever the form's length or repetitions (a search that checked the whole form at each
 * place its start matched cost body × answer on a periodic body and a periodic answer).
 */
class LongForm {
  /** For each prefix of the form, the length of its longest proper prefix that is also its suffix. */
  private readonly border: Int32Array;

  constructor(
    private readonly form: string,
    private readonly whole: boolean,
  ) {
    this.border = new Int32Array(form.length);
    for (let i = 1, k = 0; i < form.length; i++) {
      const code = form.charCodeAt(i);
      while (k > 0 && form.charCodeAt(k) !== code) k = this.border[k - 1]!;
      if (form.charCodeAt(k) === code) k++;
      this.border[i] = k;
    }
  }

  /** Adds to `found` each place the form is whole in `text`, and (when `cut`) the text's end when it stops partway into the form. */
  scan(text: string, found: Array<[number, number]>, cut: boolean): void {
    const { form, border } = this;
    const length = form.length;
    let matched = 0;
    let atEnd = 0;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      while (matched > 0 && form.charCodeAt(matched) !== code) matched = border[matched - 1]!;
      if (form.charCodeAt(matched) === code) matched++;
      if (matched === length) {
        if (this.whole) found.push([i + 1 - length, i + 1]);
        if (i === text.length - 1) atEnd = length;
        matched = border[length - 1]!;
      }
    }
    atEnd = Math.max(atEnd, matched);
    if (cut && atEnd >= MIN_REDACTED_LENGTH) found.push([text.length - atEnd, text.length]);
  }
}

/** Code units the root's own table covers (Latin-1: what most texts are made of). */
const ROOT_TABLE_UNITS = 0x100;

/**
 * An Aho-Corasick automaton over UTF-16 code units: the forms, found in one pass; a form longer
 * than `longFrom` is searched for on its own (LongForm). Exported for its differential test.
 */
export class FormMatcher {
  /** The long forms, each once: whole if any of its adds was. */
  private readonly longForms = new Map<string, boolean>();
  /** The long forms, shortest first, each with its pass (see LongForm). */
  private long: Array<{ form: string; whole: boolean; pass: LongForm }> = [];
  /** Their characters, all together. */
  private longChars = 0;
  /** The long forms' own automaton and those left out of it, made on first need (see longFinds). */
  private longAutomaton: { matcher: FormMatcher; rest: LongForm[] } | undefined;

  constructor(private readonly longFrom = AUTOMATON_FORM_CHARS) {}

  private readonly edges = new EdgeTable();
  private readonly depth: number[] = [0];
  private readonly parent: number[] = [0];
  private readonly unit: number[] = [0];
  /** Length of the longest whole form ending at a node (its own or by its fail links); 0: none. */
  private readonly longest: number[] = [0];
  private fail: Int32Array = new Int32Array(1);
  /**
   * The root's children by code unit below ROOT_TABLE_UNITS (0: none): most of a text is read at
   * the root, so this is the fast path. Not a table of all 65,536 units: a matcher is made for
   * each text masked, and allocating and zeroing 256 KB was about half of a short text's masking
   * (about 86 of 160 µs); a unit past the table is looked up among the root's edges.
   */
  private readonly rootNext = new Int32Array(ROOT_TABLE_UNITS);
  /**
   * Whether a form starts with a unit past the table. Most do not (an ASCII key): then a unit past
   * it leads nowhere from the root without a look-up, which doubled the time of a text in CJK
   * (4 Mi characters with an ASCII secret: 28 ms with the whole table, 45-57 ms looking each up).
   */
  private wideRoot = false;

  /** The root's child by `code`, or 0 (the root) for none. */
  private rootChild(code: number): number {
    if (code < ROOT_TABLE_UNITS) return this.rootNext[code]!;
    if (!this.wideRoot) return 0;
    const child = this.edges.get(0, code);
    return child === -1 ? 0 : child;
  }

  add(form: string, whole: boolean): void {
    if (form.length > this.longFrom) {
      this.longForms.set(form, whole || this.longForms.get(form) === true);
      return;
    }
    let node = 0;
    for (let i = 0; i < form.length; i++) {
      const code = form.charCodeAt(i);
      let child = this.edges.get(node, code);
      if (child === -1) {
        child = this.depth.length;
        this.edges.add(node, code, child);
        this.depth.push(i + 1);
        this.parent.push(node);
        this.unit.push(code);
        this.longest.push(0);
        if (node === 0 && code < ROOT_TABLE_UNITS) this.rootNext[code] = child;
        else if (node === 0) this.wideRoot = true;
      }
      node = child;
    }
    if (whole) this.longest[node] = form.length;
  }

  /** Fail links, breadth first (nodes by depth), and the longest whole form at each node. */
  build(): void {
    this.long = [...this.longForms].sort(([a], [b]) => a.length - b.length).map(([form, whole]) => ({ form, whole, pass: new LongForm(form, whole) }));
    this.longChars = this.long.reduce((total, { form }) => total + form.length, 0);
    const count = this.depth.length;
    this.fail = new Int32Array(count);
    // Nodes by depth (a counting sort): a node's fail link is decided after its parent's.
    let deepest = 0;
    for (const d of this.depth) deepest = Math.max(deepest, d);
    const starts = new Int32Array(deepest + 2);
    for (const d of this.depth) starts[d + 1]!++;
    for (let d = 1; d < starts.length; d++) starts[d]! += starts[d - 1]!;
    const byDepth = new Int32Array(count);
    for (let node = 0; node < count; node++) byDepth[starts[this.depth[node]!]!++] = node;
    for (const node of byDepth) {
      if (this.depth[node]! <= 1) continue; // The root and its children fail to the root.
      const code = this.unit[node]!;
      let state = this.fail[this.parent[node]!]!;
      let next = this.edges.get(state, code);
      while (next === -1 && state !== 0) {
        state = this.fail[state]!;
        next = this.edges.get(state, code);
      }
      const target = next === -1 ? 0 : next;
      this.fail[node] = target;
      if (this.longest[node] === 0) this.longest[node] = this.longest[target]!;
    }
  }

  /**
   * The ranges of `text` to mask: every whole form found (overlaps merged), and, when the text
   * was `cut` (see redact), its end when it stops partway into a form (at least
   * MIN_REDACTED_LENGTH characters of it).
   */
  ranges(text: string, cut = true): Array<[number, number]> {
    const ranges: Array<[number, number]> = [];
    const cover = (start: number, end: number): void => {
      while (ranges.length > 0 && start <= ranges[ranges.length - 1]![1]) start = Math.min(start, ranges.pop()![0]);
      ranges.push([start, end]);
    };
    let state = 0;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (state === 0) {
        state = this.rootChild(code);
        continue; // A form is at least MIN_REDACTED_LENGTH long: none ends at its first unit.
      }
      let next = this.edges.get(state, code);
      while (next === -1 && state !== 0) {
        state = this.fail[state]!;
        next = this.edges.get(state, code);
      }
      state = next === -1 ? this.rootChild(code) : next;
      const found = this.longest[state]!;
      if (found >= MIN_REDACTED_LENGTH) cover(i + 1 - found, i + 1);
    }
    if (cut && this.depth[state]! >= MIN_REDACTED_LENGTH) cover(text.length - this.depth[state]!, text.length);
    if (this.long.length === 0) return ranges;
    // The long forms' finds, merged with the automaton's: in order of start, overlapping or touching ones joined.
    const all = [...ranges];
    this.longFinds(text, all, cut);
    return joined(all);
  }

  /**
   * Adds the long forms' finds in `text` to `found`: a pass for each (LongForm), or, where those
   * passes together would cost more than putting the forms in an automaton of their own, that
   * automaton (made once, kept), and a pass for each form it leaves out (past LONG_AUTOMATON_CHARS).
   * A pass for each alone cost their number times the text: a script's 250 secret headers of 260
   * characters made some 4,700 long forms, and a 4 MiB answer held the host's main thread for minutes.
   */
  private longFinds(text: string, found: Array<[number, number]>, cut: boolean): void {
    if (this.longAutomaton === undefined && this.long.length * text.length <= LONG_BUILD_COST * Math.min(this.longChars, LONG_AUTOMATON_CHARS)) {
      for (const { pass } of this.long) pass.scan(text, found, cut);
      return;
    }
    if (this.longAutomaton === undefined) {
      const matcher = new FormMatcher(Number.POSITIVE_INFINITY);
      const rest: LongForm[] = [];
      let held = 0;
      for (const { form, whole, pass } of this.long) {
        if (held + form.length > LONG_AUTOMATON_CHARS) {
          rest.push(pass);
          continue;
        }
        matcher.add(form, whole);
        held += form.length;
      }
      matcher.build();
      this.longAutomaton = { matcher, rest };
    }
    const { matcher, rest } = this.longAutomaton;
    for (const range of matcher.ranges(text, cut)) found.push(range);
    for (const pass of rest) pass.scan(text, found, cut);
  }
}

/** Where `texts` occur in `text`, as [start, end) spans. */
function spansOf(text: string, texts: readonly string[]): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  for (const known of new Set(texts)) {
    if (known.length === 0) continue;
    for (let at = text.indexOf(known); at !== -1; at = text.indexOf(known, at + 1)) spans.push([at, at + known.length]);
  }
  return spans;
}

/**
 * The named character references of ASCII characters, by their names in lower case (matched
 * case aside): XML's five, and HTML5's for punctuation, which PHP's htmlentities with
 * ENT_HTML5 writes ("a+b." is "a&plus;b&period;"; "/" is "&sol;", "=" "&equals;", "_" "&lowbar;").
 */
export const NAMED_REFERENCES: Readonly<Record<string, string>> = {
  amp: "&", lt: "<", gt: ">", quot: '"', apos: "'",
  tab: "\t", newline: "\n", excl: "!", num: "#", dollar: "$", percnt: "%", lpar: "(", rpar: ")", ast: "*", midast: "*",
  plus: "+", comma: ",", period: ".", sol: "/", colon: ":", semi: ";", equals: "=", quest: "?", commat: "@",
  lsqb: "[", lbrack: "[", bsol: "\\", rsqb: "]", rbrack: "]", hat: "^", lowbar: "_", underbar: "_", grave: "`",
  diacriticalgrave: "`", lcub: "{", lbrace: "{", verbar: "|", vert: "|", verticalline: "|", rcub: "}", rbrace: "}",
};
/** A percent-escape, an HTML character reference (hex, decimal or named), a JSON \u escape, or "\/". */
const ESCAPE = new RegExp(
  `%([0-7][0-9a-f])|&#x0*([0-9a-f]{1,2});|&#0*(\\d{1,3});|&(${Object.keys(NAMED_REFERENCES).join("|")});|\\\\u00([0-7][0-9a-f])|\\\\(\\/)`,
  "gi",
);

/** The ASCII character an escape (an ESCAPE match) stands for, or null for one past ASCII. */
function unescaped(match: RegExpExecArray): string | null {
  const [, percent, hex, decimal, named, json, slash] = match;
  const code = percent ?? hex ?? json;
  if (code !== undefined) {
    const value = parseInt(code, 16);
    return value < 0x80 ? String.fromCharCode(value) : null;
  }
  if (decimal !== undefined) return Number(decimal) < 0x80 ? String.fromCharCode(Number(decimal)) : null;
  return named !== undefined ? (NAMED_REFERENCES[named.toLowerCase()] ?? null) : (slash ?? null);
}

/**
 * A backslash escape of JavaScript ("\x2F") or CSS ("\2F ", a hex code of up to six digits and
 * maybe one white space after it); "\xE4" is also how Ruby's inspect and Python's bytes repr show
 * a byte past ASCII, which in a header is the character of that code (a header goes out one byte
 * per character, latin-1). Decoded in a pass of its own (see BACKSLASH_DECODING): a
 * backslash and hex digits are also what a JSON or JavaScript text holds around the escapes
 * ESCAPE undoes ("\b", "\f", a backslash of the value itself), and read as CSS in the same pass
 * they would change what that pass finds.
 */
const BACKSLASH_ESCAPE = /\\x([0-9a-f]{2})|\\([0-9a-f]{1,6})(?:\r\n|[ \t\n\r\f])?/gi;

/**
 * The character a BACKSLASH_ESCAPE match stands for (its code point: "\xE4" is "ä", as in
 * JavaScript), or null for no character (a surrogate, or past U+10FFFF). A security review had a
 * server show a header as Ruby's inspect does (a Rails error page lists them so): a secret with
 * one "ä" came back as "p\xE4ssw\xF6rd-<canary>", the rest of it in plaintext.
 */
function backslashUnescaped(match: RegExpExecArray): string | null {
  const value = parseInt(match[1] ?? match[2]!, 16);
  return value > 0x10ffff || (value >= 0xd800 && value <= 0xdfff) ? null : String.fromCodePoint(value);
}

/** ASCII punctuation and the space, as a character class's ranges: a backslash before one stands for it (see JSON_ESCAPE). */
export const STANDS_FOR_ITSELF = "\\x20-\\x2f\\x3a-\\x40\\x5b-\\x60\\x7b-\\x7e";

/**
 * A JSON string escape: a short one (\", \\, \/, \n…) or \u and four hex digits; and a backslash
 * before any other ASCII punctuation or a space, which stands for that character, as JavaScript
 * and Ruby read it: Ruby's inspect writes "#{", "#$" and "#@" as "\#{", "\#$" and "\#@", PHP's
 * var_export (and Perl's Data::Dumper, Python's repr of a string with both quotes) "'" as "\'", a
 * shell's `printf %q` "\ " and "\$", Lucene's query escaping "\+" and "\!". A security review's
 * Ruby echo gave "Xk9\#$vQ2\#{mZ7…}" back for a secret header "Xk9#$vQ2#{mZ7…}", whole, and a
 * var_export a passphrase of short words between quotes, none of them a form.
 */
const JSON_ESCAPE = new RegExp(`\\\\([${STANDS_FOR_ITSELF}bfnrt])|\\\\u([0-9a-f]{4})`, "gi");
const JSON_SHORT_UNESCAPES: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

/** The character a JSON_ESCAPE match stands for (a backslash before punctuation: that punctuation). */
function jsonUnescaped(match: RegExpExecArray): string | null {
  const [, short, unit] = match;
  return short !== undefined ? (JSON_SHORT_UNESCAPES[short.toLowerCase()] ?? short) : String.fromCharCode(parseInt(unit!, 16));
}

/** An escape syntax: its pattern, and what a match of it stands for (null: left as it is). */
interface EscapeDecoding {
  pattern: RegExp;
  decode: (match: RegExpExecArray) => string | null;
  /** How many times its escapes are undone, each pass over what the one before left. */
  levels: number;
}

/**
 * How many times references and percent-escapes are undone, each pass over what the one before
 * left: a text escaped twice ("&amp;#x2F;" for "/", an html_attr escape HTML-escaped again, as a
 * page that escapes what it was handed escaped does; "\u0026#x2F;", one JSON-escaped by ASP.NET
 * Core) held "&#x2F;" once decoded, no form, and a secret with a "/" or "+" (an AWS secret key)
 * came back whole in plaintext between such escapes.
 */
const REFERENCE_LEVELS = 3;

/**
 * Percent-escapes and character references, JSON \u escapes. Encoders differ in which
 * characters they escape and how: Python's urllib.parse.quote keeps "/" and escapes "+" and "=",
 * Go's url.PathEscape the other way round, .NET's HttpUtility.UrlEncode writes lower-case hex;
 * Twig's html_attr escapes every character but letters, digits and ",.-_" as "&#x2F;", OWASP
 * ESAPI as "&#x2f;", PHP's htmlspecialchars "'" as "&#039;". Security reviews had a server build
 * a link with quote(), and a page with Twig's html_attr, from a secret header shaped like an AWS
 * secret access key ("…/…+…="): the answers held it as ".../...%2B...%3D" and
 * "...&#x2F;...&#x2B;...&#x3D;", no form redaction knew, and the script decoded and printed it.
 */
const REFERENCE_DECODING: EscapeDecoding = { pattern: ESCAPE, decode: unescaped, levels: REFERENCE_LEVELS };
/**
 * JavaScript's and CSS's backslash escapes, as Laminas (Zend) Escaper's escapeJs ("\x2F") and
 * escapeCss ("\2F "), Twig's css strategy and OWASP ESAPI's encodeForCSS write every character
 * but letters and digits: a security review read a secret header from a page that put it in a
 * script or a style that way.
 */
const BACKSLASH_DECODING: EscapeDecoding = { pattern: BACKSLASH_ESCAPE, decode: backslashUnescaped, levels: 1 };
/**
 * JSON's string escapes: JSON kept as a string inside JSON (a log line's message, a queued
 * or relayed request) escapes a value twice, and undone once, the text holds the value's JSON
 * form, which redaction looks for. A security review read a password with backslashes (as a
 * Windows account's "CORP\svc-backup" has) or quotes from such an echo, each of its words
 * escaped twice and none of them a form. Its own pass: it reads "\\" as one character, and so
 * the escapes the other passes find after a backslash another way. Undone twice: a string another encoder escaped with a backslash (Ruby's inspect, PHP's
 * var_export) kept inside JSON has escapes of escapes ("\\#{", "\\'"), which no form holds once undone.
 */
const JSON_DECODING: EscapeDecoding = { pattern: JSON_ESCAPE, decode: jsonUnescaped, levels: 2 };

/**
 * The text with each escape of an ASCII character that `decoding` knows decoded ("%2B", "%2b",
 * "&#x2B;", "&#43;", "&#043;", "&plus;", "\u002b" are "+"), and where each of its characters
 * starts in the text (one more: the text's end); null when it has none. Looking for the forms in
 * the decoded text too finds the value however it was escaped.
 */
function escapesDecoded(text: string, decoding: EscapeDecoding): { decoded: string; starts: Int32Array } | null {
  const escape = new RegExp(decoding.pattern.source, "gi");
  let starts: Int32Array | null = null; // Made at the first escape: most texts have none.
  const parts: string[] = [];
  let at = 0;
  let last = 0;
  for (let match = escape.exec(text); match !== null; match = escape.exec(text)) {
    const character = decoding.decode(match);
    if (character === null) continue; // Left as it is, with the text around it.
    starts ??= new Int32Array(text.length + 1);
    for (let i = last; i < match.index; i++) starts[at++] = i;
    parts.push(text.slice(last, match.index), character);
    starts[at++] = match.index;
    last = match.index + match[0].length;
  }
  if (starts === null) return null;
  for (let i = last; i < text.length; i++) starts[at++] = i;
  parts.push(text.slice(last));
  starts[at] = text.length;
  return { decoded: parts.join(""), starts: starts.subarray(0, at + 1) };
}

/** The three escape syntaxes redact decodes a text by, each in a pass of its own. */
const DECODINGS: readonly EscapeDecoding[] = [REFERENCE_DECODING, BACKSLASH_DECODING, JSON_DECODING];
/** Each decoding's pattern, matching only where it is put (sticky). */
const ESCAPES_AT = DECODINGS.map(({ pattern, decode }) => ({ at: new RegExp(pattern.source, "iy"), decode }));

/**
 * The escapes that start at `at` in `text`, in any of the syntaxes redact decodes: each as what
 * it stands for and where it ends. A pass of redact reads the text from its start and may read
 * the same place otherwise (as part of an escape before it), so these are the escapes a pass can
 * find there, not the one it does.
 */
export function escapesAt(text: string, at: number): Array<{ decoded: string; end: number }> {
  const found: Array<{ decoded: string; end: number }> = [];
  for (const escape of ESCAPES_AT) {
    escape.at.lastIndex = at;
    const match = escape.at.exec(text);
    if (match === null) continue;
    const decoded = escape.decode(match);
    if (decoded !== null) found.push({ decoded, end: at + match[0].length });
  }
  return found;
}

/** Ranges in order of start, overlapping or touching ones joined. */
function joined(ranges: Array<[number, number]>): Array<[number, number]> {
  ranges.sort((a, b) => a[0] - b[0]);
  const out: Array<[number, number]> = [];
  for (const [start, end] of ranges) {
    const last = out[out.length - 1];
    if (last !== undefined && start <= last[1]) last[1] = Math.max(last[1], end);
    else out.push([start, end]);
  }
  return out;
}

/** What stands for a text laterWordsIn could not search (see there): nothing of it is shown. */
const TEXT_NOT_SEARCHED = "[redacted: a text tacit could not search for the words of a classified value the request carried]";

/**
 * Every occurrence of a secret's forms, replaced; and a text that ends partway into one, when
 * it may have been cut there (`cut`: an answer cut at the size limit), has that partial secret
 * replaced too. An answer tacit did not cut is redacted with `cut` false: it ends where its
 * server ended it, often with the script's own text (a note or a query it sent, given back), and
 * a mask on an end that begins a secret told a script its guess of the secret's first
 * characters was right, and so the secret, character by character, from a server that never
 * echoed it. `shown`: texts the script chose itself (its URL's host, say), which an error
 * message may quote: a form found wholly inside one of them is left as it is, since a mask there
 * would tell the script that its text was a form of the secret (a guess confirmed). One that
 * reaches past them is masked. `alsoMasked`: ranges of the text masked for another secret in the
 * same pass (the host's key: see HostSecrets.inServerTextWith). `leaveOutEnd`: the text is an
 * answer a script sees, and when `cut`, its last characters are left out unless masked (see unmaskedEnd).
 */
export function redact(
  text: string,
  secrets: readonly string[],
  shown: readonly string[] = [],
  cut = true,
  alsoMasked: ReadonlyArray<readonly [number, number]> = [],
  leaveOutEnd = false,
): string {
  const found = formRanges(text, secrets, cut);
  if (found === null) return TEXT_NOT_SEARCHED;
  const spans = spansOf(text, shown);
  const held = joined(alsoMasked.map(([start, end]): [number, number] => [start, end]));
  // A find that reaches into a range masked for another secret (the host's key) without holding
  // it whole is left to that range: masked beyond it, it told a script whose secret was a guess
  // of the key's last characters and the text after it whether the guess was right.
  const kept = found.filter(
    ([start, end]) => !spans.some(([s, e]) => s <= start && end <= e) && held.every(([s, e]) => end <= s || e <= start || (start <= s && e <= end)),
  );
  const ranges = held.length === 0 ? kept : joined([...kept, ...held]);
  const shownEnd = leaveOutEnd && cut && secrets.some((secret) => secret.length > 0) ? unmaskedEnd(text, ranges) : text.length;
  let result = "";
  let from = 0;
  for (const [start, end] of ranges) {
    result += text.slice(from, start) + REDACTED;
    from = end;
  }
  return ranges.length === 0 && shownEnd === text.length ? text : result + text.slice(from, Math.max(from, shownEnd));
}

/**
 * Where a cut text a script sees ends (see redact's `leaveOutEnd`): where it ends when a mask
 * reaches its end; else CUT_END_CHARS before that, or at the last mask if it ends later, whatever
 * those characters are. A partial form shorter than MIN_REDACTED_LENGTH is not masked (a mask
 * there told a script whether its own text, given back last, began a secret, one character at a
 * time), and left in, it was a secret's first characters: a script that padded an echo so that
 * the size limit fell one to three characters into a secret header read them, and sending the
 * secret's every suffix as the header (a map's slice(i)) read all of it, a character a request.
 * Left out whether or not they begin a secret, they tell nothing of one.
 */
function unmaskedEnd(text: string, ranges: ReadonlyArray<readonly [number, number]>): number {
  const lastMask = ranges.at(-1)?.[1] ?? 0;
  if (lastMask >= text.length) return text.length;
  let end = Math.max(lastMask, text.length - CUT_END_CHARS);
  // Not inside a surrogate pair: those characters lie before any partial form, and a lone half is no character.
  const code = text.charCodeAt(end - 1);
  if (end > lastMask && code >= 0xd800 && code <= 0xdbff) end--;
  return end;
}

/**
 * Where redact finds the forms of `secrets` in `text` (see there), in order, overlapping or
 * touching ones joined; null when the text cannot be searched for them (redact then masks it whole).
 */
export function formRanges(text: string, secrets: readonly string[], cut: boolean): Array<[number, number]> | null {
  return searchRanges(formSearchFor(secrets, text), text, cut);
}

/** Where `search` finds its forms in `text` (see formRanges). */
function searchRanges(search: FormSearch | null, text: string, cut: boolean): Array<[number, number]> | null {
  if (search === null) return null;
  if (search === NO_FORMS) return [];
  const { matcher, longest } = search;
  const ranges = matcherRanges(matcher, text, cut);
  return cut ? joined([...ranges, ...endsBeforeEscapeBegun(matcher, text, longest)]) : ranges;
}

/**
 * formRanges with a search made for `text`'s own length (its room), never one kept: what a search
 * kept for the secrets must find. Exported for the differential test.
 */
export function formRangesOwnRoom(text: string, secrets: readonly string[], cut: boolean): Array<[number, number]> | null {
  return searchRanges(madeSearch(secrets, text, text.length), text, cut);
}

/** The forms' automaton and the longest form it holds; NO_FORMS where no form is long enough to be masked. */
type FormSearch = { matcher: FormMatcher; longest: number } | typeof NO_FORMS;
const NO_FORMS = "none";

/** The searches made for an array of secrets (its strings as they were then), by the room a text gives its forms. */
interface MadeSearches {
  secrets: readonly string[];
  byRoom: Map<number, FormSearch>;
  /** The longest value whose forms are looked for (see valueRoomOf): from it on, a text's length changes no form. */
  valueRoom: number;
}

/**
 * Searches made for each array of secrets, kept while the array lives (a HostSecrets's, for the whole
 * evaluation or request). Made for each text, the automaton cost a short text most of its masking: about
 * 0.85 ms for one key, at every error message, Location and header value tacit quotes.
 */
const madeSearches = new WeakMap<readonly string[], MadeSearches>();
/** Rooms kept per array: each text shorter than a value has one of its own. */
const ROOMS_KEPT = 64;

/**
 * The search for the forms of `secrets` a text of `text`'s length may hold; null when the text
 * cannot be searched for them. Its forms depend on the text only by its length (the room it gives
 * them: see echoedForms), and on that only while the text is shorter than a value (whose forms
 * are then those of its start). From there on the forms are the same strings whatever the length:
 * only those longer than the text are marked not whole, and the text cannot hold them whole (their
 * starts, at a cut end, are the same). So one search, made with room for everything, serves every
 * such text: one made for each length (they were kept by the text's length up to the longest
 * form) cost what the forms do whatever the text, about 1.5-2 s for a 100-byte answer with 800
 * secret headers of 80 characters, and again for each hop of a redirect chain whose URLs differ
 * in length. For a secret longer than WORD_SCAN_CHARS, whose later words are looked for in the
 * text itself, the search is made afresh for each text.
 */
function formSearchFor(secrets: readonly string[], text: string): FormSearch | null {
  if (secrets.some((secret) => secret.length > WORD_SCAN_CHARS)) return madeSearch(secrets, text, text.length);
  let made = madeSearches.get(secrets);
  // The same array changed since (none is, but a stale search would leave a secret unmasked): made anew.
  if (made === undefined || made.secrets.length !== secrets.length || made.secrets.some((secret, i) => secret !== secrets[i])) {
    made = { secrets: [...secrets], byRoom: new Map(), valueRoom: valueRoomOf(secrets) };
    madeSearches.set(secrets, made);
  }
  const room = text.length >= made.valueRoom ? Number.POSITIVE_INFINITY : text.length;
  let search = made.byRoom.get(room);
  if (search === undefined) {
    search = madeSearch(secrets, text, room) ?? NO_FORMS;
    // The full room's search is the one most texts use: kept when the others are let go.
    const full = made.byRoom.get(Number.POSITIVE_INFINITY);
    if (made.byRoom.size >= ROOMS_KEPT) made.byRoom.clear();
    if (full !== undefined) made.byRoom.set(Number.POSITIVE_INFINITY, full);
    made.byRoom.set(room, search);
  }
  return search;
}

/**
 * The length of the longest value of `secrets` whose forms are looked for (see echoedForms: the
 * values cut to a text's room are these), or 0 for none. No secret here is long enough for its
 * later words to be looked for in a text.
 */
function valueRoomOf(secrets: readonly string[]): number {
  let longest = 0;
  for (const secret of secrets) for (const value of [...valuesOf(secret, secret), ...hexValuesOf(secret)]) longest = Math.max(longest, value.length);
  return longest;
}

/** A search for the forms of `secrets` a text of `room` characters may hold (`text` itself is searched for later words); null when the text cannot be searched for them. */
function madeSearch(secrets: readonly string[], text: string, room: number): FormSearch | null {
  const matcher = new FormMatcher();
  let any = false;
  let longest = 0;
  for (const secret of secrets) {
    const forms = echoedForms(secret, text, room);
    if (forms === null) return null;
    for (const { form, whole } of forms) {
      if (form.length < MIN_REDACTED_LENGTH) continue;
      matcher.add(form, whole);
      any = true;
      longest = Math.max(longest, form.length);
    }
  }
  if (!any) return NO_FORMS;
  matcher.build();
  return { matcher, longest };
}

/** Where `matcher` finds its forms in `text`: as it is, and with each decoding's escapes undone (see DECODINGS). */
function matcherRanges(matcher: FormMatcher, text: string, cut: boolean): Array<[number, number]> {
  let ranges = matcher.ranges(text, cut);
  for (const decoding of DECODINGS) {
    let current = text;
    /** Where each character of `current` starts in `text` (null: `current` is `text`). */
    let places: Int32Array | null = null;
    for (let level = 0; level < decoding.levels; level++) {
      const decoded = escapesDecoded(current, decoding);
      if (decoded === null) break;
      const starts: Int32Array = places === null ? decoded.starts : decoded.starts.map((at) => places![at]!);
      const more = matcher.ranges(decoded.decoded, cut).map(([start, end]): [number, number] => [starts[start]!, starts[end]!]);
      if (more.length > 0) ranges = joined([...ranges, ...more]);
      current = decoded.decoded;
      places = starts;
    }
  }
  return ranges;
}

/**
 * The most characters an escape redact decodes takes for one character, as encoders write them: a
 * named reference ("&diacriticalgrave;", eighteen), a CSS escape padded to six digits ("\00002F ",
 * eight). (Decimal and hex references may be padded with any number of zeros: no encoder was found that does.)
 */
const LONGEST_ESCAPE_CHARS = Math.max(8, ...Object.keys(NAMED_REFERENCES).map((name) => `&${name};`.length));

/**
 * The most characters a partial form too short to mask (fewer than MIN_REDACTED_LENGTH characters,
 * each maybe escaped) and an escape cut partway take at a text's end: what an answer cut at the
 * size limit leaves out there when no mask reaches its end (see unmaskedEnd).
 */
export const CUT_END_CHARS = MIN_REDACTED_LENGTH * escapedChars() - 1;

/**
 * The most characters one character takes escaped as redact undoes escapes: the longest escape,
 * its start escaped again at each further level of references ("&amp;" is four characters more
 * than "&", as "%26" and "\u0026" are fewer).
 */
function escapedChars(): number {
  return LONGEST_ESCAPE_CHARS + 4 * (REFERENCE_LEVELS - 1);
}

/**
 * A proper beginning of an escape that a DECODINGS pass undoes, from where it is tried to the
 * text's end: what a cut leaves of an escape ("%2", "&#x2F", "&sol", "\u00", "\x2").
 */
const ESCAPE_BEGUN = /(?:%[0-9a-f]?|&(?:#(?:x0*[0-9a-f]{0,2}|0*\d{0,3})?|[a-z]{1,16})?|\\(?:u[0-9a-f]{0,3}|x[0-9a-f]?|[0-9a-f]{1,6})?)$/iy;

/**
 * Whether `text` from `at` to its end is an escape begun (ESCAPE_BEGUN), as it is or once the
 * references in it are undone, as redact undoes them, REFERENCE_LEVELS times over: "&amp;#x2" is
 * what a cut leaves of "&amp;#x2F;", a "/" escaped twice.
 */
function escapeBegunAt(text: string, at: number): boolean {
  const begun = new RegExp(ESCAPE_BEGUN.source, "iy");
  const isBegun = (part: string): boolean => {
    begun.lastIndex = 0;
    return begun.test(part);
  };
  let tail = text.slice(at);
  for (let level = 0; level <= REFERENCE_LEVELS; level++) {
    // Or begun, with an escape of its own end begun after it: "&#x2F%3" (of "&#x2F%3B"), once "%26%23x2F%3" is undone.
    const last = Math.max(tail.lastIndexOf("%"), tail.lastIndexOf("&"), tail.lastIndexOf("\\"));
    if (isBegun(tail) || (last > 0 && isBegun(tail.slice(last)) && isBegun(tail.slice(0, last)))) return true;
    const decoded = escapesDecoded(tail, REFERENCE_DECODING);
    if (decoded === null) return false;
    tail = decoded.decoded;
  }
  return false;
}

/**
 * The end of a cut `text` that is partway into a form once an escape the cut went through is set
 * aside: ranges from where such a partial form starts to the text's end. A cut inside an escape
 * ("…&#x2F" of "&#x2F;") leaves what no decoding undoes, and the partial form before it then ended
 * nowhere: an echo that escaped a secret's "/" as Twig's html_attr does, cut by a script's padding
 * in that escape, gave all of the secret before the "/" back unmasked. Looked for before each
 * place in the last characters where such a beginning starts, in a window as long as the longest
 * form with each of its characters escaped (a partial form is never longer).
 */
function endsBeforeEscapeBegun(matcher: FormMatcher, text: string, longest: number): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  for (let at = Math.max(0, text.length - escapedChars()); at < text.length; at++) {
    const unit = text[at];
    if (unit !== "%" && unit !== "&" && unit !== "\\") continue;
    if (!escapeBegunAt(text, at)) continue;
    const from = Math.max(0, at - (longest + 1) * escapedChars());
    const head = text.slice(from, at);
    for (const [start, end] of matcherRanges(matcher, head, true)) if (end === head.length) found.push([from + start, text.length]);
  }
  return found;
}
