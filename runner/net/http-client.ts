// One HTTP exchange for a script, redirects included, with every hop checked before it is
// made: the URL against the policy, and the address actually connected to against the
// restricted ranges (the check happens in the connection's own DNS lookup, so the name
// cannot resolve differently between check and connect).

import { lookup as dnsLookup } from "node:dns";
import http from "node:http";
import https from "node:https";
import type { LookupFunction, Socket } from "node:net";
import { type Readable, Transform, type TransformCallback } from "node:stream";
import zlib from "node:zlib";
import { PolicyDenial, EffectFailure } from "../refusals.js";
import { restrictionOf } from "./address-check.js";
import { hostOf, isIpLiteral } from "./host-policy.js";
import { redirectNotFollowed } from "./redirect-refusal.js";
import { chosen, firstChars, quoting, type Said, type ServerChosen } from "./server-text.js";
import { CollectedBytes } from "../collected-bytes.js";
import { monotonicMs } from "../monotonic.js";
import { wholeCharacters } from "../whole-characters.js";

export interface HttpCall {
  method: string;
  url: URL;
  headers: Record<string, string>;
  /** Headers dropped when a redirect leaves the origin (credentials). */
  originBoundHeaders: ReadonlySet<string>;
  body: Buffer | null;
}

export interface HttpOutcome {
  status: number;
  body: Buffer;
  truncated: boolean;
  /** The answer's Content-Type, as it came. */
  contentType: string | null;
  /** The answer's Content-Range, as it came: it is a part of a whole. */
  contentRange: string | null;
}

export interface HttpLimits {
  maxResponseBytes: number;
  timeoutMs: number;
  maxRedirects: number;
}

/**
 * Decides a URL before it is requested (`method` is the one it would be requested with; a hop
 * after the first is a redirect); says whether a restricted address is acceptable.
 */
export type UrlCheck = (url: URL, method: string, hop: number, say: Said) => { restrictedAllowed: boolean };

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** The most characters of a broken Location a message quotes (redacted first: a cut could fall inside an echoed secret). */
const QUOTED_LOCATION_CHARS = 200;

/** A hop's URL, or a text of it, in a message: the script's on the first hop, the server's on a redirect's. */
type HopText = string | ServerChosen;

function checkedLookup(host: HopText, restrictedAllowed: boolean, say: Said): LookupFunction {
  return ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    dnsLookup(hostname, { all: true }, (error, addresses) => {
      if (error) return callback(error);
      const refused = restrictedAllowed ? undefined : addresses.map((entry) => ({ address: entry.address, restriction: restrictionOf(entry.address) })).find((entry) => entry.restriction !== null);
      if (refused !== undefined) {
        return callback(
          new PolicyDenial(
            say`${host} resolves to ${refused.address}, ${refused.restriction!}; such addresses are reachable only when ` +
              "--network-permissions names the host or address literally",
          ),
        );
      }
      const first = addresses[0];
      if (!first) return callback(new EffectFailure(say`${host}: no address`));
      return options.all ? callback(null, [first]) : callback(null, first.address, first.family);
    });
  }) as unknown as LookupFunction;
}

/** Whether two bytes begin a zlib stream (RFC 1950): method 8 (deflate), a window of at most 32 KiB, a header that is a multiple of 31. */
function isZlibHeader(first: number, second: number): boolean {
  return (first & 0x0f) === 8 && first >> 4 <= 7 && ((first << 8) | second) % 31 === 0;
}

/**
 * How much a zlib header's stream is decoded as zlib before tacit holds to that reading (see
 * DeflateEitherWay): compressed bytes given the inflater, and decoded bytes it gave back.
 */
const ZLIB_TRIAL_INPUT_BYTES = 16 * 1024;
const ZLIB_TRIAL_OUTPUT_BYTES = 64 * 1024;

/**
 * Content-Encoding: deflate as servers send it: zlib-wrapped, as RFC 9110 says, or raw DEFLATE
 * without the zlib header (IIS and others long did), which browsers and curl read too. Told apart
 * by the first two bytes, as they tell them; and where those pass for a zlib header but the rest
 * is no zlib stream, read again as raw DEFLATE, as browsers do when zlib fails: a raw stream
 * whose first block is a stored one with padding bits set begins with bytes that pass (0x78
 * 0x5e), and failed as "not valid deflate". That second reading is bounded: while zlib is on
 * trial, the compressed bytes it was given are kept and what it decodes is held back; past
 * ZLIB_TRIAL_INPUT_BYTES in or ZLIB_TRIAL_OUTPUT_BYTES out (or at its end) the zlib reading is
 * the answer and a later failure is an error, so a server can make tacit decode at most those
 * few KiB twice, never the stream. The inflaters are the ones zlib-wrapped and raw deflate get
 * on their own, so the size limit holds the same way: it counts the decoded bytes passed on,
 * and destroying this destroys the inflater, which stops inflating what it was given (a bomb's
 * first chunk included). The text ends where the stream does: bytes after it (a line break, the
 * stream again) are left, as Node's own inflateSync and gunzip leave them.
 */
