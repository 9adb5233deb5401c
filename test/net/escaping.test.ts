// Echoes escaped the way other servers' default encoders escape, through the real CLI. A key
// with "+" or "/" (base64: an AWS secret access key, most random API keys) is common, and
// ASP.NET Core's JSON (System.Text.Json's default encoder) writes "+" as \u002B, Razor's HTML
// encoder as &#x2B;, Go's html/template as &#43;: none of them was a form redaction looked for,
// and JSON.parse undoes the first by itself.

import path from "node:path";
import { describe, expect, it } from "vitest";
import { expectNoLeak } from "../files/fixtures.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, type CliResult, type Handler, isEnvFile, lit, makeCanary, permit, perTestResources, tacit, writeTree } from "./fixtures.js";

const resources = perTestResources("tacit-net-escaping-", { concurrent: true });

/** \uXXXX in upper case, as .NET writes it. */
const unicodeEscape = (code: number): string => `\\u${code.toString(16).toUpperCase().padStart(4, "0")}`;

/**
 * A string as System.Text.Json writes it by default (JavaScriptEncoder.Default): the
 * HTML-sensitive characters " & ' + < > ` and every character outside printable ASCII as
 * \uXXXX, the backslash and the usual controls in short form.
 */
function systemTextJson(value: string): string {
  const short: Record<string, string> = { "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f" };
  let out = "";
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    const code = value.charCodeAt(i);
    out += short[c] ?? (code < 0x20 || code > 0x7e || "\"&'+<>`".includes(c) ? unicodeEscape(code) : c);
  }
  return `"${out}"`;
}

/** A string as Razor's default HtmlEncoder writes it: named entities for & < > ", &#xHEX; for ' + and what is not printable ASCII. */
function razorHtml(value: string): string {
  const named: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" };
  let out = "";
  for (const c of value) {
    const code = c.codePointAt(0)!;
    out += named[c] ?? (code < 0x20 || code > 0x7e || "'+".includes(c) ? `&#x${code.toString(16).toUpperCase()};` : c);
  }
  return out;
}

/** A string as Go's html/template writes text: & < > as named entities, " ' + as &#34; &#39; &#43;. */
function goHtmlTemplate(value: string): string {
  const escapes: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&#34;", "'": "&#39;", "+": "&#43;", "\0": "\ufffd" };
  return [...value].map((c) => escapes[c] ?? c).join("");
}

/** Echoes the Authorization header: as ASP.NET Core's JSON, a Razor page or a Go template would. */
const echoing: Handler = (request, response) => {
  const secret = String(request.headers.authorization ?? "");
  switch (request.url) {
    case "/dotnet-json":
      response.setHeader("content-type", "application/json; charset=utf-8");
      response.end(`{"headers":{"Authorization":${systemTextJson(secret)}}}`);
      return;
    case "/razor":
      response.setHeader("content-type", "text/html; charset=utf-8");
      response.end(`<dl><dt>Authorization</dt><dd>${razorHtml(secret)}</dd></dl>`);
      return;
    default:
      response.setHeader("content-type", "text/html; charset=utf-8");
      response.end(`<p>Authorization: ${goHtmlTemplate(secret)}</p>`);
  }
};

/** Each UTF-8 byte of `c` as %XX, upper-case hex unless `lower`. */
const percent = (c: string, lower = false): string =>
  [...Buffer.from(c, "utf8")].map((byte) => `%${lower ? byte.toString(16).padStart(2, "0") : byte.toString(16).toUpperCase().padStart(2, "0")}`).join("");

/** Percent-encoded: the characters `safe` matches as they are, every other one escaped. */
const percentEncoded = (value: string, safe: RegExp, lower = false): string => [...value].map((c) => (safe.test(c) ? c : percent(c, lower))).join("");

/** Python's urllib.parse.quote(value) (safe="/" by default): letters, digits, _.-~ and / as they are. */
const pythonQuote = (value: string): string => percentEncoded(value, /[A-Za-z0-9_.~\/-]/);
/** Go's url.PathEscape: letters, digits, -_.~ and $&+:=@ as they are, / escaped. */
const goPathEscape = (value: string): string => percentEncoded(value, /[A-Za-z0-9_.~$&+:=@-]/);
/** .NET's HttpUtility.UrlEncode: letters, digits and -_.!*() as they are, a space as +, the rest in lower-case hex. */
const dotnetUrlEncode = (value: string): string => percentEncoded(value, /[A-Za-z0-9_.!*()-]/, true).replace(/%20/g, "+");

