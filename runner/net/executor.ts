// The network executor: HTTP for requestNetwork scopes. A URL is requested only if it
// matches the scope's hosts and the operator's --network-permissions; with those unset,
// nothing is reachable. Secret headers are unwrapped here and never come back: every
// classified plaintext a request carried is redacted from what the agent sees of the answer.

import { isIP } from "node:net";
import type { HttpRequestFields } from "../../library/protocol.js";
import type { CapabilityTable } from "../capabilities.js";
import type { ClassifiedStore } from "../classified/store.js";
import { HTTP_URL_LIMIT_CHARS } from "../limits.js";
import type { RequestProgress } from "../audit/events.js";
import { EffectFailure, PolicyDenial } from "../refusals.js";
import type { HostSecrets } from "../host-secrets.js";
import { type BeforeEffect, NOTHING_TO_LOG } from "../before-effect.js";
import type { RedirectVetting } from "../approval/redirects.js";
import type { HttpLimits, UrlCheck } from "./http-client.js";
import { hostOf, HostPatternError, type HostPattern, parseHostPattern, patternMatches } from "./host-policy.js";
import { CUT_END_CHARS, MIN_REDACTED_LENGTH, redact } from "./redaction.js";
import { redirectNotFollowed } from "./redirect-refusal.js";
import { secretHeadersPrintedBecause } from "./debug-output.js";
import { chosen, quoting, type Said, sayAsIs, sayer, type ServerChosen } from "./server-text.js";

const MAX_REDIRECTS = 5;
/**
 * Secret header values, all together, past which none is sent: servers refuse headers far
 * shorter (8-16 KiB), and redaction's automaton grows with what it looks for.
 */
const MAX_SECRET_HEADER_CHARS = 64 * 1024;

export interface NetworkPolicy {
  /** Parsed --network-permissions; null when unset (nothing reachable). */
  permissions: readonly HostPattern[] | null;
  /** Hosts a person allowed for this run beyond permissions (a live list: see RunGrants). */
  grantedHosts: readonly HostPattern[];
  maxResponseBytes: number;
  timeoutMs: number;
  /** Refuses a redirect the approval policy would ask a person about (approval/redirects.ts); null without rules. */
  redirects?: RedirectVetting | null;
}

/** What the monitor hands over: the protocol's request fields. */
export type HttpRequestAction = HttpRequestFields;

/** An answer as the host holds it: with the plaintexts the request carried, for redaction. */
export interface HttpAnswer {
  status: number;
  /** The body as received (cut at the limit when `truncated`), before any redaction. */
  body: string;
  truncated: boolean;
  /**
   * Whether the body may end partway into a secret because of the size limit: it was cut there,
   * or it fills the limit. Only then is a partial secret at its end masked (see redact).
   */
  cut: boolean;
  limitBytes: number;
  /** A part from the first byte, cut as the size limit cuts because the host has secrets of its own (see partPlace). */
  headPart: boolean;
  secrets: string[];
  /** httpPostClassified's only: why the redirect that is its answer was not followed (see httpExchange). */
  unfollowedRedirect: string | null;
  /** httpPostClassified's only: why its answer could not be read once its connection was up (the answer is then empty). */
  failedAfterSending: string | null;
}

function truncationMarker(answer: HttpAnswer, seen = false): string {
  // Said of every such answer, masked at its end or not: see redact's leaveOutEnd.
  const leftOut = seen && answer.cut && answer.secrets.some((secret) => secret.length > 0)
    ? `; unless a mask ends it, its last ${CUT_END_CHARS} characters are left out too, where a secret this request carried could begin partway`
    : "";
  if (answer.truncated) return `\n[tacit: response truncated at ${answer.limitBytes} bytes${leftOut}]\n`;
  if (leftOut !== "" && !answer.headPart) return `\n[tacit: the response fills the size limit (${answer.limitBytes} bytes)${leftOut}]\n`;
  return answer.headPart
    ? "\n[tacit: this part ends early: its last characters, where the operator's LLM key could begin, are left out; ask for a longer part or the whole answer for them]\n"
    : "";
}

function parsePatterns(sources: readonly string[], what: string): HostPattern[] {
  try {
    return sources.map(parseHostPattern);
  } catch (error) {
    if (error instanceof HostPatternError) throw new PolicyDenial(`${what}: ${error.message}`);
    throw error;
  }
}

