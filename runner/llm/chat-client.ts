// chat(): one message to the operator's OpenAI-compatible model. The API key lives only
// here, in the host: it never reaches the sandbox, output, errors or logs.

import { EffectFailure } from "../refusals.js";
import type { RanOutOfTime } from "../audit/events.js";
import type { HostSecrets } from "../host-secrets.js";
import { MAX_SANDBOX_FRAME_CHARS } from "../../library/protocol.js";

export interface LlmConfig {
  baseUrl: string;
  apiKey: string;
  model: string;
  /** The most of one answer kept, in characters (config libraryConfig.llm.answerLimitChars); DEFAULT_ANSWER_LIMIT_CHARS when unset. */
  answerLimitChars?: number;
}

export const CHAT_TIMEOUT_MS = 120_000;

/**
 * Chats on a Classified message asked of the model at once, at most, per evaluation: each
 * returns at once and is asked in the background, and nothing else bounded how many were open
 * (a seventh security review had 3,801 open after 4 s, one socket and one billed question each).
 */
export const CLASSIFIED_CHATS_AT_ONCE = 4;
/** The most of one answer kept, in characters, unless the operator sets less (libraryConfig.llm.answerLimitChars); never more. */
export const DEFAULT_ANSWER_LIMIT_CHARS = 8 * 1024 * 1024;
/**
 * The longest question sent, in characters: what one call from the sandbox carries, so a plain
 * question always fits. A classified one is made in the host (a map makes tens of millions of
 * characters), and was sent whole: one of 20 million, asked 12 times, 4 at a time, peaked tacit
 * at 740 MB, for a question no model reads.
 */
const QUESTION_LIMIT_CHARS = MAX_SANDBOX_FRAME_CHARS;
/**
 * The most of a model's answer read, in bytes, for answers kept up to `answerLimitChars`: such an
 * answer, JSON-escaped, fits (at most six bytes a character). A longer one is refused, not held whole first.
 */
function answerLimitBytes(answerLimitChars: number): number {
  return 6 * answerLimitChars + 64 * 1024;
}
/** The most of an error answer read: its first ERROR_QUOTED_CHARS characters are shown. */
const ERROR_LIMIT_BYTES = 64 * 1024;
const ERROR_QUOTED_CHARS = 500;

/** The body's text, up to `limit` bytes; `complete` says whether that was all of it. */
async function readAtMost(response: Response, limit: number): Promise<{ text: string; complete: boolean }> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body?.getReader();
  let complete = true;
  if (reader) {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (size + value.byteLength > limit) {
        chunks.push(value.subarray(0, limit - size));
        complete = false;
        await reader.cancel().catch(() => undefined);
        break;
      }
      chunks.push(value);
      size += value.byteLength;
    }
  }
  return { text: Buffer.concat(chunks).toString("utf8"), complete };
}

/**
 * Nesting an answer may have, at most: a chat completion nests some six levels (tool calls and
 * log probabilities a few more). JSON.parse of deep nesting costs far more than its size: 40 MB
 * of nested arrays, within answerLimitBytes(DEFAULT_ANSWER_LIMIT_CHARS), held the host's main thread 21 s at 2 GB.
 */
const ANSWER_DEPTH_LIMIT = 100;

/** Whether the JSON text opens more than `limit` arrays or objects inside one another (strings skipped). */
function nestedDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === 0x5c) i++; // A backslash: the next character is escaped.
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) inString = true;
    else if (code === 0x5b || code === 0x7b) {
      if (++depth > limit) return true;
    } else if (code === 0x5d || code === 0x7d) depth--;
  }
  return false;
}

/** The scheme, host and port of `url`, or "the configured URL" when it does not parse. */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "the configured URL";
  }
}

/**
 * What went wrong, as Node said it: fetch's own message ("fetch failed", "terminated") names no
 * cause, so a refused connection, an unknown host, a dropped one and an answer that was no HTTP
 * all read the same; its cause says which.
 */
function failureText(error: unknown): string {
  const { message, cause } = error as Error;
  const causeMessage = cause instanceof Error && cause.message !== "" && cause.message !== message ? cause.message : null;
  return causeMessage === null ? message : `${message}: ${causeMessage}`;
}

