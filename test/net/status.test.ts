// An answer that is not 2xx, through the real CLI: httpGet and httpPost
// throw an HttpStatusError (as curl --fail fails) instead of returning an error page as if it
// were the answer; httpRequest returns every status. The error quotes the start of the body
// only as httpGet would have returned it: a secret header a 500 page echoes is redacted there.
// httpPostClassified's status stays in the host, as its answer does.

import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, type Handler, isEnvFile, lit, permit, perTestResources, secretNetScript, tacit } from "./fixtures.js";
import { expectNoLeak } from "../files/fixtures.js";

const resources = perTestResources("tacit-net-status-", { concurrent: true });

/** What the status tests request: an error page, a redirect to one, and pages that echo what they were sent. */
const statuses: Handler = (request, response) => {
  const secret = String(request.headers.authorization ?? "");
  switch (new URL(request.url, "http://x").pathname) {
    case "/ok":
      response.end('{"ok":true}');
      return;
    case "/missing":
      response.statusCode = 404;
      response.end(`<html>no such page</html>\n${"padding ".repeat(100)}`);
      return;
    case "/moved":
      response.writeHead(302, { location: "/missing" });
      response.end();
      return;
    case "/empty":
      response.statusCode = 503;
      response.end();
      return;
    case "/not-modified":
      response.writeHead(304, { etag: '"v1"' });
      response.end();
      return;
    case "/choices":
      response.writeHead(300, { location: "/ok" });
      response.end("<ul><li>/ok.json</li><li>/ok.xml</li></ul>");
      return;
    case "/nowhere":
      response.writeHead(301);
      response.end("moved, but not said where");
      return;
    case "/away":
      response.writeHead(302, { location: new URL(request.url, "http://x").searchParams.get("to") ?? "/ok" });
      response.end();
      return;
    case "/echo-header":
      // The secret header in the page and in the reason phrase.
      response.writeHead(500, `bad token ${secret}`);
      response.end(`<html>token ${secret} refused</html>`);
      return;
    case "/part":
      // A part of an answer, as an API could answer a body it takes for a range request.
      response.writeHead(206, { "content-range": "bytes 0-1/10" });
      response.end("ok");
      return;
    case "/ranged":
      response.writeHead(200, { "content-range": "bytes 0-1/10" });
      response.end("ok");
      return;
    case "/echo-body":
      // The classified body, in the page and in the reason phrase.
      response.writeHead(400, `cannot parse ${request.body.trim()}`);
      response.end(`<html>cannot parse ${request.body}</html>`);
      return;
    default:
      response.statusCode = 500;
      response.end("unexpected path");
  }
};

/**
 * Posts the secret with httpPostClassified (with `options`, script text) to each of `paths` on a
 * server of `handler`, and the text "plain" with httpPost to `plainPath` if given; what the script
 * printed, what it saw of the plain post, and what the secure output says. Each classified one
 * must look to the script as the 200 at /ok does.
 */
async function postedClassified(handler: Handler, paths: readonly string[], plainPath: string | null, options = "{}") {
  const { root, canary } = resources.projectWithSecret();
  const sink = path.join(resources.dir(), "sink.log");
  const a = await resources.server(handler);
  const O = a.origin;
  const run = await tacit(
    root,
    secretNetScript([`127.0.0.1:${a.port}`], `
  const options = ${options};
  for (const where of ${JSON.stringify(["ok", ...paths])}) attempt(where, () => String(net.httpPostClassified("${O}/" + where, token, options)));
  ${plainPath === null ? "" : `attempt("plain", () => net.httpPost("${O}/${plainPath}", "plain"));`}
`),
    [...permit(`127.0.0.1:${a.port}`), "--secure-output", sink],
  );
  expect(run.code, run.stderr).toBe(0);
  const found = attempts(run.stdout);
  expect(attemptOf(found, "ok")).toEqual({ status: "ok", value: "Classified(***)" });
  for (const where of paths) expect(attemptOf(found, where), where).toEqual(attemptOf(found, "ok"));
  expect(a.received.filter((r) => r.body === canary)).toHaveLength(paths.length + 1);
  expectNoLeak(canary, run, root, isEnvFile);
  return { origin: O, output: run.stdout + run.stderr, plain: plainPath === null ? null : attemptOf(found, "plain"), said: readFileSync(sink, "utf8") };
}