export function parseNetworkPermissions(sources: readonly string[] | null): HostPattern[] | null {
  return sources === null ? null : sources.map(parseHostPattern);
}

/**
 * The plaintext, if it is blank or long enough to be redacted from an answer; else empty, its
 * reason noted in the secure output. Judged trimmed, as servers trim header values before
 * echoing them. Whether a value can be sent depends on the plaintext, so the script is told
 * nothing of it, as of a value that could not be computed (sent empty, too): a refusal, or
 * stopping the evaluation, told the agent a bit of the secret per request or per run.
 */
function redactableOrEmpty(plaintext: string, what: string, note: (reason: string) => void): string {
  const core = plaintext.trim().length;
  if (core === 0 || core >= MIN_REDACTED_LENGTH) return plaintext;
  note(
    `${what} was sent empty: a secret of fewer than ${MIN_REDACTED_LENGTH} characters could not be redacted from the answer ` +
      "(a host that echoes requests would show it). Send the whole secret, not a piece of it.",
  );
  return "";
}

/**
 * Headers that decide where a message ends or what becomes of the connection. Node frames
 * the body itself; a script's own Content-Length (shorter than its body) smuggled a second
 * request onto the connection that took the next request's first bytes, secret header
 * included, as its body, and an echoing host gave them back past redaction. Refused in
 * `headers` and `secretHeaders` alike.
 */