/**
 * Why a request to the model got no answer, as the rest of "chat: the model at <origin> ...". A
 * slow model, or an evaluation that ended while it was asked, said "could not be reached",
 * which sent the operator to check a server that was up.
 */
function unansweredBecause(error: unknown, evaluation: AbortSignal): string {
  if (chatRanOutOfTime(error)) return `did not answer within ${CHAT_TIMEOUT_MS / 1000} s, tacit's limit for one chat; ask again, or ask for a shorter answer`;
  if (evaluation.aborted) return `had not answered when tacit stopped waiting: ${failureText(error)}`;
  return `could not be reached: ${failureText(error)}`;
}

function redactKey(text: string, key: string): string {
  return key.length > 0 ? text.split(key).join("[redacted]") : text;
}

/** For the audit log: a request to the model that AbortSignal.timeout ended ran out of CHAT_TIMEOUT_MS (see RanOutOfTime). */
function chatRanOutOfTime(error: unknown): RanOutOfTime | null {
  return (error as Error | null)?.name === "TimeoutError" ? { limit: "chat-timeout", ms: CHAT_TIMEOUT_MS } : null;
}

/**
 * Whether `url` is https as fetch reads it: the URL parser drops leading and trailing spaces and
 * controls, and tabs and line breaks anywhere, so " https://…" and "ht\ttps://…" are https too
 * (a test of the text's start let them past the refusal below, and the key went to a self-signed server).
 */
function isHttpsUrl(url: string): boolean {
  try {
    return new URL(url).protocol === "https:";
  } catch {
    // Not a URL: fetch sends nothing to it either.
    return false;
  }
}

/**
 * Why no question goes to an https model while Node checks no certificate, or null. Node's fetch,
 * which this client uses, takes NODE_TLS_REJECT_UNAUTHORIZED=0 in tacit's environment as "accept
 * any certificate" (the network capability sets rejectUnauthorized on each request itself): the key,
 * and a classified question's plaintext, went to a self-signed server answering for the model's
 * address. Decided by the environment and the configured URL alone, the operator's both.
 */
function uncheckedCertificateRefusal(baseUrl: string): string | null {
  if (process.env.NODE_TLS_REJECT_UNAUTHORIZED !== "0" || !isHttpsUrl(baseUrl)) return null;
  return (
    `chat: NODE_TLS_REJECT_UNAUTHORIZED=0 in tacit's environment turns off Node's checks of the model server's certificate, so the API key ` +
    `and the question would go to whoever answers for ${originOf(baseUrl)}; nothing was sent. The operator can run tacit without it, ` +
    "and trust a private certificate authority with NODE_EXTRA_CA_CERTS instead"
  );
}

/**
 * The model's answer to one user message. `hostSecrets` (the key among them) are masked in what
 * the model's server chose that a message quotes (see HostSecrets.inServerText): its error body
 * held the key as UTF-16 or with a character escaped, no form the scrub of replies knew, or cut
 * at the quote's length inside the key, its first characters; the sandbox was told them, and the
 * secure output too for a classified question (its failure is noted there).
 */