class DeflateEitherWay extends Transform {
  private inflater: zlib.Inflate | zlib.InflateRaw | null = null;
  /** The first bytes, until there are two to tell the two apart by. */
  private head: Buffer = Buffer.alloc(0);
  /** While zlib is on trial: the compressed bytes given it, and what it decoded, not passed on yet. */
  private trial: { input: Buffer[]; inputBytes: number; output: Buffer[]; outputBytes: number } | null = null;
  /** _flush's callback, once the stream's end came. */
  private flushed: TransformCallback | null = null;
  /** _transform's callback for the chunk the inflater is given, until it took it. */
  private pending: TransformCallback | null = null;
  /**
   * The inflater in use came to its stream's end. Given bytes past it, an inflater ends its output
   * there and then, before the answer's end came: waited for after that, the end never came, and a
   * server that sent a line break after its stream held the request past its time limit.
   */
  private ended = false;

  private start(kind: "zlib" | "raw"): void {
    const inflater = kind === "zlib" ? zlib.createInflate() : zlib.createInflateRaw();
    this.inflater = inflater;
    // Events of an inflater given up for another are no longer this stream's.
    inflater.on("data", (decoded: Buffer) => {
      if (this.inflater !== inflater) return;
      if (this.trial === null) return void this.push(decoded);
      this.trial.output.push(decoded);
      this.trial.outputBytes += decoded.length;
      if (this.trial.outputBytes > ZLIB_TRIAL_OUTPUT_BYTES) this.holdToZlib();
    });
    inflater.on("error", (error) => {
      if (this.inflater !== inflater) return;
      if (this.trial !== null) return this.readAsRaw();
      this.destroy(error);
    });
    // The stream's end (a zlib one's checksum checked): a zlib reading on trial is the answer, and a waiting _flush is done.
    inflater.on("end", () => {
      if (this.inflater !== inflater) return;
      this.ended = true;
      if (this.trial !== null) this.holdToZlib();
      this.flushed?.();
    });
  }

  /** zlib's reading is the answer: what it held back is passed on. */
  private holdToZlib(): void {
    const held = this.trial!.output;
    this.trial = null;
    for (const decoded of held) this.push(decoded);
  }

  /** zlib failed on trial: the same bytes, from the first, as raw DEFLATE. */
  private readAsRaw(): void {
    const given = this.trial!.input;
    this.trial = null;
    const failed = this.inflater!;
    this.start("raw");
    failed.destroy();
    for (const chunk of given) this.inflater!.write(chunk);
    // The stream's end came already, or comes now: letting the pending chunk go can call _flush
    // at once, which ends the raw inflater itself.
    if (this.flushed !== null) this.endInflater();
    else this.release();
  }

  /** Lets _transform's pending chunk go: the inflater in use has it. */
  private release(): void {
    const pending = this.pending;
    this.pending = null;
    pending?.();
  }

  /** Ends the inflater in use: _flush's callback is called as it ends (see start), or now if it has. */
  private endInflater(): void {
    if (this.ended) return void this.flushed!();
    this.inflater!.end();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (this.inflater === null) {
      this.head = Buffer.concat([this.head, chunk]);
      if (this.head.length < 2) return callback();
      chunk = this.head;
      if (isZlibHeader(chunk[0]!, chunk[1]!)) {
        this.trial = { input: [], inputBytes: 0, output: [], outputBytes: 0 };
        this.start("zlib");
      } else {
        this.start("raw");
      }
    }
    // Past the stream's end: not the answer's text.
    if (this.ended) return callback();
    if (this.trial !== null) {
      this.trial.input.push(chunk);
      this.trial.inputBytes += chunk.length;
    }
    const inflater = this.inflater!;
    this.pending = callback;
    inflater.write(chunk, () => {
      // A write to an inflater given up is let go by readAsRaw, which wrote the chunk again.
      if (this.inflater !== inflater) return;
      if (this.trial !== null && this.trial.inputBytes > ZLIB_TRIAL_INPUT_BYTES) this.holdToZlib();
      this.release();
    });
  }

  override _flush(callback: TransformCallback): void {
    // One byte is no deflate stream of either kind; none at all is an empty body (HEAD, 204, 304).
    if (this.inflater === null) return callback(this.head.length === 0 ? null : new Error("a deflate stream of one byte"));
    this.flushed = callback;
    this.endInflater();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.inflater?.destroy();
    callback(error);
  }
}

/**
 * The decoder for an answer's content coding: none for an answer as it is, null for a coding
 * tacit does not decode. A script may ask for compression (Accept-Encoding is an ordinary
 * header), and redaction looks for a secret's forms in text: in gzipped bytes it found none, and
 * a security review read a whole secret header out of a gzipping echo server's answers (read as
 * text, their lengths and bytes told, request by request, whether a guessed next character of
 * the secret lengthened a back-reference to it: CRIME's compression oracle). Decoded, the answer
 * is the text the server wrote, redacted as any other, and its compressed size is never seen.
 */
