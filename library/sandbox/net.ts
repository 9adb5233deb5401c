// requestNetwork and the Network it hands out: a scope token and nothing else. Secret
// headers and classified bodies travel as handles; the host sends their plaintext.

import type { HttpRequestFields, HttpResponse } from "../protocol.js";
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
    httpGet(url: string, given: RequestOptions = {}): string {
      return this.#send("GET", url, knownOptions<RequestOptions>(given, HEADER_OPTIONS, "httpGet(url, options)", getHint), null).body;
    }
    httpPost(url: string, body: string, given: RequestOptions = {}): string {
      const options = knownOptions<RequestOptions>(given, [...HEADER_OPTIONS, "contentType"], "httpPost(url, body, options)", postHint);
      return this.#send("POST", url, { contentType: "text/plain; charset=utf-8", ...options }, textValue(body, "httpPost(url, body): body")).body;
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

  return { requestNetwork };
}
