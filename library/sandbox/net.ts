// requestNetwork and the Network it hands out: a scope token and nothing else. Secret
// headers and classified bodies travel as handles; the host sends their plaintext.

import { type HttpRequestFields, type HttpResponse, isSuccessStatus } from "../protocol.js";
import type { Channel } from "./channel.js";
import type { ClassifiedApi } from "./classified.js";
import { withScope } from "./scope.js";
import { knownOptions, textValue } from "./call-values.js";

interface RequestOptions {
  headers?: Record<string, string>;
  secretHeaders?: Record<string, unknown>;
  contentType?: string;
  body?: string;
}

/**
 * Headers as the plain object the interface names. Read with Object.entries, a Map (secret
 * headers included) gave none, silently, and an array of [name, value] pairs (fetch's shape)
 * sent a header named "0"; each is refused, saying how to pass it.
 */
function headerRecord(value: unknown, what: string): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  const prototype = typeof value === "object" ? Object.getPrototypeOf(value) : undefined;
  if (prototype === Object.prototype || prototype === null) return value as Record<string, unknown>;
  const shape = Array.isArray(value) ? "an array" : value instanceof Map ? "a Map" : typeof value === "object" ? "an object of a class" : `a ${typeof value}`;
  throw new TypeError(
    `${what} must be a plain object of header names to values (like { accept: "application/json" }), not ${shape}; nothing was sent. ` +
      "For a Map or a list of [name, value] pairs, pass Object.fromEntries(it)",
  );
}

/**
 * Reason phrases of the statuses RFC 9110 and its kin define. An error names a status by these,
 * never by the server's own reason phrase: that is the server's to choose, and could echo what
 * the request carried.
 */
const STATUS_TEXTS: Readonly<Record<number, string>> = {
  200: "OK", 201: "Created", 202: "Accepted", 203: "Non-Authoritative Information", 204: "No Content", 205: "Reset Content",
  206: "Partial Content", 300: "Multiple Choices", 301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified",
  305: "Use Proxy", 307: "Temporary Redirect", 308: "Permanent Redirect", 400: "Bad Request", 401: "Unauthorized",
  402: "Payment Required", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed", 406: "Not Acceptable",
  407: "Proxy Authentication Required", 408: "Request Timeout", 409: "Conflict", 410: "Gone", 411: "Length Required",
  412: "Precondition Failed", 413: "Content Too Large", 414: "URI Too Long", 415: "Unsupported Media Type",
  416: "Range Not Satisfiable", 417: "Expectation Failed", 418: "I'm a teapot", 421: "Misdirected Request",
  422: "Unprocessable Content", 423: "Locked", 424: "Failed Dependency", 425: "Too Early", 426: "Upgrade Required",
  428: "Precondition Required", 429: "Too Many Requests", 431: "Request Header Fields Too Large",
  451: "Unavailable For Legal Reasons", 500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway",
  503: "Service Unavailable", 504: "Gateway Timeout", 505: "HTTP Version Not Supported", 506: "Variant Also Negotiates",
  507: "Insufficient Storage", 508: "Loop Detected", 510: "Not Extended", 511: "Network Authentication Required",
};

/** The most characters of an answer's body an HttpStatusError's message quotes. */
const QUOTED_BODY_CHARS = 200;

/** The start of a body, for a message: whole characters, marked when there is more. */
function bodyStart(body: string): string {
  if (body.length <= QUOTED_BODY_CHARS) return JSON.stringify(body);
  const end = /[\uD800-\uDBFF]/.test(body[QUOTED_BODY_CHARS - 1] ?? "") ? QUOTED_BODY_CHARS - 1 : QUOTED_BODY_CHARS;
  return `${JSON.stringify(body.slice(0, end))}… (${body.length - end} more characters)`;
}