function decoderFor(coding: string): zlib.Gunzip | DeflateEitherWay | zlib.BrotliDecompress | "none" | null {
  switch (coding.trim().toLowerCase()) {
    case "":
    case "identity":
      return "none";
    case "gzip":
    case "x-gzip":
      return zlib.createGunzip();
    case "deflate":
      return new DeflateEitherWay();
    case "br":
      return zlib.createBrotliDecompress();
    default:
      return null;
  }
}

/**
 * The transfer codings an answer names besides chunked (and identity), as the server wrote them,
 * or null for none. Node's parser undoes chunked alone and passes a body in any other coding on as
 * it came: "Transfer-Encoding: gzip, chunked" gave a script the compressed bytes of an echo, where
 * redaction finds no form of a secret and whose bytes and size are the compression oracle
 * decoderFor shuts for content codings. A server may use one only where the request's TE header
 * asked for it (RFC 9112 6.1), and TE is a header tacit sets (none), so such an answer is refused,
 * judged by its header alone, never by what it holds.
 */
function undecodedTransferCoding(header: string | undefined): string | null {
  if (header === undefined) return null;
  const others = header
    .split(",")
    .map((coding) => coding.trim())
    .filter((coding) => coding !== "" && !/^(chunked|identity)$/i.test(coding));
  return others.length === 0 ? null : others.join(", ");
}

/**
 * The charset an answer says it is in (lower case; "" for none). JSON names none (its media type
 * has no charset parameter), and RFC 4627 let it be UTF-16 or UTF-32, told by where the zero
 * bytes among its first four are (as Python's json.loads still does): for JSON that names no
 * charset, that is the charset.
 */
function charsetOf(outcome: HttpOutcome): string {
  const contentType = outcome.contentType ?? "";
  const declared = /;\s*charset\s*=\s*"?([^\s";]+)/i.exec(contentType)?.[1];
  if (declared !== undefined) return declared.toLowerCase();
  if (!/^\s*application\/([^\s;/]*\+)?json\s*(;|$)/i.test(contentType)) return "";
  const [b0, b1, b2, b3] = outcome.body;
  if (b0 === 0xff && b1 === 0xfe && b2 === 0 && b3 === 0) return "utf-32le";
  if (b0 === 0 && b1 === 0 && b2 === 0 && b3 !== undefined) return "utf-32be";
  if (b0 !== undefined && b1 === 0 && b2 === 0 && b3 === 0) return "utf-32le";
  if ((b0 === 0xfe && b1 === 0xff) || (b0 === 0 && b2 === 0 && b1 !== undefined)) return "utf-16be";
  if ((b0 === 0xff && b1 === 0xfe) || (b1 === 0 && b3 === 0 && b0 !== undefined)) return "utf-16le";
  return "";
}

/** A charset label as Java and Python match one: case, "-" and "_" (any punctuation) aside. */
function label(charset: string): string {
  return charset.toLowerCase().replace(/[^a-z0-9]/g, "");
}

/**
 * Which Unicode form a charset label names: "utf-16" or "utf-32" (read in units of two or four
 * bytes), else "utf-8" (read byte by byte, as any other charset is). Judged on the label without
 * its punctuation, since servers take the labels their platform does: Java names UTF-16 and
 * UTF-32 also UTF_16, UTF_32, UTF_32BE_BOM, UnicodeBig…, and Python u16 and u32, and a security
 * review got an echo written in the charset asked for by Java's name (as Spring's
 * StringHttpMessageConverter writes a String) with "charset=UTF_32" read as UTF-8 (the secret with
 * three NULs beside each character); and a UTF-8 label that mentions "unicode" or "ucs2" (Java's
 * unicode-1-1-utf-8, Python's utf8_ucs2) was read as UTF-16, whose units a script split back
 * into the echo's bytes, the secret among them.
 */
function unicodeFamily(charset: string): "utf-8" | "utf-16" | "utf-32" {
  const name = label(charset);
  if (name.includes("utf8")) return "utf-8";
  if (/utf32|ucs4|^u32$/.test(name)) return "utf-32";
  if (/utf16|ucs2|unicode|^u16$/.test(name)) return "utf-16";
  return "utf-8";
}

/**
 * Whether tacit knows how a charset read as UTF-8 (see unicodeFamily) stands for characters: none
 * named, a UTF-8 label, or a label of the Encoding Standard (what TextDecoder takes), each of whose
 * charsets writes ASCII as ASCII, so that a secret's forms are in the text as they are in UTF-8.
 * Java writes a String in any charset it knows, and Spring's StringHttpMessageConverter in the one
 * a request asked for by name: in EBCDIC (IBM037, IBM1047…) a letter is a byte past ASCII, and read
 * as UTF-8 an echo of a secret header was no form redaction knew, with most of the key still in it
 * (a capital and a small letter are one whole UTF-8 character), which a security review's script
 * mapped back to EBCDIC and printed.
 */