/** Answers with a link that carries the Authorization header, percent-encoded as each platform's encoder does. */
const linking: Handler = (request, response) => {
  const secret = String(request.headers.authorization ?? "");
  const encode = { "/python-quote": pythonQuote, "/go-path-escape": goPathEscape, "/dotnet-url-encode": dotnetUrlEncode }[request.url] ?? encodeURIComponent;
  response.setHeader("content-type", "application/json");
  response.end(JSON.stringify({ next: `/session?token=${encode(secret)}` }));
};

/** Python's urllib.parse.quote_plus (PHP's urlencode, Java's URLEncoder alike): a space as +, letters, digits and _.-~ as they are. */
const pythonQuotePlus = (value: string): string => percentEncoded(value, /[A-Za-z0-9_.~-]/).replace(/%20/g, "+");

/**
 * Answers with a link whose query carries the Authorization header form-encoded (a space as +),
 * as URLSearchParams, Python's quote_plus or .NET's UrlEncode write it; /redirect sends the
 * request on to such a link (tacit follows it), and /landing says the URL it was asked for.
 */
const formEncoding: Handler = (request, response) => {
  const secret = String(request.headers.authorization ?? "");
  const query = new URLSearchParams({ token: secret }).toString();
  if (request.url === "/redirect") return void response.writeHead(302, { location: `/landing?${query}` }).end();
  const next = request.url.startsWith("/landing") ? request.url : { "/python-quote-plus": `/session?token=${pythonQuotePlus(secret)}`, "/dotnet-url-encode": `/session?token=${dotnetUrlEncode(secret)}` }[request.url] ?? `/session?${query}`;
  response.setHeader("content-type", "application/json");
  response.end(JSON.stringify({ next }));
};

/**
 * Answers with the Authorization header in a link's query, or a redirect: percent-encoded by
 * Python's quote or .NET's UrlEncode; /redirect puts it in a Location as it is, which tacit
 * follows to /landing, which says the URL it was asked for; /away to a host outside the scope.
 */
const linkingPastAscii: Handler = (request, response) => {
  const secret = String(request.headers.authorization ?? "");
  if (request.url === "/redirect") return void response.writeHead(302, { location: `/landing?token=${secret}` }).end();
  if (request.url === "/away") return void response.writeHead(302, { location: `http://127.0.0.1:1/?token=${secret}` }).end();
  const next = request.url.startsWith("/landing") ? request.url : request.url === "/dotnet-url-encode" ? `/session?token=${dotnetUrlEncode(secret)}` : `/session?token=${pythonQuote(secret)}`;
  response.setHeader("content-type", "application/json");
  response.end(JSON.stringify({ next }));
};

/** Redirects to a path that holds the Authorization header as it is; /landing/… says the URL it was asked for. */
const pathRedirect: Handler = (request, response) => {
  if (request.url.startsWith("/landing/")) return void response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ next: request.url }));
  response.writeHead(302, { location: `/landing/${String(request.headers.authorization ?? "")}` }).end();
};

/** Each character but letters, digits and ",.-_" as a character reference, as Twig's html_attr escaping strategy writes it. */
const twigHtmlAttr = (value: string): string =>
  value.replace(/[^A-Za-z0-9,.\-_]/g, (c) => ({ '"': "&quot;", "&": "&amp;", "<": "&lt;", ">": "&gt;" })[c] ?? `&#x${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")};`);
/** OWASP ESAPI's encodeForHTML: letters, digits and ",.-_ " as they are, every other ASCII character as &#x in lower-case hex. */
const esapiHtml = (value: string): string => value.replace(/[^A-Za-z0-9,.\-_ ]/g, (c) => `&#x${c.charCodeAt(0).toString(16)};`);

/** A page with the Authorization header in a hidden form field, escaped as Twig's html_attr or ESAPI does. */
const formPage: Handler = (request, response) => {
  const secret = String(request.headers.authorization ?? "");
  response.setHeader("content-type", "text/html; charset=utf-8");
  response.end(`<input type="hidden" name="token" value="${request.url === "/esapi" ? esapiHtml(secret) : twigHtmlAttr(secret)}">`);
};

/**
 * PHP's htmlentities($value, ENT_QUOTES | ENT_HTML5): every character HTML5 names, ASCII
 * punctuation included, as its named reference ("This + is." is "This &plus; is&period;").
 */
const phpHtml5Entities = (value: string): string =>
  value.replace(/[&<>"'/+=.:_@]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;", "/": "&sol;", "+": "&plus;", "=": "&equals;", ".": "&period;", ":": "&colon;", _: "&lowbar;", "@": "&commat;" })[c]!);
