// Secrets of the host's own (the operator's LLM API key) never reach a script, whatever route
// they take back: a file that happens to contain one, a command's output (`ps` shows a
// command line, /proc shows an environment), an answer from a server. Every reply to the
// sandbox is scrubbed of them: in its JSON line (text anywhere in it), and in base64 payloads
// (bytes read from files) after decoding; each also as a UTF-16 file holds it (utf16Form), and
// in the other encodings encodedForms names. A long random key cannot match by accident.

import type { RunnerConfig } from "./config.js";

const MASK = "[redacted]";
/** Shorter values are not scrubbed: they would match ordinary text. */
const MIN_SECRET_CHARS = 8;
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
 * decoded them and had the key.
 */
export function base64Forms(secret: string): string[] {
  const bytes = Buffer.from(secret, "utf8");
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

export class HostSecrets {
  /** The secrets as given (what the search threads are handed to make their own). */
  private readonly given: string[];
  /** What is masked: each secret and its base64 forms. */
  private readonly secrets: string[];
  private readonly inJson: string[];

  /** The host's secrets under `config`: what every reply to a sandbox is scrubbed of. */
  static of(config: RunnerConfig): HostSecrets {
    return new HostSecrets([config.library.llm?.apiKey]);
  }

  constructor(secrets: ReadonlyArray<string | null | undefined>) {
    this.given = secrets.filter((s): s is string => typeof s === "string" && s.length >= MIN_SECRET_CHARS);
    const texts = [...this.given, ...this.given.map(utf16Form).filter((form): form is string => form !== null)];
    // The other encodings' base64 forms are not looked for: a text encoded twice over is no file's.
    this.secrets = [...texts, ...texts.flatMap(base64Forms), ...this.given.flatMap(encodedForms)];
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
    return masked(line, this.inJson);
  }

  /** Plain text (a line or a name a search tries a pattern on) with every secret masked. */
  scrubText(text: string): string {
    return masked(text, this.secrets);
  }

  /** How many bytes around a piece of a file are needed to see a secret that crosses its edges. */
  get margin(): number {
    return this.secrets.reduce((max, secret) => Math.max(max, Buffer.byteLength(secret) - 1), 0);
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
   * Text that was cut at a size limit (an HTTP answer's), as a script may see it: every secret in
   * it masked with "*" (same length), then its last `margin` characters left out, whatever they
   * are, so that no secret the cut went through leaves its first part at the end. An answer cut
   * inside the key showed all of it but the characters past the cut (each length of padding a
   * server gave, one more), where the whole key was masked. Masking only an end that begins a
   * secret would tell a script, from a server that gives its text back, what the key begins with.
   */
  cutText(text: string): string {
    if (this.empty) return text;
    const out = masked(text, this.secrets, (secret) => "*".repeat(secret.length));
    return out.slice(0, Math.max(0, out.length - this.margin));
  }

  /** Base64 bytes with every secret masked (decoded, scrubbed, encoded again). */
  scrubBase64(base64: string): string {
    if (this.empty) return base64;
    const bytes = Buffer.from(base64, "base64");
    let changed = false;
    let out = bytes;
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

/** `text` with each of `secrets` replaced by its mask (MASK unless `maskOf` says). */
function masked(text: string, secrets: readonly string[], maskOf: (secret: string) => string = () => MASK): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(maskOf(secret));
  return out;
}