function isKnownCharset(charset: string): boolean {
  if (charset === "" || label(charset).includes("utf8")) return true;
  try {
    new TextDecoder(charset);
    return true;
  } catch {
    return false;
  }
}

/** An answer's text (see answerReadings), and the same bytes read the other ways a server may have meant. */
export interface AnswerReadings {
  text: string;
  /**
   * The charset the answer names when tacit does not know how its bytes stand for characters (see
   * isKnownCharset); it is read as UTF-8 all the same. null for any other.
   */
  unknownCharset: string | null;
  /**
   * Read as UTF-16: the bytes as UTF-8, and as UTF-16 in the other byte order. Read as UTF-8:
   * the text without its NULs, when it has any (UTF-16 or UTF-32 that names no charset, or
   * another one). A label is a server's word, not its bytes': Spring MVC names the charset a
   * request asked for, and Jackson writes UTF-8 for a bare "UTF-16" (it knows only UTF-16BE and
   * UTF-16LE by name), so "application/json;charset=UTF-16" came in UTF-8; read as UTF-16, a
   * security review's script split the units back into the bytes and printed the echoed secret.
   * An echo of a secret in one of these readings is none of the forms redaction finds in `text`.
   */
  others: string[];
}

/**
 * An answer's text: in UTF-16 when its Content-Type says so (or its JSON is: see charsetOf),
 * else in UTF-8 as always. A script may ask for a charset (Accept is an ordinary header), and
 * servers that negotiate one (Spring MVC with Jackson writes JSON in UTF-16BE, UTF-16LE, UTF-32BE
 * or UTF-32LE when the media type it chose names one) answered "application/json;charset=UTF-16LE"
 * in UTF-16: read as UTF-8, an echo was the secret with a NUL beside each character, which no form
 * redaction looks for holds, and a security review's script took the NULs out and printed it.
 * UTF-32 is not read at all. Which end of a UTF-16 unit comes first: a byte order mark says so;
 * else the label's LE or BE; else (a bare "UTF-16", which Java writes big-endian and .NET
 * little-endian, maybe without a mark) the side most of the zero bytes are on, as ASCII text has
 * one per unit.
 */
export function answerReadings(outcome: HttpOutcome, origin: string, say: Said): AnswerReadings {
  if (outcome.body.length === 0) return { text: "", unknownCharset: null, others: [] }; // HEAD, 204, 304: no text to read, in any charset.
  const charset = charsetOf(outcome);
  const family = unicodeFamily(charset);
  if (family === "utf-32") {
    throw new EffectFailure(say`${origin}: answered in ${chosen(charset.toUpperCase())}, which tacit does not read; nothing of the answer was kept. Ask for UTF-8`);
  }
  if (family !== "utf-16") {
    const text = outcome.body.toString("utf8");
    return { text, unknownCharset: isKnownCharset(charset) ? null : charset, others: text.includes("\0") ? [text.replace(/\0/g, "")] : [] };
  }
  let bytes = outcome.body;
  let bigEndian: boolean;
  if (bytes[0] === 0xfe && bytes[1] === 0xff) {
    bigEndian = true;
    bytes = bytes.subarray(2);
  } else if (bytes[0] === 0xff && bytes[1] === 0xfe) {
    bigEndian = false;
    bytes = bytes.subarray(2);
  } else if (/(be|big)(bom|unmarked)?$/.test(label(charset))) {
    bigEndian = true;
  } else if (/(le|little)(bom|unmarked)?$/.test(label(charset))) {
    bigEndian = false;
  } else {
    let even = 0;
    let odd = 0;
    for (let i = 0; i < bytes.length; i++) if (bytes[i] === 0) i % 2 === 0 ? even++ : odd++;
    bigEndian = even > odd;
  }
  return {
    text: utf16Text(bytes, bigEndian, outcome.truncated),
    unknownCharset: null,
    others: [outcome.body.toString("utf8"), utf16Text(bytes, !bigEndian, outcome.truncated)],
  };
}

/** UTF-16 bytes as text, in whole units. */
function utf16Text(bytes: Buffer, bigEndian: boolean, truncated: boolean): string {
  // Whole units only, and no high surrogate cut from its pair at the end (an answer cut at the
  // size limit): read as U+FFFD, the secret before it would end the text unredacted.
  let units = Buffer.from(bytes.subarray(0, bytes.length - (bytes.length % 2)));
  if (bigEndian) units.swap16();
  if (units.length >= 2 && truncated) {
    const last = units.readUInt16LE(units.length - 2);
    if (last >= 0xd800 && last <= 0xdbff) units = units.subarray(0, units.length - 2);
  }
  return units.toString("utf16le");
}