describe.concurrent("an answer that is not 2xx", () => {
  it("throws an HttpStatusError from httpGet and httpPost, which names the status and teaches httpRequest; httpRequest returns it", async () => {
    const root = resources.dir();
    const a = await resources.server(statuses);
    const O = a.origin;
    const result = await tacit(
      root,
      `${ATTEMPT_PRELUDE}
const described = (e: unknown) => e instanceof HttpStatusError ? { status: e.status, method: e.method, url: e.url, message: e.message } : String(e);
requestNetwork([${lit(`127.0.0.1:${a.port}`)}], (net) => {
  attempt("get-ok", () => JSON.parse(net.httpGet("${O}/ok")));
  attempt("get-404", () => { try { return net.httpGet("${O}/missing"); } catch (e) { return described(e); } });
  attempt("get-redirected-404", () => { try { return net.httpGet("${O}/moved"); } catch (e) { return described(e); } });
  attempt("post-503-empty", () => { try { return net.httpPost("${O}/empty", "x"); } catch (e) { return described(e); } });
  attempt("request-404", () => net.httpRequest("GET", "${O}/missing"));
  attempt("uncaught-name", () => net.httpGet("${O}/missing"));
});
`,
      permit(`127.0.0.1:${a.port}`),
    );
    expect(result.code, result.stderr).toBe(0);
    const found = attempts(result.stdout);
    expect(attemptOf(found, "get-ok").value).toEqual({ ok: true });

    const get404 = attemptOf(found, "get-404").value as { status: number; method: string; url: string; message: string };
    expect(get404).toMatchObject({ status: 404, method: "GET", url: `${O}/missing` });
    expect(get404.message).toContain(`GET ${O}/missing answered 404 Not Found`);
    expect(get404.message).toContain('net.httpRequest("GET", url)');
    // The start of the page, quoted and cut.
    expect(get404.message).toContain('began: "<html>no such page</html>\\npadding ');
    expect(get404.message).toMatch(/… \(\d+ more characters\)/);

    // The status is the one the redirect led to; the URL the one the script gave.
    expect(attemptOf(found, "get-redirected-404").value).toMatchObject({ status: 404, url: `${O}/moved` });

    const post503 = attemptOf(found, "post-503-empty").value as { status: number; method: string; message: string };
    expect(post503).toMatchObject({ status: 503, method: "POST" });
    expect(post503.message).toContain("answered 503 Service Unavailable; httpPost returns only a 2xx answer");
    expect(post503.message).toContain('net.httpRequest("POST", url, { body })');
    expect(post503.message).toContain("Its body was empty");

    expect(attemptOf(found, "request-404").value).toMatchObject({ status: 404, body: expect.stringContaining("<html>no such page</html>") });
    expect(attemptOf(found, "uncaught-name").status).toBe("HttpStatusError");
  });

  it("throws for a 3xx that was not followed too, saying why it is not the resource and what to call instead; a refused redirect says it was one", async () => {
    // curl --fail would return these bodies; httpGet promises the resource's text, which a 304
    // (no body at all), a 300 list of choices or a redirect without a Location is not.
    const root = resources.dir();
    const a = await resources.server(statuses);
    const elsewhere = await resources.server();
    const O = a.origin;
    const result = await tacit(
      root,
      `${ATTEMPT_PRELUDE}
const described = (e: unknown) => e instanceof HttpStatusError ? { status: e.status, message: e.message } : String(e);
requestNetwork([${lit(`127.0.0.1:${a.port}`)}], (net) => {
  attempt("get-304", () => { try { return net.httpGet("${O}/not-modified", { headers: { "if-none-match": '"v1"' } }); } catch (e) { return described(e); } });
  attempt("get-300", () => { try { return net.httpGet("${O}/choices"); } catch (e) { return described(e); } });
  attempt("post-301", () => { try { return net.httpPost("${O}/nowhere", "x"); } catch (e) { return described(e); } });
  attempt("request-304", () => net.httpRequest("GET", "${O}/not-modified"));
  attempt("request-300", () => net.httpRequest("GET", "${O}/choices"));
  attempt("away", () => net.httpGet(${lit(`${O}/away?to=${encodeURIComponent(`${elsewhere.origin}/x`)}`)}));
});
`,
      permit(`127.0.0.1:${a.port}`),
    );
    expect(result.code, result.stderr).toBe(0);
    const found = attempts(result.stdout);
    const message = (label: string): string => {
      const value = attemptOf(found, label).value as { status: number; message: string };
      expect(typeof value, label).toBe("object");
      return value.message;
    };
    expect(attemptOf(found, "get-304").value).toMatchObject({ status: 304 });
    expect(message("get-304")).toBe(
      `GET ${O}/not-modified answered 304 Not Modified: the server says the copy the request's If-None-Match or If-Modified-Since header names ` +
        "is still current, and sends no body, so httpGet has no text to return. For a conditional request, use httpRequest and check for status 304; " +
        'httpGet returns only a 2xx answer. Use net.httpRequest("GET", url) to read the status and body of any answer. Its body was empty.',
    );
    expect(message("get-300")).toContain(`GET ${O}/choices answered 300 Multiple Choices: the server offers several versions and leaves the choice to the client`);
    expect(message("get-300")).toContain('Its body began: "<ul><li>/ok.json</li>');
    expect(message("post-301")).toContain(`POST ${O}/nowhere answered 301 Moved Permanently, a redirect without a Location header, so there is no URL to follow`);
    expect(message("post-301")).toContain('net.httpRequest("POST", url, { body })');
    // httpRequest reads them all.
    expect(attemptOf(found, "request-304").value).toEqual({ status: 304, body: "" });
    expect(attemptOf(found, "request-300").value).toEqual({ status: 300, body: "<ul><li>/ok.json</li><li>/ok.xml</li></ul>" });
    // A redirect out of the scope: refused, saying it was the server's redirect, and never sent.
    expect(attemptOf(found, "away")).toEqual({
      status: "SecurityError",
      value: `the request to ${O} was redirected to ${elsewhere.origin}/x, which tacit did not follow: 127.0.0.1:${elsewhere.port} is not among the hosts this requestNetwork scope asked for (127.0.0.1:${a.port}); ask for it in the list`,
    });
    expect(elsewhere.connections).toBe(0);
  });

  it("is importable from \"tacit\" and type-checks against the interface", async () => {
    const root = resources.dir();
    const a = await resources.server(statuses);
    // Type-checked: `tacit run` without --no-check.
    const result = await runCli(["run", ...permit(`127.0.0.1:${a.port}`), "-"], {
      cwd: root,
      input: `import { HttpStatusError, HttpStatusError as StatusError, requestNetwork, println } from "tacit";
const describe = (error: HttpStatusError): string => error.url;
requestNetwork([${lit(`127.0.0.1:${a.port}`)}], (net) => {
  try {
    net.httpGet(${lit(`${a.origin}/missing`)});
    println("no error");
  } catch (e) {
    // Under another name too: the import binds the class, not only its type.
    if (e instanceof StatusError && e instanceof HttpStatusError) println("status", e.status, e.method, describe(e));
    else throw e;
  }
});
`,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe(`status 404 GET ${a.origin}/missing`);
  });

  it("shows an echoed secret header in neither the error's quoted body nor its status text, caught or not", async () => {
    const { root, canary } = resources.projectWithSecret();
    const a = await resources.server(statuses);
    const O = a.origin;
    const script = (tail: string): string => secretNetScript([`127.0.0.1:${a.port}`], `
  const secret = { secretHeaders: { authorization: token } };
  ${tail}
`);
    const caught = await tacit(
      root,
      script(`attempt("get", () => net.httpGet("${O}/echo-header", secret));
  attempt("post", () => net.httpPost("${O}/echo-header", "x", secret));
  attempt("request", () => net.httpRequest("GET", "${O}/echo-header", secret));`),
      permit(`127.0.0.1:${a.port}`),
    );
    expect(caught.code, caught.stderr).toBe(0);
    const found = attempts(caught.stdout);
    for (const label of ["get", "post"]) {
      const { status, value } = attemptOf(found, label);
      expect(status, label).toBe("HttpStatusError");
      // The page was quoted, with the secret masked; the server's reason phrase was not used.
      expect(String(value), label).toMatch(/answered 500 Internal Server Error; .*began: "<html>token \[redacted\] refused<\/html>"/);
      expect(String(value), label).not.toContain("bad token");
    }
    expect(attemptOf(found, "request").value).toMatchObject({ status: 500 });
    // The secret did reach the server (else there was nothing to redact).
    expect(a.received.filter((r) => r.headers.authorization === canary)).toHaveLength(3);
    expectNoLeak(canary, caught, root, isEnvFile);

    // Uncaught: the failure the run reports.
    const uncaught = await tacit(root, script(`net.httpGet("${O}/echo-header", secret);`), permit(`127.0.0.1:${a.port}`));
    expect(uncaught.code).not.toBe(0);
    expect(uncaught.stderr).toContain("HttpStatusError");
    expect(uncaught.stderr).toContain("answered 500 Internal Server Error");
    expectNoLeak(canary, uncaught, root, isEnvFile);
  });

  it("keeps httpPostClassified's status from the script: a 400 that echoes the body is returned classified as a 200 is, and said in the secure output only", async () => {
    // A map can make the body valid or not depending on a bit of the secret: an API that checks it
    // answers 200 or 400, and a status the script saw (an HttpStatusError) would tell it that bit.
    const { origin: O, output, said } = await postedClassified(statuses, ["echo-body"], null);
    expect(output).not.toContain("400");
    expect(output).not.toContain("HttpStatusError");
    // For the person: the secure output says which call was not a success.
    expect(said).toContain(`[tacit] httpPostClassified: POST ${O}/echo-body answered 400: its answer, classified as any other, is not a success`);
  });

  it("keeps httpPostClassified's status from the script with a secret header beside it: a part of an answer (206, a Content-Range) is returned classified as a whole one is", async () => {
    // Refused, a part of an answer to a request with secretHeaders told the script the status
    // (206) or a header of an answer it may not see: an API that answers a body that parses as a
    // range request with a part would give away the bit a map put in the body. A classified answer
    // is never redacted, so a part of one needs no refusal.
    const { output } = await postedClassified(statuses, ["part", "ranged"], null, "{ secretHeaders: { authorization: token } }");
    expect(output).not.toContain("206");
    expect(output).not.toContain("Partial");
    expect(output).not.toContain("Content-Range");
  });

  it("keeps httpPostClassified's status from the script when its redirect cannot be followed: the redirect is its answer, classified", async () => {
    // Refused (a host outside the scope), broken (a Location that is no URL) or one too many, a
    // redirect failed the call: an API that redirects one body and answers another told the
    // script which the map had made. The redirect is not followed, as before; it is the answer.
    const elsewhere = await resources.server();
    const redirects: Handler = (request, response) => {
      const to = new URL(request.url, "http://x");
      switch (to.pathname) {
        case "/ok":
          response.end("ok");
          return;
        case "/away":
          response.writeHead(307, { location: `${elsewhere.origin}/caught` });
          response.end();
          return;
        case "/broken":
          response.writeHead(302, { location: "http://[" });
          response.end();
          return;
        default:
          response.writeHead(302, { location: "/loop" });
          response.end();
      }
    };
    const { origin: O, plain, said } = await postedClassified(redirects, ["away", "broken", "loop"], "away");
    // Still refused where the script sees the answer; and the host outside the scope was never sent a thing.
    expect(plain?.status).toBe("SecurityError");
    expect(elsewhere.received).toEqual([]);
    expect(elsewhere.connections).toBe(0);
    // For the person: the secure output says which redirect was not followed, and why.
    expect(said).toContain(`[tacit] httpPostClassified: POST ${O}/away answered 307 (a redirect tacit did not follow: `);
    expect(said).toContain(`[tacit] httpPostClassified: POST ${O}/broken answered 302 (a redirect tacit did not follow: `);
    expect(said).toContain(`[tacit] httpPostClassified: POST ${O}/loop answered 302 (a redirect tacit did not follow: `);
  });

  it("keeps httpPostClassified's outcome from the script when its answer fails after the body was sent: an unknown coding, a cut, a bad coding", async () => {
    // Thrown, each told the script how a server that had the secret answered: an API could answer
    // one body in a coding tacit does not read, or cut its answer, and another in full.
    const failing: Handler = (request, response) => {
      switch (new URL(request.url, "http://x").pathname) {
        case "/ok":
          response.end("ok");
          return;
        case "/coding":
          response.writeHead(200, { "content-encoding": "x-unknown" });
          response.end("whatever");
          return;
        case "/bad-gzip":
          response.writeHead(200, { "content-encoding": "gzip" });
          response.end("not gzip at all");
          return;
        default:
          // A cut: less than the length it announced, then the connection closed.
          response.writeHead(200, { "content-length": "1000" });
          response.write("part of it");
          setTimeout(() => response.socket?.destroy(), 50);
      }
    };
    const { origin: O, plain, said } = await postedClassified(failing, ["coding", "bad-gzip", "cut"], "coding");
    // Where the script sees the answer, the failure is still its to see.
    expect(plain?.status).toBe("Error");
    expect(String(plain?.value)).toContain("a content coding tacit does not decode (x-unknown)");
    // For the person: the secure output says what went wrong with each.
    expect(said).toContain(`[tacit] httpPostClassified: POST ${O}/coding: ${O}: answered in a content coding tacit does not decode (x-unknown)`);
    expect(said).toContain(`[tacit] httpPostClassified: POST ${O}/bad-gzip: ${O}: the answer is not valid gzip`);
    expect(said).toContain(`[tacit] httpPostClassified: POST ${O}/cut: `);
    expect(said.match(/its answer, classified as any other, is empty/g)).toHaveLength(3);
  });

  it("still says why httpPostClassified failed where nothing was sent: a port with no server", async () => {
    // Nothing of the secret reached anyone: the failure depends on the URL the script named alone.
    const { root, canary } = resources.projectWithSecret();
    const closed = await resources.server();
    const port = closed.port;
    await closed.close();
    const run = await tacit(
      root,
      secretNetScript([`127.0.0.1:${port}`], `
  attempt("refused", () => String(net.httpPostClassified(${lit(`http://127.0.0.1:${port}/x`)}, token)));
`),
      permit(`127.0.0.1:${port}`),
    );
    expect(run.code, run.stderr).toBe(0);
    expect(attemptOf(attempts(run.stdout), "refused").status).toBe("Error");
    expectNoLeak(canary, run, root, isEnvFile);
  });
});