/** The redirects tacit follows when they carry a Location (runner/net/http-client.ts's REDIRECTS). */
const FOLLOWED_REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * Why a 3xx that reached the script is not the resource httpGet and httpPost promise: a redirect
 * tacit follows never does (it is followed, or refused with an error that says why), so this is
 * a 304 (no body: the copy the request's own validators name is current), a redirect without a
 * Location, or a 3xx tacit does not follow (300's list of choices, 305, 306, one not defined).
 */
function redirectReason(status: number, call: string): string {
  if (status === 304) {
    return `: the server says the copy the request's If-None-Match or If-Modified-Since header names is still current, and sends no body, so ${call} has no text to return. For a conditional request, use httpRequest and check for status 304`;
  }
  if (FOLLOWED_REDIRECTS.has(status)) return `, a redirect without a Location header, so there is no URL to follow: the server's redirect is broken`;
  if (status === 300) return `: the server offers several versions and leaves the choice to the client (tacit follows only 301, 302, 303, 307 and 308); its body lists them, and the one you want can be requested directly`;
  return `, a redirect tacit does not follow (it follows only 301, 302, 303, 307 and 308)`;
}

/**
 * An answer that is not 2xx (after the redirects followed), to httpGet or httpPost: an error
 * page is never taken for the answer, as with curl --fail, and neither is a 3xx that was not
 * followed, where curl --fail returns its body: a 304 has none (a script that parses the text
 * got "" for the resource), and a 300 page or a broken redirect is no more the resource than a
 * 404 page is (fetch's `ok` is false for all of them). httpRequest returns every status. The
 * message quotes the start of the body as httpGet or httpPost would have returned it (secret
 * headers redacted). Not httpPostClassified's: its answer's status could tell about the body it
 * sent, so it is not the script's to see (runner/monitor.ts).
 */
export class HttpStatusError extends Error {
  override name = "HttpStatusError";
  readonly status: number;
  readonly method: string;
  readonly url: string;

  constructor(call: string, method: string, url: string, status: number, body: string) {
    const statusText = STATUS_TEXTS[status];
    const answered = `${method} ${url} answered ${status}${statusText === undefined ? "" : ` ${statusText}`}`;
    const why = status >= 300 && status <= 399 ? redirectReason(status, call) : "";
    const quoted = body === "" ? "Its body was empty" : `Its body began: ${bodyStart(body)}`;
    const instead = `Use net.httpRequest(${JSON.stringify(method)}, url${method === "POST" ? ", { body }" : ""}) to read the status and body of any answer.`;
    super(`${answered}${why}; ${call} returns only a 2xx answer. ${instead} ${quoted}.`);
    this.status = status;
    this.method = method;
    this.url = url;
  }
}

const HEADER_OPTIONS = ["headers", "secretHeaders"];

function requestHint(key: string): string {
  return key === "timeout" || key === "timeoutMs" ? "The operator sets the request timeout (libraryConfig.networkTimeoutMs)" : "";
}
function getHint(key: string): string {
  if (key === "method" || key === "body") return "For another method or a body, use httpRequest(method, url, { body }) or httpPost(url, body)";
  return requestHint(key);
}
function postHint(key: string): string {
  if (key === "method") return "For another method, use httpRequest(method, url, { body })";
  if (key === "body") return "The body is httpPost's second argument";
  return requestHint(key);
}

export function createNetworkApi(channel: Channel, classified: ClassifiedApi) {
  type Classified = ReturnType<ClassifiedApi["wrap"]>;

  function fields(scope: string, method: string, url: string, options: RequestOptions, body: string | null): HttpRequestFields {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(headerRecord(options.headers, "options.headers"))) headers[name] = String(value);
    if (options.contentType !== undefined) headers["content-type"] = String(options.contentType);
    const secretHeaders: Record<string, string> = {};
    for (const [name, value] of Object.entries(headerRecord(options.secretHeaders, "options.secretHeaders"))) {
      secretHeaders[name] = classified.handleOf(value, `secretHeaders["${name}"]`);
    }
    return { scope, method, url: String(url), headers, secretHeaders, body, classifiedBody: null };
  }

  class Network {
    readonly #scope: string;

    constructor(scope: string) {
      this.#scope = scope;
    }
    #send(method: string, url: string, options: RequestOptions, body: string | null): HttpResponse {
      return channel.request({ kind: "HttpRequest", ...fields(this.#scope, method, url, options, body), classifiedBody: null });
    }
    httpRequest(method: string, url: string, given: RequestOptions = {}): HttpResponse {
      const options = knownOptions<RequestOptions>(given, [...HEADER_OPTIONS, "contentType", "body"], "httpRequest(method, url, options)", requestHint);
      const body = options.body === undefined ? null : textValue(options.body, "httpRequest(method, url, options): options.body");
      return this.#send(String(method), url, options, body);
    }
    /** The body of a 2xx answer; any other status throws an HttpStatusError. */
    #successBody(call: string, method: string, url: string, options: RequestOptions, body: string | null): string {
      const answer = this.#send(method, url, options, body);
      if (!isSuccessStatus(answer.status)) throw new HttpStatusError(call, method, String(url), answer.status, answer.body);
      return answer.body;
    }
    httpGet(url: string, given: RequestOptions = {}): string {
      return this.#successBody("httpGet", "GET", url, knownOptions<RequestOptions>(given, HEADER_OPTIONS, "httpGet(url, options)", getHint), null);
    }
    httpPost(url: string, body: string, given: RequestOptions = {}): string {
      const options = knownOptions<RequestOptions>(given, [...HEADER_OPTIONS, "contentType"], "httpPost(url, body, options)", postHint);
      return this.#successBody("httpPost", "POST", url, { contentType: "text/plain; charset=utf-8", ...options }, textValue(body, "httpPost(url, body): body"));
    }
    httpPostClassified(url: string, body: Classified, given: RequestOptions = {}): Classified {
      const options = knownOptions<RequestOptions>(given, [...HEADER_OPTIONS, "contentType"], "httpPostClassified(url, body, options)", postHint);
      const request = fields(this.#scope, "POST", url, { contentType: "text/plain; charset=utf-8", ...options }, null);
      request.classifiedBody = classified.handleOf(body, "httpPostClassified(url, body)");
      return classified.wrap(channel.request({ kind: "HttpRequestClassified", ...request }));
    }
    toString(): string {
      return "Network";
    }
  }

  function requestNetwork<T>(hosts: readonly string[], op: (net: Network) => T): T {
    if (!Array.isArray(hosts)) throw new TypeError("requestNetwork(hosts, op): hosts must be an array of host names");
    let scope = "";
    return withScope(
      "requestNetwork",
      () => {
        scope = channel.request({ kind: "NetOpenScope", hosts: hosts.map(String) }).scope;
        return new Network(scope);
      },
      () => void channel.request({ kind: "CloseScope", scope }),
      op,
    );
  }

  return { requestNetwork, HttpStatusError };
}