/** What a request's timeout is called in the config, for its messages. */
const TIMEOUT_HINT = "; nothing of the answer was kept. The operator can give requests longer with libraryConfig.networkTimeoutMs";

/** A hop's URL, and the Said of its request. */
interface HopWords {
  url: URL;
  /** The first hop's URL is the script's; a redirect's is the server's. */
  byScript: boolean;
  say: Said;
}

/** A text of a hop's URL, as a message quotes it (see HopText). */
function hopText(hop: HopWords, text: string): HopText {
  return hop.byScript ? text : chosen(text);
}

/**
 * How ERR_TLS_CERT_ALTNAME_INVALID's message ends: the certificate's names as Node lists them
 * (its altnames as they are, its CNs joined with ",", its IP addresses canonical and joined with
 * ", "), which are the server's whatever their number.
 */
const CERT_NAMES_LISTED = /(?:is not in the cert's altnames|is not in the cert's list|is not cert's CN): (.*)$/s;

/**
 * The texts of a hop that a server chose and Node's messages may quote: a redirect's host (in
 * "getaddrinfo ENOTFOUND <host>") and a certificate's names (in ERR_TLS_CERT_ALTNAME_INVALID's).
 * The names are taken as Node's message lists them too: a certificate with two CNs (and no DNS
 * altnames) is worded "is not cert's CN: a,b", a list that is none of the names it holds, and a
 * secret among them came back as it was.
 */
function serverTextsOf({ url, byScript }: HopWords, error: Error): string[] {
  const cert = (error as { cert?: { subjectaltname?: unknown; subject?: { CN?: unknown } } }).cert;
  const names = [cert?.subjectaltname, cert?.subject?.CN].flat().filter((name): name is string => typeof name === "string");
  const code = (error as NodeJS.ErrnoException).code;
  const listed = code === "ERR_TLS_CERT_ALTNAME_INVALID" ? CERT_NAMES_LISTED.exec(error.message)?.[1] : undefined;
  const ofUrl = byScript ? [] : [url.href, url.origin, url.host, hostOf(url), url.hostname];
  return [...names, ...(listed === undefined ? [] : [listed]), ...ofUrl];
}

/** OpenSSL's and Node's codes for a certificate that failed its check (see tls's verify errors). */
const CERTIFICATE_FAILURE = /CERT|CRL|SELF_SIGNED|UNABLE_TO_(GET|VERIFY|DECRYPT|DECODE)|INVALID_CA|INVALID_PURPOSE|PATH_LENGTH_EXCEEDED|HOSTNAME_MISMATCH/;

/**
 * What to do about a certificate refused while NODE_TLS_REJECT_UNAUTHORIZED=0 is set: the
 * operator expected it to turn the check off, which tacit does not let it do.
 */
function certificateHint(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (process.env.NODE_TLS_REJECT_UNAUTHORIZED !== "0" || typeof code !== "string" || !CERTIFICATE_FAILURE.test(code)) return "";
  return " (tacit checks certificates whatever NODE_TLS_REJECT_UNAUTHORIZED says; to trust this server's CA, give its certificate in NODE_EXTRA_CA_CERTS)";
}

/**
 * Node's words for an answer that failed partway, in words that say what happened and what to
 * do: "aborted" said nothing of an answer whose connection closed before its Content-Length (or
 * its last chunk) came, "Parse Error: Header overflow" nothing of a limit, and OpenSSL's "wrong
 * version number" nothing of an https:// URL for a port that speaks plain HTTP, "socket hang up"
 * nothing of an http:// URL for a port that speaks TLS. No byte counts:
 * those of a compressed answer are its compressed size (see decoderFor). Any other error is kept,
 * with what a server chose that its message quotes redacted (see serverTextsOf).
 */
function answerFailure(hop: HopWords, error: Error): Error {
  // tacit's own (a time-out, a refused address), built with `say` already.
  if (error instanceof PolicyDenial || error instanceof EffectFailure) return error;
  const { url, say } = hop;
  const hopped = (text: string): HopText => hopText(hop, text);
  const at = hopped(url.origin);
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ECONNRESET" && error.message === "aborted") {
    return new EffectFailure(
      say`${at}: the connection closed before the whole answer came (shorter than its Content-Length said, or its chunks cut off); ` +
        "nothing of it was kept. Retry the request; if it keeps happening, the server is cutting its answers short",
    );
  }
  // Node's words for a connection closed before a byte of an answer came. A TLS port does that
  // to a plain http:// request (Node's and OpenSSL's servers close on it without a word), and so
  // does a server that refuses or fails the request: which one, the bytes do not tell.
  if (code === "ECONNRESET" && error.message === "socket hang up") {
    return new EffectFailure(
      say`${at}: the server closed the connection without answering (the request was sent; not a byte of an answer came). ` +
        (url.protocol === "http:"
          ? say`The port may serve TLS, which closes on a plain HTTP request: if so, use ${hopped(`https://${url.host}`)}; else the server refused or failed the request: retry it, or check the port`
          : "The server refused or failed the request: retry it; if it keeps happening, check the URL and the port"),
    );
  }
  if (code === "HPE_HEADER_OVERFLOW") {
    return new EffectFailure(
      say`${at}: answered with headers longer than tacit reads (${Math.round(http.maxHeaderSize / 1024)} KiB in all, Node's limit); ` +
        "nothing of the answer was kept. Request another URL of the service, or one that sets fewer cookies or headers",
    );
  }
  if (url.protocol === "https:" && /wrong version number|packet length too long|http request/i.test(error.message)) {
    return new EffectFailure(
      say`${at}: does not speak TLS on port ${hopped(url.port || "443")} (it answered the TLS handshake with something else, plain HTTP most often); ` +
        say`no request was sent. If it serves plain HTTP, use ${hopped(`http://${url.host}`)}; else check the port`,
    );
  }
  if (typeof code === "string" && code.startsWith("HPE_")) {
    return new EffectFailure(
      say`${at}: answered with something that is not HTTP/1.1 (Node read: ${quoting(error.message, serverTextsOf(hop, error))}); nothing of it was kept. ` +
        (url.protocol === "http:" ? "If the port serves TLS, use https://; else check the port" : "Check the port"),
    );
  }
  // Node's own words, kept (the executor names the request's origin before them).
  error.message = say`${quoting(error.message, serverTextsOf(hop, error))}` + certificateHint(error);
  return error;
}

