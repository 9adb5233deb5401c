// Secrets of the host's own (the operator's LLM API key) never reach a script, whatever route
// they take back: a file that happens to contain one, a command's output (`ps` shows a
// command line, /proc shows an environment), an answer from a server. Every reply to the
// sandbox is scrubbed of them: in its JSON line (text anywhere in it), and in base64 payloads
// (bytes read from files) after decoding; each also as a UTF-16 file holds it (utf16Form), and
// in the other encodings encodedForms names (secret-forms.ts). A long random key cannot match by
// accident. What a server chose and tacit quotes, cut to a length (a Location, a model server's
// error answer), is masked before the cut and in more forms (inServerText), and so is an HTTP
// answer's body; a text tacit cut at a size limit ends before where a form of a secret could begin (cutText).

import type { RunnerConfig } from "./config.js";
import { base64Forms, encodedForms, utf16Form, wrappedFormRanges, wrappedSpan } from "./secret-forms.js";
import { FormPresence } from "./net/form-presence.js";
import { formRanges, REDACTED, redact, wholeForms } from "./net/redaction.js";
import { firstChars } from "./net/server-text.js";

/** The mask redaction of a request's secrets puts too: a cut keeps it whole (see firstChars). */
const MASK = REDACTED;
/**
 * The most characters the encoders an answer comes from commonly write one character as: "\u002F",
 * "&#x2F;" and "&#047;" are six, HTML5's "&equals;" and "&lowbar;" and a CSS escape padded to six
 * digits ("\00002F ") eight. (An escape padded with more zeros is longer: no encoder was found that writes one.)
 */
const ESCAPED_CHAR_CHARS = 8;
/** Shorter values are not scrubbed: they would match ordinary text. */
const MIN_SECRET_CHARS = 8;

export class HostSecrets {
  /** The secrets as given (what the search threads are handed to make their own). */
  private readonly given: string[];
  /** What is masked: each secret, its forms in the encodings secret-forms.ts names, and it lower- and upper-cased. */
  private readonly secrets: string[];
  private readonly inJson: string[];
  /** The base64 forms among `secrets`, looked for across line breaks too (see wrappedFormRanges). */
  private readonly base64: string[];
  /** See cutMargin: made on first use. */
  private cutMarginChars: number | undefined = undefined;
  /** What tells a text holding none of the forms inServerText masks; null: those cannot be known before the text (always masked). Made on first use. */
  private presence: FormPresence | null | undefined = undefined;

  /** The host's secrets under `config`: what every reply to a sandbox is scrubbed of. */
  static of(config: RunnerConfig): HostSecrets {
    return new HostSecrets([config.library.llm?.apiKey]);
  }

  constructor(secrets: ReadonlyArray<string | null | undefined>) {
    this.given = secrets.filter((s): s is string => typeof s === "string" && s.length >= MIN_SECRET_CHARS);
    const texts = [...this.given, ...this.given.map(utf16Form).filter((form): form is string => form !== null)];
    // The other encodings' base64 forms are not looked for: a text encoded twice over is no file's.
    // Nor a case-folded key's: folded, it is a URL's host or a name a server normalised, as text.
    const folded = this.given.flatMap((secret) => [secret.toLowerCase(), secret.toUpperCase()]).filter((form) => !this.given.includes(form));
    this.base64 = [...new Set(texts.flatMap(base64Forms))];
    this.secrets = [...new Set([...texts, ...this.base64, ...this.given.flatMap(encodedForms), ...folded])];
    this.inJson = this.secrets.map((s) => JSON.stringify(s).slice(1, -1));
  }

  get empty(): boolean {
    return this.secrets.length === 0;
  }

  /** The secrets themselves, for the search threads, which make a HostSecrets of their own. */
  get texts(): readonly string[] {
    return this.given;
  }

  /** An encoded frame with every secret (as it appears inside a JSON string) masked. */
  scrubLine(line: string): string {
    return masked(this.unwrapped(line), this.inJson);
  }

  /** Plain text (a line or a name a search tries a pattern on) with every secret masked. */
  scrubText(text: string): string {
    return masked(this.unwrapped(text), this.secrets);
  }

  /** `text` with each base64 form of a secret that line breaks cut across masked (see wrappedFormRanges). */
  private unwrapped(text: string): string {
    return this.empty ? text : maskedAt(text, wrappedFormRanges(text, this.base64));
  }

  /**
   * A text a server chose, as a message quotes it (a redirect's Location or URL, a content coding's
   * name, a model server's error body), at most `maxChars` characters of it: every secret masked
   * first, in the forms an echo of a request's secret is looked for in (net/redaction.ts: a URL's
   * host lower-cases it, an encoder escapes some of its characters and not others) and in the
   * forms scrubText masks, then cut, never inside a mask. Cut first, a quote that ended inside the
   * key showed its first characters, which no whole form matches where replies are scrubbed; a
   * redirect to a host named by the key was refused naming it lower-cased, and one to a path with
   * a character of it escaped ("%73k-…") named it so, to the script and in the audit log. Only
   * whole forms are masked, never an end that begins a secret: a server that gives back a
   * script's text would confirm its guess of the key's first characters, one at a time.
   */
  inServerText(text: string, maxChars = Number.POSITIVE_INFINITY): string {
    // A text that holds no form whole may hold a base64 form cut by line breaks (see unwrapped), which scrubText masks too.
    const masked = this.empty ? text : this.mayHold(text) ? this.scrubText(redact(text, this.given, [], false)) : this.unwrapped(text);
    return firstChars(masked, maxChars);
  }