const FRAMING_HEADERS = new Set(["content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "te", "trailer", "expect", "proxy-connection"]);

/**
 * Headers that make many servers (Google's APIs, ASP.NET, frameworks' method-override
 * middleware) run another method than the request's: a POST carrying "X-HTTP-Method-Override:
 * DELETE" deleted past an approval rule on DELETE, which judges the method tacit sends.
 */
const METHOD_OVERRIDE_HEADERS = new Set(["x-http-method-override", "x-http-method", "x-method-override"]);

/** Refuses the headers tacit owns (framing, routing, the method): see the sets above. */
function refuseHeadersTacitSets(action: HttpRequestAction): void {
  for (const name of [...Object.keys(action.headers), ...Object.keys(action.secretHeaders)]) {
    const lower = name.trim().toLowerCase();
    if (FRAMING_HEADERS.has(lower)) {
      throw new PolicyDenial(`the ${name} header is set by tacit, not by scripts (it decides how the request is framed); nothing was sent`);
    }
    if (METHOD_OVERRIDE_HEADERS.has(lower)) {
      throw new PolicyDenial(`the ${name} header is refused: servers that honour it run another method than the one sent, which is what approval rules judge; use httpRequest(method, …); nothing was sent`);
    }
    // Node takes the TLS server name and the certificate check from a Host header: with one,
    // a connection to a permitted address spoke to, and verified, another site behind it (a
    // CDN's shared front): domain fronting past --network-permissions.
    if (lower === "host") {
      throw new PolicyDenial(`the ${name} header is set by tacit from the URL, which is what --network-permissions judges; nothing was sent`);
    }
  }
}

/**
 * Headers that ask for part of an answer: Range, and Request-Range, which Apache httpd still
 * reads in its place. Redaction finds a secret's forms in the answer it is given; a part that
 * starts inside an echoed secret, or a piece shorter than any form it masks, is none of them.
 * Apache serves ranges of CGI and PHP output, echoes included: a security review's one request
 * for "bytes=N-" with N inside the echoed secret header got all of the secret but its first
 * three characters back, unredacted. Refused with secret headers (a Range without them is an
 * ordinary download of part of a file).
 */
const PART_HEADERS = new Set(["range", "request-range"]);

/** Refuses a request for part of an answer that would carry secret headers: see PART_HEADERS. */
function refusePartialWithSecrets(action: HttpRequestAction): void {
  if (Object.keys(action.secretHeaders).length === 0) return;
  for (const name of [...Object.keys(action.headers), ...Object.keys(action.secretHeaders)]) {
    if (PART_HEADERS.has(name.trim().toLowerCase())) {
      throw new PolicyDenial(
        `the ${name} header is refused on a request with secretHeaders: a part of an answer can start inside an echoed secret, ` +
          "where redaction cannot recognise it; request the whole answer (an echoed secret is redacted in it), or ask for the range " +
          "in a request without secretHeaders; nothing was sent",
      );
    }
  }
}

/**
 * Whether an answer is a part of one (206 Partial Content, or a Content-Range): with secret
 * headers sent, it is not kept, whatever asked for it (Azure Storage takes x-ms-range, and other
 * services a range in the query).
 */
function isPartialAnswer(outcome: { status: number; contentRange: string | null }): boolean {
  return outcome.status === 206 || outcome.contentRange !== null;
}

/**
 * Where a part of an answer starts and ends, for the host's own secrets (the LLM key): "head" for
 * one part from the first byte that ends before the last, "whole" for one from the first to the
 * last, "elsewhere" for any other (from a later byte, or several parts in multipart/byteranges,
 * which name their places in their own headers). A part that starts inside the key shows all of
 * it but its first characters, which the key's masking cannot recognise, and a script chooses
 * where a part starts with an ordinary Range header (a file server answers with 206 and
 * Content-Range): one that starts 3 bytes into a served config's key gave all of it but "sk-".
 * A part from the first byte ends where an answer cut at the size limit does, and is cut as one.
 */
function partPlace(contentRange: string | null): "head" | "whole" | "elsewhere" {
  const head = /^\s*bytes\s+0-(\d+)\/(\d+|\*)\s*$/i.exec(contentRange ?? "");
  if (head === null) return "elsewhere";
  return head[2] !== "*" && Number(head[1]) + 1 === Number(head[2]) ? "whole" : "head";
}

/** What Node's HTTP client accepts in a header value: tab, printable ASCII and bytes 0x80-0xff. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** An HTTP token: what a method or a header name may be (RFC 9110; Node checks the same). */
const HTTP_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Refuses header names and plain values Node would refuse, before any secret is unwrapped.
 * Refused by Node, after, the error quoted the script's own name, and redaction masked in it
 * whatever was a form of a secret the request carried: a name of a hundred guesses of a
 * password from a classified .env told which one was right, with nothing sent.
 */
function refuseMalformedHeaders(action: HttpRequestAction): void {
  for (const name of [...Object.keys(action.headers), ...Object.keys(action.secretHeaders)]) {
    if (!HTTP_TOKEN.test(name)) {
      throw new EffectFailure(`${JSON.stringify(name)} is not a header name (a token of letters, digits and !#$%&'*+.^_\`|~-); nothing was sent`);
    }
  }
  for (const [name, value] of Object.entries(action.headers)) {
    if (!HEADER_VALUE.test(value)) {
      throw new EffectFailure(`the value of the ${name} header holds characters a header cannot carry (a line break, a control character, or one past \\xff); nothing was sent`);
    }
  }
}

/**
 * Why `text` is no absolute URL, for the refusal: "is not an absolute URL" alone was said of
 * "http://127.0.0.1:99999/" too, whose fault is its port, and of a host no URL can hold.
 */
function whyNoUrl(text: string): string {
  if (URL.canParse(text, "http://host.invalid/")) {
    return /^[^/.?#][^:/?#]*(\/|$)/.test(text) ? `it names no scheme: give the whole URL (${JSON.stringify(`https://${text}`)}, say)` : "it is relative: give the whole URL, with https:// or http:// and the host";
  }
  const authority = /^[a-z][a-z0-9+.-]*:\/\/(?:[^/?#@]*@)?(\[[^\]/?#]*\]?|[^/?#:]*)(?::([^/?#]*))?/i.exec(text.trim());
  if (authority === null) return "it names no host (a URL is like https://api.example.com/path)";
  const [, host = "", port] = authority;
  if (port !== undefined && port !== "" && !/^\d+$/.test(port)) return `its port ${JSON.stringify(port)} is not a number`;
  if (port !== undefined && /^\d+$/.test(port) && Number(port) > 65535) return `its port ${Number(port)} is past 65535, the highest there is`;
  if (host === "") return "it names no host (a URL is like https://api.example.com/path)";
  return `its host ${JSON.stringify(host)} is no host name or address a URL can hold (it has a space or another character a host cannot, an IPv4 address with more than 4 parts or one past 255, or an IPv6 one without its ])`;
}

/** The texts of a URL the script chose, as error messages quote them. */
function scriptNamed(url: URL): string[] {
  const host = hostOf(url);
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  return [url.origin, url.host, host, `${host}:${port}`];
}

export class NetworkExecutor {
  /** The redirect hops each request followed (see redirectsOf). */
  private readonly followed = new WeakMap<HttpRequestAction, string[]>();
  /** How far each request's last hop got (see progressOf). */
  private readonly progress = new WeakMap<HttpRequestAction, RequestProgress>();
  /**
   * The last request's secrets, given again to a request with the same ones: the search for their
   * forms is kept by the array (see redaction.ts formSearchFor), and made for each request's own
   * array, with 800 secret headers of 80 characters it cost each request about 2 s of the host's
   * main thread, however short its answer. Values the classified store holds for the evaluation anyway.
   */
  private lastSecrets: string[] = [];

  constructor(
    private readonly policy: NetworkPolicy,
    private readonly capabilities: CapabilityTable,
    private readonly classified: ClassifiedStore,
    private readonly signal: AbortSignal,
    /** The host's own secrets (the LLM key), masked in what a server chose wherever a message or the audit log quotes it. */
    private readonly hostSecrets: HostSecrets,
  ) {}

  /**
   * The redirects `action` followed, each as "METHOD URL" in the order sent, for the audit log:
   * its request records the URL the script gave, and each hop went to a URL the server chose
   * (another permitted host, a 307 carrying the body along). What a server chose may echo a
   * secret the request carried, so each is redacted as an error quoting it is.
   */
  redirectsOf(action: HttpRequestAction): readonly string[] {
    return this.followed.get(action) ?? [];
  }

  /**
   * How far `action` got, for the audit log (see RequestProgress): "not-sent" for one refused or
   * cancelled before its connection was up. Read once its dispatch has settled: an aborted
   * exchange sends nothing more after that.
   */
  progressOf(action: HttpRequestAction): RequestProgress {
    return this.progress.get(action) ?? "not-sent";
  }

  private requirePolicy(): readonly HostPattern[] {
    const granted = this.policy.grantedHosts;
    if (this.policy.permissions === null && granted.length === 0) {
      throw new PolicyDenial(
        "no host is reachable: the operator has not set --network-permissions (config libraryConfig.networkPermissions)",
      );
    }
    return granted.length === 0 ? this.policy.permissions! : [...(this.policy.permissions ?? []), ...granted];
  }

  openScope(hosts: readonly string[]): { scope: string } {
    const permissions = this.requirePolicy();
    if (hosts.length === 0) throw new EffectFailure("requestNetwork(hosts, …): name at least one host");
    const patterns = parsePatterns(hosts, "requestNetwork");
    // A named host no permission could ever match is refused now, not at the first request.
    for (const pattern of patterns) {
      if (pattern.literalHost !== null && !permissions.some((permission) => permission.host.test(pattern.literalHost!))) {
        throw new PolicyDenial(
          `requestNetwork: ${pattern.source} is not permitted by --network-permissions (${permissions.map((p) => p.source).join(", ")}); the operator can add it there (config libraryConfig.networkPermissions)`,
        );
      }
    }
    return { scope: this.capabilities.issue({ kind: "net", hosts: patterns }) };
  }

  /**
   * The check for one URL (each redirect hop too): scope ∩ policy, and whether it is named
   * literally. A hop's refusal says it was a redirect, from where, and that it was not followed:
   * "example.com is not among the hosts this scope asked for" read as if the script had named a
   * host it never did.
   */
  private urlCheck(scopeHosts: readonly HostPattern[], permissions: readonly HostPattern[], first: { method: string; url: URL }): UrlCheck {
    const checkUrl = this.policyCheck(scopeHosts, permissions);
    return (url, method, hop, say) => {
      if (hop === 0) return checkUrl(url, say, (text) => text, true);
      const asks = this.policy.redirects?.(first, { method, url });
      if (asks) {
        // The pattern the rule matched names the hop's host, which the server chose.
        throw new PolicyDenial(
          say`${first.url.origin} redirected the request to ${chosen(url.href)}, which the approval policy puts a person in front of ` +
            say`(${quoting(asks, [url.host, hostOf(url), url.hostname])}); a redirect is never asked about, so it was not followed. Request that URL directly`,
        );
      }
      try {
        return checkUrl(url, say, chosen, false);
      } catch (error) {
        if (error instanceof PolicyDenial || error instanceof EffectFailure) {
          error.message = redirectNotFollowed(say, first.url, url, error.message);
        }
        throw error;
      }
    };
  }

  /**
   * What any URL must pass, the script's or a redirect's: see urlCheck. `quoted` marks a text of
   * the URL as its messages quote it: as it is for the script's, as a server's for a redirect's.
   * `scriptNamed`: the URL is the script's own (not a redirect's, whose host a server chose).
   */
  private policyCheck(
    scopeHosts: readonly HostPattern[],
    permissions: readonly HostPattern[],
  ): (url: URL, say: Said, quoted: (text: string) => string | ServerChosen, scriptNamed: boolean) => { restrictedAllowed: boolean } {
    return (url, say, quoted, scriptNamed) => {
      if (url.protocol !== "http:" && url.protocol !== "https:") {
        throw new PolicyDenial(say`${quoted(url.protocol)} URLs are not supported: only http and https`);
      }
      if (url.username !== "" || url.password !== "") {
        throw new PolicyDenial(say`${quoted(url.host)}: credentials in a URL are refused; send them with secretHeaders (a Classified value) instead`);
      }
      // Node sends a request for port 0 to the scheme's default port (it takes 0 for "none"), so
      // the checks and the audit log judged one port and the request went to another.
      if (url.port === "0") {
        throw new EffectFailure(
          say`${quoted(url.href)}: port 0 is no port a server answers on (Node would send the request to port ${url.protocol === "https:" ? 443 : 80} instead); ` +
            "nothing was sent. Name the server's port, or leave it out for the default",
        );
      }
      // As the URL names it: an IPv6 address in brackets ("::1:8080" read as an address of its own).
      const where = quoted(url.host);
      const permitting = permissions.filter((pattern) => patternMatches(pattern, url));
      const notPermitted = `not permitted by --network-permissions (${permissions.map((p) => p.source).join(", ")})`;
      if (!scopeHosts.some((pattern) => patternMatches(pattern, url))) {
        const scopeHostList = scopeHosts.map((p) => p.source).join(", ");
        // A host the script named that the allowlists do not permit either: "ask for it in the
        // list" alone sent it to a requestNetwork that refuses the host. A redirect's host, which
        // a server chose (from a secret it was sent, maybe), is not judged against the
        // allowlists here: its refusal reads the same whether they would permit it or not.
        if (scriptNamed && permitting.length === 0) {
          throw new PolicyDenial(
            say`${where} is not among the hosts this requestNetwork scope asked for (${scopeHostList}), and it is ${notPermitted} either: ` +
              "the operator can add it there (config libraryConfig.networkPermissions), and then the script can ask for it in the list",
          );
        }
        // As exec's says: what to do instead (the refusal named the scope's hosts and stopped there).
        throw new PolicyDenial(say`${where} is not among the hosts this requestNetwork scope asked for (${scopeHostList}); ask for it in the list`);
      }
      if (permitting.length === 0) {
        throw new PolicyDenial(say`${where} is ${notPermitted}; the operator can add it there (config libraryConfig.networkPermissions)`);
      }
      // Loopback, private and link-local addresses need a literal permission: the operator's,
      // or a person's yes to an address they were shown. A yes to a name (a beyondAllowlist
      // approval) does not show the address it resolves to, which may be the cloud's metadata
      // service.
      const operators = this.policy.permissions ?? [];
      const host = hostOf(url);
      return {
        restrictedAllowed: permitting.some(
          (pattern) => pattern.literalHost === host && (operators.includes(pattern) || isIP(host.replace(/^\[|\]$/g, "")) !== 0),
        ),
      };
    };
  }

  /**
   * Secret header values and a classified body, in plaintext (host-side only). A value that
   * cannot be sent (too short to be redacted from the answer, with characters a header cannot
   * carry, or past what servers take) is sent empty, as one that could not be computed is, and
   * the secure output says why (see redactableOrEmpty).
   */
  private async unwrap(action: HttpRequestAction): Promise<{ secretHeaders: Record<string, string>; body: string | null; secrets: string[] }> {
    const note = (reason: string): void => this.classified.note(`${action.method} ${action.url}: ${reason}`);
    const secretHeaders: Record<string, string> = {};
    for (const [name, handle] of Object.entries(action.secretHeaders)) {
      const text = redactableOrEmpty(await this.plaintextOf(handle), `secretHeaders["${name}"]`, note);
      if (HEADER_VALUE.test(text)) {
        secretHeaders[name] = text;
      } else {
        note(`secretHeaders["${name}"] was sent empty: the value holds characters an HTTP header cannot carry (a line break or a control character).`);
        secretHeaders[name] = "";
      }
    }
    if (Object.values(secretHeaders).reduce((total, text) => total + text.length, 0) > MAX_SECRET_HEADER_CHARS) {
      note(`secretHeaders were sent empty: together they are longer than ${MAX_SECRET_HEADER_CHARS} characters, more than servers take.`);
      for (const name of Object.keys(secretHeaders)) secretHeaders[name] = "";
    }
    const secrets = Object.values(secretHeaders);
    let body = action.body;
    if (action.classifiedBody !== null) {
      body = redactableOrEmpty(await this.plaintextOf(action.classifiedBody), "the classified body", note);
      secrets.push(body);
    }
    const same = secrets.length === this.lastSecrets.length && secrets.every((secret, i) => secret === this.lastSecrets[i]);
    if (!same) this.lastSecrets = secrets;
    return { secretHeaders, body, secrets: this.lastSecrets };
  }

  private async plaintextOf(handle: string): Promise<string> {
    // Settled (see MAP_SETTLE_MS): the script times this request.
    const value = await this.classified.settled(handle, "a request");
    // A value that could not be computed is sent empty: refusing would tell the agent so.
    return value.ok ? (typeof value.value === "string" ? value.value : JSON.stringify(value.value)) : "";
  }

  /** The checks before anything is unwrapped or sent (scope, policy, URL); throws the refusal. */
  authorize(action: HttpRequestAction): { url: URL; check: UrlCheck } {
    const scope = this.capabilities.get(action.scope, "net");
    if (!HTTP_TOKEN.test(action.method)) {
      throw new EffectFailure(`"${action.method}" is not an HTTP method (a token like GET, POST or PATCH); nothing was sent`);
    }
    refuseHeadersTacitSets(action);
    refuseMalformedHeaders(action);
    refusePartialWithSecrets(action);
    const printed = secretHeadersPrintedBecause(Object.keys(action.secretHeaders).length > 0);
    if (printed !== null) throw new PolicyDenial(printed);
    if (action.url.length > HTTP_URL_LIMIT_CHARS) throw new EffectFailure(`a URL of ${action.url.length} characters is longer than tacit sends (${HTTP_URL_LIMIT_CHARS}); nothing was sent`);
    const permissions = this.requirePolicy();
    let url: URL;
    try {
      url = new URL(action.url);
    } catch {
      throw new EffectFailure(`"${action.url}" is not a URL tacit can send: ${whyNoUrl(action.url)}; nothing was sent`);
    }
    const check = this.urlCheck(scope.hosts, permissions, { method: action.method, url });
    check(url, action.method, 0, sayAsIs); // The script's URL: nothing in its messages is a server's.
    return { url, check };
  }

  /** `beforeEffect`: told once every check has passed, before anything is sent (see BeforeEffect). */
  async request(action: HttpRequestAction, beforeEffect: BeforeEffect = NOTHING_TO_LOG): Promise<HttpAnswer> {
    const { url, check } = this.authorize(action); // Decided before anything is unwrapped or sent.
    const { secretHeaders, body, secrets } = await this.unwrap(action);
    const limits: HttpLimits = { maxResponseBytes: this.policy.maxResponseBytes, timeoutMs: this.policy.timeoutMs, maxRedirects: MAX_REDIRECTS };
    // Loaded on first use: node:http, node:https and TLS cost start-up time every run.
    const { answerReadings, httpExchange } = await import("./http-client.js");
    // A redirect httpPostClassified cannot follow is its answer, classified: failing would tell
    // the script the status of an answer it may not see (monitor.ts).
    let unfollowedRedirect: string | null = null;
    let bodyMayHaveGone = false;
    // What the script itself named (the URL's host and port) is never masked, in what a server
    // chose either: a failed connection quotes them, and a mask there told a right guess of a
    // secret from a wrong one (a PIN sent as a secret header, tried as the port of 127.0.0.1:*).
    const named = scriptNamed(url);
    // Messages redact what a server chose in them, and nothing else (see server-text.ts). Whole
    // texts, as the server sent them: a mask on an end that only begins a secret confirmed a guess.
    const say = sayer((text) => this.hostSecrets.inServerTextWith(text, secrets, named, false));
    try {
      const outcome = await httpExchange(
        {
          method: action.method.toUpperCase(),
          url,
          headers: { ...action.headers, ...secretHeaders },
          originBoundHeaders: new Set(["authorization", "cookie", "proxy-authorization", ...Object.keys(secretHeaders).map((n) => n.toLowerCase())]),
          body: body === null ? null : Buffer.from(body, "utf8"),
        },
        check,
        limits,
        this.signal,
        say,
        {
          // Told as a hop's exchange starts, before anything of it is sent: logged then (see BeforeEffect), and a
          // hop the log cannot take is not sent.
          followed: (method, next) => {
            const hop = this.hostSecrets.inServerTextWith(`${method} ${next.href}`, secrets, named, true);
            beforeEffect({ hop });
            let hops = this.followed.get(action);
            if (hops === undefined) this.followed.set(action, (hops = []));
            hops.push(hop);
          },
          unfollowed: action.classifiedBody === null ? undefined : (reason) => (unfollowedRedirect = reason),
          sending: () => {
            beforeEffect();
            // Each hop starts over: a redirect's hop is sent anew (the hops before it were answered).
            this.progress.set(action, "not-sent");
          },
          connected: () => {
            bodyMayHaveGone = true;
            this.progress.set(action, "connected");
          },
          // Only once connected: written whole, it went to the server (see ExchangeHooks.written).
          written: () => {
            if (this.progress.get(action) === "connected") this.progress.set(action, "sent");
          },
          answered: () => this.progress.set(action, "answered"),
        },
      );
      // Only for an answer the script sees: a classified one is never redacted, and refused, a
      // part told the script the status (206) or a header of an answer it may not see (monitor.ts).
      if (action.classifiedBody === null && Object.keys(secretHeaders).length > 0 && isPartialAnswer(outcome)) {
        throw new PolicyDenial(
          `${url.origin} answered with a part of its answer (${outcome.status === 206 ? "206 Partial Content" : "a Content-Range"}) ` +
            "to a request with secretHeaders; a part can start inside an echoed secret, where redaction cannot recognise it, so nothing of it was kept. " +
            "Ask for the whole answer, or for the part in a request without secretHeaders",
        );
      }
      // A part a script sees, where the host has secrets of its own: see partPlace. Decided by where
      // the part lies (the script's Range), never by what it holds: no oracle of the key.
      const part = action.classifiedBody === null && !this.hostSecrets.empty && isPartialAnswer(outcome) ? partPlace(outcome.contentRange) : null;
      if (part === "elsewhere") {
        throw new PolicyDenial(
          `${url.origin} answered with a part of its answer that does not start at its first byte (${outcome.contentRange === null ? `${outcome.status}, several parts or none named` : "a Content-Range from a later byte"}); ` +
            "a part can start inside the operator's LLM key, where the key's masking cannot recognise it, so nothing of it was kept. " +
            "Ask for the whole answer (the key is masked in it), or for a part from the first byte (Range: bytes=0-N)",
        );
      }
      const { text, unknownCharset, others } = answerReadings(outcome, url.origin, say);
      const cut = outcome.truncated || outcome.body.length >= limits.maxResponseBytes || part === "head";
      // Decided by the name the answer gives its charset, not by what the bytes hold: no oracle.
      if (action.classifiedBody === null && secrets.length > 0 && unknownCharset !== null) {
        throw new PolicyDenial(
          say`${url.origin} answered in ${chosen(unknownCharset)}, a charset tacit does not read: in its bytes a secret this request carried ` +
            "would be none of the forms redaction finds, so nothing of the answer was kept. Ask for UTF-8 (an Accept header with " +
            "charset=utf-8), or make the request without secretHeaders",
        );
      }
      // Whether another reading holds a secret depends on the plaintext, as whether an echo came
      // back redacted does: one bit a request, which an echoing host gives anyway (see the README).
      if (action.classifiedBody === null && secrets.length > 0 && others.some((other) => redact(other, secrets, [], cut) !== other)) {
        throw new PolicyDenial(
          `${url.origin} answered in bytes that, read another way than as its Content-Type says, hold a secret this request carried, ` +
            "where redaction of the text as read would not find it; nothing of the answer was kept. Ask for UTF-8 (an Accept header " +
            "with charset=utf-8), or make the request without secretHeaders",
        );
      }
      // The same for the operator's LLM key: a body of the key's bytes labelled UTF-16 (a Content-Type
      // the server chose, or one an object store lets a request choose) read as characters that
      // held no form of it, and a script that wrote them back as UTF-16 had the key whole. Decided
      // by whole forms in the bytes, as masking the text as read is: no more than a mask says.
      if (action.classifiedBody === null && others.some((other) => this.hostSecrets.heldIn(other))) {
        throw new PolicyDenial(
          `${url.origin} answered in bytes that, read another way than as its Content-Type says, hold the operator's LLM key, ` +
            "where masking of the text as read would not find it; nothing of the answer was kept. Ask for UTF-8 (an Accept header " +
            "with charset=utf-8)",
        );
      }
      return { status: outcome.status, body: text, truncated: outcome.truncated, cut, limitBytes: limits.maxResponseBytes, headPart: part === "head", secrets, unfollowedRedirect, failedAfterSending: null };
    } catch (error) {
      // httpPostClassified: once the server may have had the secret, or any part of it (the
      // connection is up: see httpExchange's `connected`), how its answer failed (an unknown
      // coding, a tunnel, a cut, a time-out) is the server's doing and may depend on the secret,
      // as its status may: the answer is then an empty one, classified as any other, and the
      // reason goes to the secure output (monitor.ts). Before that, a failure depends on the URL alone.
      if (action.classifiedBody !== null && bodyMayHaveGone && !this.signal.aborted) {
        const reason = this.hostSecrets.inServerTextWith(error instanceof Error ? error.message : String(error), secrets, named, true);
        return { status: 0, body: "", truncated: false, cut: false, limitBytes: limits.maxResponseBytes, headPart: false, secrets, unfollowedRedirect: null, failedAfterSending: reason };
      }
      // Not redacted as a whole: each message was built with `say`, which redacted what a server
      // chose in it as it was put in, and nothing else. A mask on tacit's or Node's own words (or
      // the script's) told a secret that was one of them from one that was not: a secret header
      // "ECONNREFUSED" or not, as a bit of the secret said, sent to a closed port, or "among" to a
      // host that redirects out of the scope (its refusal "… is not among the hosts …").
      if (error instanceof PolicyDenial || error instanceof EffectFailure) throw error;
      throw new EffectFailure(`${url.origin}: ${(error as Error).message}`);
    }
  }

  /**
   * What the agent may see of an answer: everything the request carried in secret, redacted; a
   * partial secret at its end only when the size limit may have cut it there (see redact), and
   * then, where no mask ends it, its last characters left out (see redact's leaveOutEnd). An
   * answer the limit may have cut ends before the last characters the host's own secrets could
   * have been cut in (see HostSecrets.cutText). The host's own secrets are masked as in any text a
   * server chose (HostSecrets.inServerText): the reply's scrub knows their whole forms only, and a
   * body that escaped one character of the key ("%73k-…", "&#x2F;" for its "/", JSON's "\u002b")
   * handed it to a script that decoded it. A body that holds none of them is left as it is. Both
   * are found in the body as it came and masked together (HostSecrets.inServerTextWith): the
   * request's masks first broke the key's forms, and a script that sent its public lead as a
   * secret header read the rest of it.
   */
  static visible(answer: HttpAnswer, hostSecrets: HostSecrets): { status: number; body: string } {
    const body = answer.cut ? hostSecrets.cutText(answer.body) : answer.body;
    return { status: answer.status, body: hostSecrets.inServerTextWith(body, answer.secrets, [], answer.cut, true) + truncationMarker(answer, true) };
  }

  /** The whole answer, for the classified store (it never reaches the agent). */
  static classifiedText(answer: HttpAnswer): string {
    return answer.body + truncationMarker(answer);
  }
}