function once(
  call: HttpCall,
  restrictedAllowed: boolean,
  limits: HttpLimits,
  signal: AbortSignal,
  { sending, connected, written, answered, hop, deadline }: { sending: () => void; connected: () => void; written: () => void; answered: () => void; hop: HopWords; deadline: number },
): Promise<HttpOutcome & { location: string | null }> {
  const { url } = call;
  const { say } = hop;
  const host = hostOf(url);
  const at = hopText(hop, url.origin);
  // The audit log says why such a request failed (see RanOutOfTime).
  const outOfTime = { limit: "http-timeout", ms: limits.timeoutMs } as const;
  const timedOut = (): EffectFailure => new EffectFailure(say`${at}: no complete answer within ${limits.timeoutMs} ms${TIMEOUT_HINT}`, outOfTime);
  // What is left of the request's time, not the hop's own: each hop had the whole timeout, and a
  // server that redirects held a request as many times the timeout as it made hops.
  const left = deadline - monotonicMs();
  if (left <= 0) throw timedOut();
  const restriction = isIpLiteral(host) && !restrictedAllowed ? restrictionOf(host) : null;
  if (restriction !== null) {
    throw new PolicyDenial(say`${hopText(hop, host)} is ${restriction}; it is reachable only when --network-permissions names it literally`);
  }
  const transport = url.protocol === "https:" ? https : http;
  // A body is always framed by its length. Node frames one on GET, HEAD, DELETE, OPTIONS,
  // TRACE and CONNECT with nothing at all, so a server read it as the next request on the
  // connection: a security review's GET body was a whole request of its own, with the Host
  // and framing headers tacit refuses, that a server which reads past "Connection: close"
  // answered as a second request.
  const headers = call.body === null ? call.headers : { ...call.headers, "content-length": String(call.body.length) };
  // Decided: the exchange (its address looked up, connected to, checked again then) starts now.
  sending();
  return new Promise(throwsWorded(hop, (resolve, reject) => {
    /** The answer's text as it is read (decoded, if it came in a content coding), once it began. */
    let decoding: Readable | null = null;
    const request = transport.request(
      url,
      {
        method: call.method,
        headers,
        lookup: checkedLookup(hopText(hop, host), restrictedAllowed, say),
        // A connection of its own, closed after the answer: no later request (one carrying a
        // secret) shares a connection with bytes an earlier one left for the server to read.
        agent: false,
        // Said, not left to Node's default, which NODE_TLS_REJECT_UNAUTHORIZED=0 in the host's
        // environment (a shell's, set for some other tool) turns off for every connection: a
        // secret header went to any server on a permitted address, its certificate self-signed
        // or for another name. An operator trusts a CA with NODE_EXTRA_CA_CERTS instead.
        rejectUnauthorized: true,
        signal,
        timeout: limits.timeoutMs,
      },
      (response) => {
        answered();
        const collected = new CollectedBytes(limits.maxResponseBytes);
        let truncated = false;
        let finished = false;
        const finish = (): void => {
          if (finished) return;
          finished = true;
          clearTimeout(overall);
          const body = collected.bytes();
          resolve({
            status: response.statusCode ?? 0,
            body: truncated ? wholeCharacters(body) : body,
            truncated,
            contentType: response.headers["content-type"] ?? null,
            contentRange: response.headers["content-range"] ?? null,
            location: response.headers.location ?? null,
          });
        };
        // A redirect that is followed has its body read by no one: its coding does not matter.
        const followed = REDIRECTS.has(response.statusCode ?? 0) && response.headers.location !== undefined;
        const coding = followed ? "" : String(response.headers["content-encoding"] ?? "");
        const transferCoding = followed ? null : undecodedTransferCoding(response.headers["transfer-encoding"]);
        if (transferCoding !== null) {
          response.destroy();
          clearTimeout(overall);
          reject(new EffectFailure(
            say`${at}: answered in a transfer coding tacit does not decode (${chosen(transferCoding)}), which a server sends only to a request ` +
              "whose TE header asked for it (tacit's never do); nothing of the answer was kept. The server is misconfigured: request another URL " +
              "of it, or have it compress with Content-Encoding (gzip, deflate or br), which tacit decodes",
          ));
          return;
        }
        const decoder = decoderFor(coding);
        if (decoder === null) {
          response.destroy();
          clearTimeout(overall);
          reject(new EffectFailure(say`${at}: answered in a content coding tacit does not decode (${chosen(coding.trim())}); nothing of the answer was kept. Ask for gzip, deflate or br, or none`));
          return;
        }
        // The limit counts the decoded bytes: a small compressed answer can decode to gigabytes.
        let encodedBytes = 0;
        response.on("data", (chunk: Buffer) => (encodedBytes += chunk.length));
        const text: Readable = decoder === "none" ? response : response.pipe(decoder);
        decoding = text;
        text.on("data", (chunk: Buffer) => {
          if (truncated || collected.append(chunk)) return;
          truncated = true;
          response.destroy();
          if (text !== response) text.destroy();
          finish();
        });
        text.on("end", finish);
        response.on("error", (error) => (truncated ? finish() : reject(answerFailure(hop, error))));
        if (text !== response) {
          // An empty body (HEAD, 204, 304) says its coding but holds nothing to decode.
          text.on("error", () => {
            if (truncated || encodedBytes === 0) return finish();
            response.destroy();
            clearTimeout(overall);
            reject(new EffectFailure(say`${at}: the answer is not valid ${chosen(coding.trim())}; nothing of it was kept`));
          });
        }
      },
    );
    // The request's time ends the exchange, whatever it waits on: destroying the request alone
    // ended nothing once the answer's last byte had come, and a decoding that never ended (see
    // DeflateEitherWay) held the script past the limit, to the evaluation's.
    const overall = setTimeout(() => {
      const error = timedOut();
      decoding?.destroy();
      request.destroy(error);
      reject(error);
    }, left);
    request.on("timeout", () => request.destroy(new EffectFailure(say`${at}: no answer within ${limits.timeoutMs} ms${TIMEOUT_HINT}`, outOfTime)));
    // A tunnel (an answer to CONNECT) or a switch of protocol (101, which a server may send
    // unasked) hands the connection to a listener; with none, the request never settled and
    // the script waited past the request timeout for the evaluation's limit. tacit speaks
    // plain HTTP only.
    const switched = (response: http.IncomingMessage, socket: Socket): void => {
      clearTimeout(overall);
      socket.destroy();
      reject(new EffectFailure(say`${at}: answered ${response.statusCode ?? 0} with a tunnel or another protocol, which tacit does not speak`));
    };
    request.on("connect", switched);
    request.on("upgrade", switched);
    request.on("error", (error) => {
      clearTimeout(overall);
      reject(answerFailure(hop, error));
    });
    // From the moment the connection is up (its TLS too), bytes of the request go out, the body's
    // among them: a server can read part of it and answer (or fail) before the rest was sent.
    // Counted from "finish" (the body handed whole to the OS), a server that answered as soon as
    // it had read a key from a long classified body, with a content coding named after it, failed
    // the request where the script saw it: how a server that had part of the secret answered.
    request.on("socket", (socket) => {
      if (url.protocol === "https:") socket.once("secureConnect", connected);
      else if (socket.connecting) socket.once("connect", connected);
      else connected();
    });
    // The whole request (its body too) was handed to the OS for the server: for the audit log.
    request.once("finish", written);
    request.end(call.body ?? undefined);
  }));
}