  /**
   * A text a server chose with the secrets a request carried masked in it (redact's `secrets`,
   * `shown`, `cut` and `leaveOutEnd`) and what inServerText masks, both found in the text as the server sent it
   * and masked in one pass. Masked one after the other, the first's masks broke the second's
   * forms: a script that sent the key's public lead ("sk-proj-") as a secret header read the rest
   * of the key from any answer that held it, "[redacted]" standing only for what it sent.
   */
  inServerTextWith(text: string, secrets: readonly string[], shown: readonly string[], cut: boolean, leaveOutEnd = false): string {
    // A request's secrets in base64 that line breaks cut (an inspection service that gives the raw
    // request back as Python's base64.encodebytes writes it), which redact's whole forms miss.
    const wrapped = wrappedFormRanges(text, requestBase64Forms(secrets), cut);
    return redact(text, secrets, shown, cut, [...this.rangesIn(text), ...wrapped], leaveOutEnd);
  }

  /** Whether `text` holds a form inServerText masks (an answer's bytes read another way than as it was shown: see NetworkExecutor.request). */
  heldIn(text: string): boolean {
    // Where inServerText would mask, not its masked copy of the whole text.
    return this.rangesIn(text).length > 0;
  }

  /** Where inServerText masks `text`: the forms redact finds of the secrets, and those scrubText masks (see there). */
  private rangesIn(text: string): Array<[number, number]> {
    if (this.empty) return [];
    // Not among the forms mayHold knows: a form cut by line breaks is none of them.
    const wrapped = wrappedFormRanges(text, this.base64);
    if (!this.mayHold(text)) return wrapped;
    // A secret too long to know its forms before the text (see wholeForms): the text is masked whole, as redact masks one.
    const found = formRanges(text, this.given, false) ?? [[0, text.length]];
    for (const secret of this.secrets) {
      for (let at = text.indexOf(secret); at !== -1; at = text.indexOf(secret, at + 1)) found.push([at, at + secret.length]);
    }
    return [...found, ...wrapped];
  }

  /**
   * False when `text` holds no form inServerText masks, so that it is left as it is without the
   * whole masking (three decoding passes and the forms' automaton over every character: tens of ms
   * a MiB, too slow for every answer body); true when it may (see form-presence.ts).
   */
  private mayHold(text: string): boolean {
    if (this.presence === undefined) {
      const echoed = wholeForms(this.given);
      this.presence = echoed === null ? null : new FormPresence([...echoed, ...this.secrets]);
    }
    return this.presence === null || this.presence.mayHold(text);
  }

  /** How many bytes around a piece of a file are needed to see a secret that crosses its edges. */
  get margin(): number {
    const whole = this.secrets.reduce((max, secret) => Math.max(max, Buffer.byteLength(secret) - 1), 0);
    return this.base64.reduce((max, form) => Math.max(max, wrappedSpan(form.length) - 1), whole);
  }

  /**
   * A piece of a file with every byte that belongs to a secret replaced by "*", the secret
   * found in the piece with its neighbours (`before`, `after`) so one split across pieces is
   * masked in both. Same length: the reader's offsets stay right.
   */
  scrubChunk(chunk: Buffer, before: Buffer, after: Buffer): Buffer {
    if (this.empty) return chunk;
    const window = Buffer.concat([before, chunk, after]);
    const from = before.length;
    const to = before.length + chunk.length;
    let out: Buffer | null = null;
    // Base64 is ASCII: read as latin-1, each byte is one character, at the same offset.
    for (const [start, end] of wrappedFormRanges(window.toString("latin1"), this.base64)) {
      if (Math.max(start, from) >= Math.min(end, to)) continue;
      out ??= Buffer.from(chunk);
      out.fill(0x2a, Math.max(start, from) - from, Math.min(end, to) - from);
    }
    for (const secret of this.secrets) {
      const needle = Buffer.from(secret, "utf8");
      for (let at = window.indexOf(needle); at !== -1; at = window.indexOf(needle, at + 1)) {
        const start = Math.max(at, from);
        const end = Math.min(at + needle.length, to);
        if (start >= end) continue;
        out ??= Buffer.from(chunk);
        out.fill(0x2a, start - from, end - from);
      }
    }
    return out ?? chunk;
  }