/** Laminas Escaper's escapeJs: each character but letters, digits and ",._" as \xHH (upper-case hex). */
const laminasJs = (value: string): string => value.replace(/[^A-Za-z0-9,._]/g, (c) => `\\x${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`);
/** Laminas Escaper's escapeCss (and Twig's css strategy): each character but letters and digits as \HH and a space. */
const laminasCss = (value: string): string => value.replace(/[^A-Za-z0-9]/g, (c) => `\\${c.charCodeAt(0).toString(16).toUpperCase()} `);

/** A page with the Authorization header in it, escaped by PHP's htmlentities for HTML5, or by Laminas Escaper for a script or a style. */
const templatePage: Handler = (request, response) => {
  const secret = String(request.headers.authorization ?? "");
  response.setHeader("content-type", "text/html; charset=utf-8");
  if (request.url === "/laminas-js") response.end(`<script>var token = "${laminasJs(secret)}";</script>`);
  else if (request.url === "/laminas-css") response.end(`<style>#token::after { content: "${laminasCss(secret)}"; }</style>`);
  else response.end(`<p id="token">${phpHtml5Entities(secret)}</p>`);
};

/** Base64-shaped, with "/", "+" and a closing "=": an AWS secret access key, a JWT. */
const awsShapedCanary = (): string => `${makeCanary().replaceAll("-", "+").replace("+", "/")}=`;

/**
 * Runs `script` against a server answering with `handler`: `.env` holds `variable=canary`, and the
 * script is given `key` (the canary as a Classified value) and `page(where)` (the server's answer
 * there, fetched with it as the Authorization secret header). Neither the canary nor its middle
 * appears in anything the script or tacit printed, nor in a file but .env.
 */
async function echoedBy(handler: Handler, canary: string, variable: string, script: string): Promise<{ result: CliResult; received: string[] }> {
  const a = await resources.server(handler);
  const root = path.join(resources.dir(), "work");
  writeTree(root, { ".env": `${variable}=${canary}\n` });
  const result = await tacit(
    root,
    `${ATTEMPT_PRELUDE}
const key = requestFileSystem(".", (fs) => fs.readClassified(".env").map((env) => env.trim().slice(${lit(`${variable}=`)}.length)));
requestNetwork([${lit(`127.0.0.1:${a.port}`)}], (net) => {
  const page = (where: string): string => net.httpGet(${lit(a.origin)} + where, { secretHeaders: { authorization: key } });
  ${script}
});
`,
    permit(`127.0.0.1:${a.port}`),
  );
  expect(result.code, result.stderr).toBe(0);
  expectNoLeak(canary, result, root, isEnvFile);
  expect(result.stdout).not.toContain(canary.slice(8, 24));
  return { result, received: a.received.map((r) => String(r.headers.authorization)) };
}

/** echoedBy templatePage, with an AWS-shaped key that also holds "." and "_". */
async function againstTemplatePage(script: string): Promise<{ canary: string; result: CliResult; received: string[] }> {
  const canary = `${makeCanary().replaceAll("-", "+").replace("+", "/").replace("+", ".").replace("+", "_")}=`;
  return { canary, ...(await echoedBy(templatePage, canary, "AWS_SECRET_ACCESS_KEY", script)) };
}

/**
 * A log line's JSON with the request's JSON as a string in it (a message field holding JSON, as log
 * shippers, queues and webhook relays keep it): the Authorization header escaped twice.
 */
const loggingEcho: Handler = (request, response) => {
  response.setHeader("content-type", "application/json");
  response.end(JSON.stringify({ level: "info", message: JSON.stringify({ headers: request.headers }) }));
};

