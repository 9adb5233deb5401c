// The forms a secret takes in the encodings text commonly comes in (base64, UTF-16 and UTF-32,
// hex, percent-encoding, JSON's "\/"), each as it reads as UTF-8 text: what the host's own
// secrets are masked in (host-secrets.ts), and what an echo of a request's secret is looked for
// in too (net/redaction.ts). A module of its own, so that each of those can use the other.

/**
 * Bytes of a secret its base64 forms must hold to be scrubbed: a form holds all of it but up to
 * two bytes at each end, and a shorter one masked would confirm a guess of that much of it.
 */
const MIN_BASE64_BYTES = 16;

/**
 * The base64 forms of `secret` wherever it lies in what was encoded: its bytes, from the first
 * that starts a group of three to the last group it fills, encoded (standard and URL-safe),
 * once for each of the three places it can start in a group. A Kubernetes Secret keeps values
 * in base64, Docker's config.json "user:token", npm's _auth the same: read as text, a script
 * decoded them and had the key. Given bytes, of those bytes.
 */
export function base64Forms(secret: string | Buffer): string[] {
  // A string's UTF-8; bytes as they are (a header's latin-1 bytes: see net/redaction.ts).
  const bytes = typeof secret === "string" ? Buffer.from(secret, "utf8") : secret;
  if (bytes.length < MIN_BASE64_BYTES) return [];
  const forms = new Set<string>();
  for (let skip = 0; skip < 3; skip++) {
    const whole = Math.floor((bytes.length - skip) / 3) * 3;
    const form = bytes.subarray(skip, skip + whole).toString("base64");
    forms.add(form);
    forms.add(form.replace(/\+/g, "-").replace(/\//g, "_"));
  }
  return [...forms];
}

/**
 * The key as a UTF-16 text file holds it, read as UTF-8 (as every route reads text): each
 * character with a NUL beside it, `k\0e\0y`, the same in UTF-16LE and UTF-16BE (a NUL follows
 * the last character, or comes before the first). Windows PowerShell's `>` writes UTF-16LE:
 * such a file held the key in a form none of the others matched, and a script that dropped the
 * NULs, or decoded readBytes() as UTF-16, had it. Only for a key of ASCII characters (API keys
 * are): another character's UTF-16 bytes are not the NUL-separated character.
 */
export function utf16Form(secret: string): string | null {
  return nulSpread(secret, 1);
}

/** An ASCII key's characters with `nuls` NULs between them (UTF-16: 1, UTF-32: 3), or null for another key. */
function nulSpread(secret: string, nuls: number): string | null {
  return /^[\x01-\x7f]+$/.test(secret) ? [...secret].join("\0".repeat(nuls)) : null;
}

/**
 * The key as other common encodings write it, each read as UTF-8 text: UTF-32 (three NULs beside
 * each ASCII character, LE and BE alike), hex of its bytes (either case), percent-encoded as a URL's
 * query holds it (`/`, `+`, `=` as %2F, %2B, %3D: every character but the unreserved ones, and with
 * `/` kept, as Python's quote() writes it; either case of hex), and in JSON with "/" escaped (PHP's
 * json_encode writes `\/`). A key with `/`, `+` or `=` in a saved request or a PHP-written config
 * reached a script that decoded the text: none of the other forms matched it. (Not every mix of
 * encoded and plain characters, nor every encoding there is: a command that transforms what it
 * reads can always make another.)
 */
export function encodedForms(secret: string): string[] {
  const forms = new Set<string>();
  const utf32 = nulSpread(secret, 3);
  if (utf32 !== null) forms.add(utf32);
  const hex = Buffer.from(secret, "utf8").toString("hex");
  forms.add(hex);
  forms.add(hex.toUpperCase());
  /** Every character but the unreserved ones, and those in `kept`, as %XX of its UTF-8 bytes. */
  const percent = (kept: string) =>
    secret.replace(/[^A-Za-z0-9\-._~]/g, (c) => (kept.includes(c) ? c : [...Buffer.from(c, "utf8")].map((b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`).join("")));
  for (const encoded of [percent(""), percent("/")]) {
    forms.add(encoded);
    forms.add(encoded.replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()));
  }
  if (secret.includes("/")) forms.add(secret.replaceAll("/", "\\/"));
  forms.delete(secret);
  return [...forms];
}

/**
 * A line break inside a base64 text wrapped at a width, and the indentation its next line may
 * have (a certificate or key in YAML): as it is, or escaped (a JSON string, a reply frame, a JSON
 * body inside one). GNU `base64` and MIME write lines of 76 characters, PEM and OpenSSL of 64.
 */
const BASE64_LINE_BREAK = String.raw`(?:\r?\n|(?:\\+r)?\\+n)(?:[ \t]|\\+t)*`;
/**
 * Runs of base64 characters with line breaks between them (both alphabets; no break at an end),
 * each from its first character: without the lookbehind, a run with no break was scanned again
 * from each of its characters (an 8 MiB base64 text, quadratic).
 */
const WRAPPED_BASE64 = new RegExp(String.raw`(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/=_-]+(?:${BASE64_LINE_BREAK}[A-Za-z0-9+/=_-]+)+`, "g");
const LINE_BREAK = new RegExp(BASE64_LINE_BREAK, "g");

/**
 * The most characters a form of `length` characters takes once wrapped (see wrappedFormRanges),
 * for a reader that sees a text in pieces: lines of 8 characters or more, each break with its
 * escapes and indentation in 16 or fewer.
 */
export function wrappedSpan(length: number): number {
  return length + Math.ceil(length / 8) * 16;
}

/**
 * Where `text` holds one of `forms` (base64 forms: see base64Forms) broken across lines, as
 * [start, end) ranges of the text, from the form's first character to its last. A file of the key
 * encoded by GNU `base64` (which wraps at 76 characters) held no form whole: read as text, a
 * script joined the lines, decoded them, and had the operator's key.
 */
/** The fewest characters of a form's beginning at a cut end that are masked (a shorter piece matches ordinary text). */
const MIN_CUT_PIECE_CHARS = 4;

export function wrappedFormRanges(text: string, forms: readonly string[], cut = false): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  if (forms.length === 0) return found;
  const shortest = forms.reduce((min, form) => Math.min(min, form.length), Number.POSITIVE_INFINITY);
  for (const run of text.matchAll(WRAPPED_BASE64)) {
    // Shorter with its breaks than a form is without: none fits (most runs of ordinary text, "end\nstart").
    if (run[0].length < shortest) continue;
    const joined = run[0].replace(LINE_BREAK, "");
    if (joined.length < shortest || !forms.some((form) => joined.includes(form))) continue;
    // Where each character of the joined run stands in the text.
    const at: number[] = [];
    let from = 0;
    const keep = (end: number): void => {
      for (let i = from; i < end; i++) at.push(run.index + i);
    };
    for (const lineBreak of run[0].matchAll(LINE_BREAK)) {
      keep(lineBreak.index);
      from = lineBreak.index + lineBreak[0].length;
    }
    keep(run[0].length);
    for (const form of forms) {
      for (let i = joined.indexOf(form); i !== -1; i = joined.indexOf(form, i + 1)) found.push([at[i]!, at[i + form.length - 1]! + 1]);
    }
  }
  if (cut) found.push(...beganAtCutEnd(text, forms));
  return found;
}

/**
 * A text cut at a size limit may end partway into a form, its lines' breaks between (and a break,
 * or part of one, after its last characters): that beginning, from its first character to the
 * text's end, when it is MIN_CUT_PIECE_CHARS or more of a form. Read backwards from the end over
 * base64 characters and breaks, as far as the longest form reaches, in time linear in that.
 */
function beganAtCutEnd(text: string, forms: readonly string[]): Array<[number, number]> {
  const longest = forms.reduce((max, form) => Math.max(max, form.length), 0);
  const isBase64 = (c: string | undefined): boolean => c !== undefined && /[A-Za-z0-9+/=_-]/.test(c);
  const at: number[] = [];
  let i = text.length;
  for (let steps = 0; i > 0 && at.length < longest && steps < wrappedSpan(longest) + 64; steps++) {
    const c = text[i - 1]!;
    if (/[rnt]/.test(c) && text[i - 2] === "\\") i -= 2; // An escaped break or tab: "\n", "\r", "\t".
    else if (c === "\\" || c === "\r" || c === "\n" || c === " " || c === "\t") i -= 1;
    else if (isBase64(c)) at.push(--i);
    else break;
  }
  if (at.length < MIN_CUT_PIECE_CHARS) return [];
  at.reverse();
  const joined = at.map((position) => text[position]).join("");
  const begun = longestBegun(joined, forms);
  return begun === 0 ? [] : [[at[at.length - begun]!, text.length]];
}

/**
 * The most characters `joined` ends with that begin one of `forms` (none whole), or 0 for fewer
 * than MIN_CUT_PIECE_CHARS. In time linear in the forms and the text (a prefix function over each
 * form, a separator and the text's last characters): tried length by length, a periodic secret of
 * 64 KiB took billions of steps.
 */
function longestBegun(joined: string, forms: readonly string[]): number {
  let longest = 0;
  for (const form of forms) {
    const pattern = `${form.slice(0, -1)}\u0000${joined.slice(-(form.length - 1))}`;
    const border = new Int32Array(pattern.length);
    for (let i = 1; i < pattern.length; i++) {
      let k = border[i - 1]!;
      while (k > 0 && pattern[i] !== pattern[k]) k = border[k - 1]!;
      border[i] = pattern[i] === pattern[k] ? k + 1 : k;
    }
    longest = Math.max(longest, border[pattern.length - 1]!);
  }
  return longest >= MIN_CUT_PIECE_CHARS ? longest : 0;
}