  /**
   * How many of its last characters a text cut at a size limit leaves out (see cutText): enough
   * for the longest form scrubText masks, and for the longest inServerText masks with every one of
   * its characters escaped (ESCAPED_CHAR_CHARS each). Without the second, an answer that held the
   * key as "\u0073\u006b…" (six characters for each of its own), cut by a Range the script chose
   * inside it, showed its first part escaped, which no whole form matches: a script decoded six
   * characters past "sk-test/" of a 44-character key, and would of a 164-character key 55.
   */
  get cutMargin(): number {
    if (this.cutMarginChars === undefined) {
      // Forms in hex are of digits and letters, which no encoder escapes: they count as they are.
      const forms = wholeForms(this.given) ?? this.given;
      const inHex = (form: string): boolean => /^[0-9a-f]+(?:[ :][0-9a-f]+)*$/i.test(form);
      const longest = (of: readonly string[]): number => of.reduce((max, form) => Math.max(max, form.length), 0);
      this.cutMarginChars = Math.max(this.margin, ESCAPED_CHAR_CHARS * longest(forms.filter((form) => !inHex(form))) - 1, longest(forms.filter(inHex)) - 1);
    }
    return this.cutMarginChars;
  }

  /**
   * Text that was cut at a size limit (an HTTP answer's), as a script may see it: every secret in
   * it masked with "*" (same length), then its last `cutMargin` characters left out, whatever
   * they are, so that no secret the cut went through leaves its first part at the end, as it is or
   * escaped. An answer cut inside the key showed all of it but the characters past the cut (each
   * length of padding a server gave, one more), where the whole key was masked. Masking only an
   * end that begins a secret would tell a script, from a server that gives its text back, what
   * the key begins with.
   */
  cutText(text: string): string {
    if (this.empty) return text;
    const out = masked(text, this.secrets, (secret) => "*".repeat(secret.length));
    // The forms inServerText masks too, whole, before the cut: left for it to mask after, one that
    // ended within cutMargin of the end was cut by leaving those characters out, and a script that
    // chose the answer's length (a Range, or a server's padding) read the key escaped but its last
    // character ("\u0073\u006b…\u006"), which no whole form matched.
    const starred = starredAt(out, this.rangesIn(out));
    return starred.slice(0, Math.max(0, starred.length - this.cutMargin));
  }

  /** Base64 bytes with every secret masked (decoded, scrubbed, encoded again). */
  scrubBase64(base64: string): string {
    if (this.empty) return base64;
    const bytes = Buffer.from(base64, "base64");
    // Base64 is ASCII: read as latin-1, each byte is one character, and written back the same.
    const wrapped = wrappedFormRanges(bytes.toString("latin1"), this.base64);
    let changed = wrapped.length > 0;
    let out = changed ? Buffer.from(maskedAt(bytes.toString("latin1"), wrapped), "latin1") : bytes;
    for (const secret of this.secrets) {
      const needle = Buffer.from(secret, "utf8");
      let at = out.indexOf(needle);
      while (at !== -1) {
        out = Buffer.concat([out.subarray(0, at), Buffer.from(MASK), out.subarray(at + needle.length)]);
        changed = true;
        at = out.indexOf(needle, at + MASK.length);
      }
    }
    return changed ? out.toString("base64") : base64;
  }
}

/**
 * A request's secrets longer than this are not looked for wrapped: a header's are shorter (see
 * MAX_SECRET_HEADER_CHARS), and a classified body's answer is classified whole; its base64 forms,
 * six texts each longer than it, made for every message of a request with an 8 MB body, held the host.
 */
const WRAPPED_SECRET_CHARS = 64 * 1024;
/** requestBase64Forms's answers, by the request's list of secrets (one list a request). */
const requestForms = new WeakMap<readonly string[], string[]>();

/** The base64 forms of a request's secrets that are looked for wrapped across lines (see inServerTextWith). */
function requestBase64Forms(secrets: readonly string[]): string[] {
  let forms = requestForms.get(secrets);
  if (forms === undefined) {
    forms = [...new Set(secrets.filter((secret) => secret.length <= WRAPPED_SECRET_CHARS).flatMap(base64Forms))];
    requestForms.set(secrets, forms);
  }
  return forms;
}

/** `text` with each of `secrets` replaced by its mask (MASK unless `maskOf` says). */
function masked(text: string, secrets: readonly string[], maskOf: (secret: string) => string = () => MASK): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(maskOf(secret));
  return out;
}

/** `text` with each of `ranges` (code-unit [start, end), in any order, overlapping or not) replaced by one MASK, those that overlap or touch by one together. */
function maskedAt(text: string, ranges: ReadonlyArray<readonly [number, number]>): string {
  if (ranges.length === 0) return text;
  let out = "";
  let from = 0;
  for (const [start, end] of [...ranges].sort((a, b) => a[0] - b[0])) {
    if (end <= from) continue;
    out += start > from ? text.slice(from, start) + MASK : from === 0 ? MASK : "";
    from = end;
  }
  return out + text.slice(from);
}

/** `text` with each of `ranges` (code-unit [start, end), in any order, overlapping or not) replaced by as many "*": same length. */
function starredAt(text: string, ranges: ReadonlyArray<readonly [number, number]>): string {
  if (ranges.length === 0) return text;
  let out = "";
  let from = 0;
  for (const [start, end] of [...ranges].sort((a, b) => a[0] - b[0])) {
    const at = Math.max(start, from);
    if (end <= at) continue;
    out += text.slice(from, at) + "*".repeat(end - at);
    from = end;
  }
  return out + text.slice(from);
}