/**
 * A promise executor whose synchronous throws reject with answerFailure's wording, as the
 * request's error events do. Node refuses some requests by throwing from transport.request (a
 * header, a path or a host it will not send); a promise executor's throw rejects with the error
 * as it is, and the executor then quoted its message whole, past the redaction of what a server
 * chose in it (on a redirect's hop, its URL).
 */
function throwsWorded<T>(
  hop: HopWords,
  executor: (resolve: (value: T) => void, reject: (reason: Error) => void) => void,
): (resolve: (value: T) => void, reject: (reason: Error) => void) => void {
  return (resolve, reject) => {
    try {
      executor(resolve, reject);
    } catch (error) {
      reject(answerFailure(hop, error instanceof Error ? error : new Error(String(error))));
    }
  };
}

/** What httpExchange tells its caller as the exchange goes on. */
export interface ExchangeHooks {
  /**
   * Each redirect hop as its exchange starts (after `sending`, before anything of it is sent: the audit
   * log records it there, and a throw is the exchange's error): one that fails any check made
   * before, the request's deadline among them, is not told (for the audit log: see NetworkExecutor.redirectsOf).
   */
  followed?: (method: string, url: URL) => void;
  /**
   * When given, a redirect that cannot be followed (refused, broken, one too many, or its next
   * hop failed) is the answer, and this is told why, instead of failing: for a request whose
   * answer the script may not see, whose failure would tell it the status (see monitor.ts).
   */
  unfollowed?: (reason: string) => void;
  /**
   * A request (the first, or a redirect's) passed every check made before it is sent, and its
   * exchange starts now: nothing has left the host yet (see BeforeEffect). Thrown, the error is the exchange's.
   */
  sending?: () => void;
  /** A request's connection (the first's, or a redirect's) is up: from here on the server may have any byte of it, its body's included. */
  connected?: () => void;
  /** A request (the first, or a redirect's) was written whole, its body too (its "finish"). */
  written?: () => void;
  /** A request's answer (the first's, or a redirect's) began: its status line and headers came. */
  answered?: () => void;
}

