// A redirect hop whose request's time ran out before the hop could start: it is never sent, so
// it is not told as followed (what the audit log records as the hops a request was sent to).
// Driven through httpExchange with real servers on 127.0.0.1: through the CLI, the moment
// between one hop's answer and the next hop's start cannot be made to fall after the deadline
// without racing a clock. Here the check of the redirect's URL holds the thread past the
// deadline (Atomics.wait: no event runs meanwhile), which is what a slow check or a busy host does.

import { afterEach, describe, expect, it } from "vitest";
import { httpExchange, type UrlCheck } from "../../runner/net/http-client.js";
import { sayAsIs } from "../../runner/net/server-text.js";
import { monotonicMs } from "../../runner/monotonic.js";
import { startServer, type TestServer } from "./fixtures.js";

const servers: TestServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

describe("a redirect hop that would start after the request's deadline", () => {
  it("is not sent, fails the request naming the timeout, and is not told as followed", async () => {
    const second = await startServer((_request, response) => response.end("must not be reached"));
    const first = await startServer((_request, response) => {
      response.writeHead(302, { location: `${second.origin}/next` });
      response.end();
    });
    servers.push(first, second);
    // The first hop (a server in this process, on loopback) needs a few ms of it; the test waits it all out (Atomics.wait below).
    const timeoutMs = 2_000;
    const started = monotonicMs();
    const checkedHops: number[] = [];
    const check: UrlCheck = (_url, _method, hop) => {
      checkedHops.push(hop);
      // Past the deadline httpExchange set as it was called (no later than now + timeoutMs).
      if (hop === 1) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Math.max(0, started + timeoutMs + 200 - monotonicMs()));
      return { restrictedAllowed: true };
    };
    const followed: string[] = [];
    const sent: number[] = [];
    const exchange = httpExchange(
      { method: "GET", url: new URL(`${first.origin}/start`), headers: {}, originBoundHeaders: new Set(), body: null },
      check,
      { maxResponseBytes: 1024, timeoutMs, maxRedirects: 5 },
      new AbortController().signal,
      sayAsIs,
      { followed: (method, url) => followed.push(`${method} ${url.href}`), sending: () => sent.push(sent.length) },
    );
    await expect(exchange).rejects.toThrow(`no complete answer within ${timeoutMs} ms`);
    // The first hop was answered (its redirect's URL was checked), and only it was sent.
    expect(checkedHops).toEqual([0, 1]);
    expect(sent).toEqual([0]);
    expect(first.received.map((request) => request.url)).toEqual(["/start"]);
    expect(second.received).toEqual([]);
    expect(followed).toEqual([]);
  }, 30_000);
});