describe.concurrent("echoes in other servers' escaping", () => {
  it("a key with + echoed by ASP.NET Core's JSON, a Razor page or a Go template is redacted", async () => {
    // Shaped like an AWS secret access key: base64, with "+" and "/".
    const canary = makeCanary().replaceAll("-", "+").replace("+", "/");
    const { result, received } = await echoedBy(echoing, canary, "AWS_SECRET_ACCESS_KEY", `
  attempt("dotnet-json", () => JSON.parse(page("/dotnet-json")).headers.Authorization);
  attempt("razor", () => /<dd>(.*)<\\/dd>/.exec(page("/razor"))![1]!.replace(/&#x2B;/g, "+"));
  attempt("go-template", () => /Authorization: (.*)<\\/p>/.exec(page("/go-template"))![1]!.replace(/&#43;/g, "+"));`);
    expect(received).toEqual([canary, canary, canary]);
    const found = attempts(result.stdout);
    for (const label of ["dotnet-json", "razor", "go-template"]) expect(attemptOf(found, label), label).toEqual({ status: "ok", value: "[redacted]" });
  });

  it("a key with / and + echoed percent-encoded by Python's quote, Go's PathEscape or .NET's UrlEncode is redacted", async () => {
    const canary = awsShapedCanary();
    const { result, received } = await echoedBy(linking, canary, "AWS_SECRET_ACCESS_KEY", `
  const token = (where: string): string => decodeURIComponent(JSON.parse(page(where)).next.split("token=")[1]);
  for (const where of ["/python-quote", "/go-path-escape", "/dotnet-url-encode", "/encode-uri-component"]) attempt(where, () => token(where));`);
    expect(received).toEqual([canary, canary, canary, canary]);
    const found = attempts(result.stdout);
    for (const label of ["/python-quote", "/go-path-escape", "/dotnet-url-encode", "/encode-uri-component"]) {
      expect(attemptOf(found, label), label).toEqual({ status: "ok", value: "[redacted]" });
    }
  });

  it("a passphrase (words shorter than 8 characters, a space between) echoed form-encoded, a space as +, is redacted: in a page and in a redirect tacit follows", async () => {
    // Its words are too short to be masked on their own, and a space as + was no form redaction
    // looked for: "correct+horse+battery+staple" came back whole from a form-encoding echo.
    const words = makeCanary().slice("canary-".length).replaceAll("-", "").match(/.{1,5}/g)!;
    const passphrase = `${words.join(" ")}!`;
    const { result, received } = await echoedBy(formEncoding, passphrase, "PASSPHRASE", `
  const token = (where: string): string => decodeURIComponent(JSON.parse(page(where)).next.split("token=")[1].replace(/\\+/g, " "));
  for (const where of ["/url-search-params", "/python-quote-plus", "/dotnet-url-encode", "/redirect"]) attempt(where, () => token(where));`);
    expect(received).toEqual([passphrase, passphrase, passphrase, passphrase, passphrase]);
    const found = attempts(result.stdout);
    for (const label of ["/url-search-params", "/python-quote-plus", "/dotnet-url-encode", "/redirect"]) {
      expect(attemptOf(found, label), label).toEqual({ status: "ok", value: "[redacted]" });
    }
    expect(result.stdout).not.toContain(words.slice(0, 3).join("+"));
  });

  it("a key with letters past ASCII, percent-encoded as UTF-8 with its ASCII punctuation left as it is, or in lower-case hex, is redacted: in a link, a redirect tacit follows, and the refusal of one", async () => {
    // "pässwörd/<canary>": Python's quote keeps "/", .NET's UrlEncode writes "%c3%a4", and a URL
    // (the Location tacit follows, which a refusal quotes) escapes "ä" and keeps "/". None was the
    // one form of it redaction looked for (encodeURIComponent's), whose "%2F" an echo that kept
    // "/" never holds.
    const canary = `p\u00e4ssw\u00f6rd/${makeCanary()}`;
    const { result, received } = await echoedBy(linkingPastAscii, canary, "PASSWORD", `
  const token = (where: string): string => decodeURIComponent(JSON.parse(page(where)).next.split("token=")[1]);
  for (const where of ["/python-quote", "/dotnet-url-encode", "/redirect"]) attempt(where, () => token(where));
  attempt("/away", () => page("/away"));`);
    expect(received).toEqual(Array(5).fill(canary)); // /landing too: the redirect stays on the origin, the secret header with it
    const found = attempts(result.stdout);
    for (const label of ["/python-quote", "/dotnet-url-encode", "/redirect"]) expect(attemptOf(found, label), label).toEqual({ status: "ok", value: "[redacted]" });
    expect(attemptOf(found, "/away").status).toBe("SecurityError");
    expect(String(attemptOf(found, "/away").value)).toContain("was redirected to http://127.0.0.1:1/?token=[redacted], which tacit did not follow");
  });

  it("a password with a backslash (a Windows account's) that a server puts into a redirect's path is redacted in the URL tacit follows, where it is a slash", async () => {
    // A URL of http or https reads "\\" in its path as "/": "CORP\\svc-backup" came back as
    // "/landing/CORP/svc-backup", which no form held.
    const canary = `CORP\\svc-${makeCanary()}`;
    const { result, received } = await echoedBy(pathRedirect, canary, "PASSWORD", `
  attempt("/redirect", () => JSON.parse(page("/redirect")).next.slice("/landing/".length));`);
    expect(received).toEqual([canary, canary]);
    expect(attemptOf(attempts(result.stdout), "/redirect")).toEqual({ status: "ok", value: "[redacted]" });
    expect(result.stdout).not.toContain(canary.replace("\\", "/"));
  });

  it("a key with / and + echoed as character references by Twig's html_attr or ESAPI is redacted", async () => {
    const canary = awsShapedCanary();
    const { result, received } = await echoedBy(formPage, canary, "AWS_SECRET_ACCESS_KEY", `
  const value = (where: string): string =>
    /value="([^"]*)"/.exec(page(where))![1]!.replace(/&#x([0-9a-f]+);/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  for (const where of ["/twig-html-attr", "/esapi"]) attempt(where, () => value(where));`);
    expect(received).toEqual([canary, canary]);
    const found = attempts(result.stdout);
    for (const label of ["/twig-html-attr", "/esapi"]) expect(attemptOf(found, label), label).toEqual({ status: "ok", value: "[redacted]" });
  });

  it("a key echoed by PHP's htmlentities for HTML5 (&sol; &plus; &period; &lowbar; &equals;) is redacted", async () => {
    const { canary, result, received } = await againstTemplatePage(`
  const named: Record<string, string> = { sol: "/", plus: "+", equals: "=", period: ".", colon: ":", lowbar: "_", commat: "@", amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
  attempt("/php-html5", () => /<p id="token">(.*)<\\/p>/.exec(page("/php-html5"))![1]!.replace(/&([a-z]+);/g, (_, name: string) => named[name] ?? "?"));`);
    expect(received).toEqual([canary]);
    expect(attemptOf(attempts(result.stdout), "/php-html5")).toEqual({ status: "ok", value: "[redacted]" });
  });

  it("a key escaped as Laminas Escaper writes it for a script (\\x2F) or a style (\\2F , Twig's css strategy too) is redacted", async () => {
    const { canary, result, received } = await againstTemplatePage(`
  const unescape = (text: string, escape: RegExp): string => text.replace(escape, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  attempt("/laminas-js", () => unescape(/var token = "(.*)";/.exec(page("/laminas-js"))![1]!, /\\\\x([0-9A-F]{2})/g));
  attempt("/laminas-css", () => unescape(/content: "(.*)";/.exec(page("/laminas-css"))![1]!, /\\\\([0-9A-F]{1,6}) /g));`);
    expect(received).toEqual([canary, canary]);
    const found = attempts(result.stdout);
    for (const label of ["/laminas-js", "/laminas-css"]) expect(attemptOf(found, label), label).toEqual({ status: "ok", value: "[redacted]" });
  });

  it("a key with a backslash or quotes, echoed as JSON inside JSON (escaped twice), is redacted", async () => {
    // A password with backslashes, as a Windows domain account has one ("CORP\\svc-backup"), and a quote.
    const canary = `${makeCanary().replaceAll("-", "\\")}"x`;
    const { result, received } = await echoedBy(loggingEcho, canary, "PASSWORD", `
  attempt("json-in-json", () => JSON.parse(JSON.parse(page("/log")).message).headers.authorization);`);
    expect(received).toEqual([canary]);
    expect(attemptOf(attempts(result.stdout), "json-in-json")).toEqual({ status: "ok", value: "[redacted]" });
  });

  it("(unit) a key escaped character by character in decimal references, with leading zeros, as \\u escapes in either case, or as JavaScript's \\x or CSS's \\HH escapes, is redacted; the text around it is not touched", async () => {
    const { redact } = await import("../../runner/net/redaction.js");
    const key = "wJalrXUtnFEMI/K7MDENG+bPxRfiCY=";
    const each = (format: (code: number) => string): string => [...key].map((c) => (/[A-Za-z0-9]/.test(c) ? c : format(c.charCodeAt(0)))).join("");
    for (const echo of [each((code) => `&#${code};`), each((code) => `&#0${code};`), each((code) => `\\u${code.toString(16).padStart(4, "0")}`), each((code) => `%${code.toString(16)}`), each((code) => `\\x${code.toString(16)}`), each((code) => `\\${code.toString(16)} `)]) {
      expect(redact(`a%20b &amp; "${echo}" &#x263A; \\u00e9`, [key]), echo).toBe(`a%20b &amp; "[redacted]" &#x263A; \\u00e9`);
    }
  });

  it("(unit) the same encoders' escapes of <, &, `, non-ASCII and astral characters are redacted, in the value and as a word of it", async () => {
    const { redact } = await import("../../runner/net/redaction.js");
    const secret = "s3cr\u00e9t<K&Y>+it`s\u{1F600}-long/enough";
    for (const sent of [secret, `Bearer ${secret}`]) {
      for (const echo of [systemTextJson(secret).slice(1, -1), razorHtml(secret), goHtmlTemplate(secret)]) {
        expect(redact(`you sent: ${echo}.`, [sent]), echo).toBe("you sent: [redacted].");
      }
    }
  });
});