/**
 * Makes the request, following redirects that pass the same checks (see ExchangeHooks). Its
 * messages are built with `say`, which redacts what a server chose in them (see server-text.ts).
 */
export async function httpExchange(first: HttpCall, check: UrlCheck, limits: HttpLimits, signal: AbortSignal, say: Said, hooks: ExchangeHooks = {}): Promise<HttpOutcome> {
  const nothing = (): void => undefined;
  const { followed = nothing, unfollowed, sending = nothing, connected = nothing, written = nothing, answered = nothing } = hooks;
  const deadline = monotonicMs() + limits.timeoutMs;
  let call = first;
  /** The redirect answer being followed: the answer, with `unfollowed`, if it cannot be. */
  let redirect: HttpOutcome | null = null;
  const notFollowed = (error: unknown): HttpOutcome => {
    if (redirect === null || unfollowed === undefined || signal.aborted) throw error;
    unfollowed(error instanceof Error ? error.message : String(error));
    return redirect;
  };
  for (let hop = 0; ; hop++) {
    let outcome: HttpOutcome & { location: string | null };
    let checked = false;
    const words: HopWords = { url: call.url, byScript: hop === 0, say };
    try {
      const { restrictedAllowed } = check(call.url, call.method, hop, say);
      checked = true;
      // A hop is told once its exchange starts, not once its URL passed the check: refused after
      // that (its deadline passed, its address a restricted literal, the log unwritable), the
      // audit log recorded it as followed, a request that was never sent.
      const { method, url } = call;
      const hopSending = hop === 0 ? sending : (): void => {
        sending();
        followed(method, url);
      };
      outcome = await once(call, restrictedAllowed, limits, signal, { sending: hopSending, connected, written, answered, hop: words, deadline });
    } catch (error) {
      // Past the check, a refusal is the restricted-address one, made as the hop's address is looked up.
      if (checked && hop > 0 && error instanceof PolicyDenial) error.message = redirectNotFollowed(say, first.url, call.url, error.message);
      return notFollowed(error);
    }
    if (!REDIRECTS.has(outcome.status) || outcome.location === null) return outcome;
    redirect = outcome;
    const next = URL.canParse(outcome.location, call.url.href) ? new URL(outcome.location, call.url) : null;
    if (next === null) {
      const quoted = chosen(outcome.location, (redacted) => JSON.stringify(firstChars(redacted, QUOTED_LOCATION_CHARS)));
      return notFollowed(new EffectFailure(
        say`${hopText(words, call.url.origin)}: answered ${outcome.status} with a Location that is no URL (${quoted}); ` +
          "nothing of the answer was kept. The server's redirect is broken: request the URL it should lead to directly",
      ));
    }
    if (hop >= limits.maxRedirects) {
      return notFollowed(new EffectFailure(
        say`${first.url.origin}: more than ${limits.maxRedirects} redirects (the last to ${chosen(next.href)}), which tacit does not follow; ` +
          "nothing of the answer was kept. A loop of redirects, or a chain longer than that: request the URL it leads to directly",
      ));
    }
    const sameOrigin = next.origin === call.url.origin;
    const headers = Object.fromEntries(Object.entries(call.headers).filter(([name]) => sameOrigin || !call.originBoundHeaders.has(name.toLowerCase())));
    // A HEAD stays a HEAD (RFC 9110 15.4.4): turned into a GET by a 303, it fetched the whole body it asked not to.
    const becomesGet = call.method !== "HEAD" && (outcome.status === 303 || ((outcome.status === 301 || outcome.status === 302) && call.method === "POST"));
    call = { ...call, url: next, headers, method: becomesGet ? "GET" : call.method, body: becomesGet ? null : call.body };
  }
}