export async function chatCompletion(llm: LlmConfig, message: string, signal: AbortSignal, hostSecrets: HostSecrets): Promise<string> {
  if (message.length > QUESTION_LIMIT_CHARS) {
    throw new EffectFailure(
      `chat: the question is ${message.length} characters, more than the ${QUESTION_LIMIT_CHARS} tacit sends a model in one chat; ` +
        "nothing was sent. Ask about less at a time (a map can cut the value into pieces)",
    );
  }
  const answerLimitChars = llm.answerLimitChars ?? DEFAULT_ANSWER_LIMIT_CHARS;
  const url = `${llm.baseUrl.replace(/\/+$/, "")}/chat/completions`;
  /** A message built from what the model's server sent (or Node said of it), the key masked in it first, then cut. */
  const keyMasked = (text: string, maxChars?: number): string => hostSecrets.inServerText(redactKey(text, llm.apiKey), maxChars);
  const unchecked = uncheckedCertificateRefusal(llm.baseUrl);
  if (unchecked !== null) throw new EffectFailure(unchecked);
  let response: Response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${llm.apiKey}` },
      body: JSON.stringify({ model: llm.model, messages: [{ role: "user", content: message }] }),
      signal: AbortSignal.any([signal, AbortSignal.timeout(CHAT_TIMEOUT_MS)]),
      // Followed, a redirect took the question (a classified one's plaintext too) to any host the
      // model's server named, one the operator never configured and no network rule allowed, and a
      // 303 made tacit GET any address (this machine's services, a cloud's metadata) for the script.
      redirect: "manual",
    });
  } catch (error) {
    // Only the URL's origin is named, and the whole URL is taken out of the message: the URL is
    // the operator's, and what it carries past the host is none of the script's business.
    throw new EffectFailure(
      keyMasked([url, llm.baseUrl].reduce(redactKey, `chat: the model at ${originOf(llm.baseUrl)} ${unansweredBecause(error, signal)}`)),
      chatRanOutOfTime(error),
    );
  }
  if (response.status >= 300 && response.status < 400) {
    await response.body?.cancel().catch(() => undefined);
    // Where it pointed is not quoted: the server chose it, and the operator can ask it (curl -i).
    throw new EffectFailure(
      `chat: the model at ${originOf(llm.baseUrl)} answered HTTP ${response.status}, a redirect, which tacit does not follow ` +
        "(the question would go where that server chose, not where --llm-base-url says); set --llm-base-url to the URL it redirects to",
    );
  }
  let read: { text: string; complete: boolean };
  try {
    read = await readAtMost(response, response.ok ? answerLimitBytes(answerLimitChars) : ERROR_LIMIT_BYTES);
  } catch (error) {
    // The connection dropped, or the time limit passed, while the answer was read: thrown as it
    // was (TypeError: terminated), that was no refusal, and it ended the evaluation as a host
    // that failed to answer ("protocol violation"), with nothing the script could catch.
    throw new EffectFailure(
      keyMasked(
        [url, llm.baseUrl].reduce(redactKey, `chat: the model's answer stopped partway (${failureText(error)}); nothing of it was kept. Ask again, or ask for a shorter answer`),
      ),
      chatRanOutOfTime(error),
    );
  }
  const { text, complete } = read;
  if (!response.ok) {
    // Masked before it is cut: cut first, a key the answer quotes across the cut kept its first
    // part, and a script moved the cut with the length of its question.
    throw new EffectFailure(`chat: the model answered HTTP ${response.status}: ${keyMasked(text, ERROR_QUOTED_CHARS)}`);
  }
  if (!complete) {
    throw new EffectFailure(
      `chat: the model's answer is larger than the ${answerLimitBytes(answerLimitChars)} bytes tacit reads of one; ask for a shorter answer ` +
        `(tacit keeps at most ${answerLimitChars} characters of one anyway${llm.answerLimitChars === undefined ? "" : ", as config libraryConfig.llm.answerLimitChars says"})`,
    );
  }
  if (nestedDeeperThan(text, ANSWER_DEPTH_LIMIT)) {
    throw new EffectFailure(`chat: the model's answer is nested deeper than ${ANSWER_DEPTH_LIMIT} levels, which no chat completion is; it was not read`);
  }
  let content: unknown;
  try {
    content = (JSON.parse(text) as { choices?: Array<{ message?: { content?: unknown } }> }).choices?.[0]?.message?.content;
  } catch {
    throw new EffectFailure("chat: the model's answer is not JSON");
  }
  if (typeof content !== "string") throw new EffectFailure("chat: the model's answer has no choices[0].message.content");
  // Masked before it is cut, as an error answer is: every reply masks a whole key, not a piece. Cut
  // as an answer cut at a size limit is (see HostSecrets.cutText), past its last characters the
  // key's longest form could begin in: what is left ends at the limit, a form across it masked.
  const kept = content.length > answerLimitChars ? hostSecrets.cutText(redactKey(content, llm.apiKey).slice(0, answerLimitChars + hostSecrets.cutMargin)) : content;
  // The model's server has the key: an answer that holds it escaped or in another case (a proxy
  // reporting what it forwarded) was none of the forms the scrub of replies knows, and a classified
  // answer goes to the secure output and can be sent on. Masked here, for both.
  return hostSecrets.inServerText(kept);
}
