// Answers that break partway, through the real CLI and a real server on 127.0.0.1: a body
// shorter than its Content-Length, chunks cut off, headers past Node's limit, a redirect loop, a
// Location that is no URL, a server that stalls mid-body, a port that speaks another protocol
// than the URL's scheme says. Each is an error the script catches
// and that says what happened and what to do (Node's own words were "aborted" and "Parse Error:
// Header overflow"), and none hands back a part of the answer as if it were the whole.

import { once } from "node:events";
import { type AddressInfo, createServer as createTcpServer } from "node:net";
import { describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, configFile, type Handler, lit, perTestResources, permit, tacit } from "./fixtures.js";

// The two tests share nothing, and the first waits out a 2 s network timeout (/stall): they run at once.
const resources = perTestResources("tacit-net-broken-", { concurrent: true });

const broken: Handler = (request, response) => {
  switch (request.url) {
    case "/short": // Content-Length says 100; 20 bytes come, then the connection closes.
      response.writeHead(200, { "content-type": "text/plain", "content-length": "100" });
      response.end("PARTIAL-BODY-SHORT..");
      return;
    case "/cut-chunks": // Chunked; the connection closes before the last chunk.
      response.writeHead(200, { "content-type": "text/plain" });
      response.write("PARTIAL-BODY-CHUNK");
      setTimeout(() => response.socket?.destroy(), 50);
      return;
    case "/huge-headers":
      response.writeHead(200, { "x-padding": "h".repeat(40_000) });
      response.end("HEADERS-TOO-BIG-BODY");
      return;
    case "/bad-location":
      response.writeHead(302, { location: "http://[not-an-address/" });
      response.end();
      return;
    case "/stall":
      response.writeHead(200, { "content-type": "text/plain" });
      response.write("PARTIAL-BODY-STALL");
      return; // Never ends.
    default: // A redirect loop, one hop each: /loop/1 → /loop/2 → …
      response.writeHead(302, { location: `/loop/${Number(request.url.split("/")[2] ?? 0) + 1}` });
      response.end();
  }
};

describe.concurrent("answers that break partway", () => {
  it("is an error the script catches, that says what broke and what to do, with no part of the answer", async () => {
    const a = await resources.server(broken);
    const root = resources.dir();
    const config = configFile(root, { networkTimeoutMs: 2_000 });
    const result = await tacit(
      root,
      `${ATTEMPT_PRELUDE}
requestNetwork([${lit(`127.0.0.1:${a.port}`)}], (net) => {
  for (const path of ["/short", "/cut-chunks", "/huge-headers", "/bad-location", "/loop/0", "/stall"]) {
    attempt(path, () => net.httpRequest("GET", ${lit(a.origin)} + path));
  }
});
println("after");
`,
      ["--config", config, ...permit(`127.0.0.1:${a.port}`)],
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("after\n");
    const found = attempts(result.stdout);
    for (const path of ["/short", "/cut-chunks", "/huge-headers", "/bad-location", "/loop/0", "/stall"]) {
      expect(attemptOf(found, path).status, path).toBe("Error");
      expect(String(attemptOf(found, path).value), path).toContain(`${a.origin}: `);
    }
    const cutShort = /the connection closed before the whole answer came .*nothing of it was kept\. Retry the request/;
    expect(String(attemptOf(found, "/short").value)).toMatch(cutShort);
    expect(String(attemptOf(found, "/cut-chunks").value)).toMatch(cutShort);
    expect(String(attemptOf(found, "/huge-headers").value)).toMatch(/answered with headers longer than tacit reads \(16 KiB in all, Node's limit\); nothing of the answer was kept\. Request another URL/);
    expect(String(attemptOf(found, "/bad-location").value)).toMatch(/answered 302 with a Location that is no URL \("http:\/\/\[not-an-address\/"\); .*request the URL it should lead to directly/);
    expect(String(attemptOf(found, "/loop/0").value)).toMatch(
      new RegExp(`more than 5 redirects \\(the last to ${a.origin}/loop/6\\), which tacit does not follow; .*request the URL it leads to directly`),
    );
    expect(String(attemptOf(found, "/stall").value)).toMatch(/no complete answer within 2000 ms; nothing of the answer was kept\. The operator can give requests longer with libraryConfig\.networkTimeoutMs/);
    // The hops that were followed, and no more.
    expect(a.received.filter((r) => r.url.startsWith("/loop/")).map((r) => r.url)).toEqual(["/loop/0", "/loop/1", "/loop/2", "/loop/3", "/loop/4", "/loop/5"]);
    // No part of a broken answer reached the script.
    expect(result.stdout).not.toContain("PARTIAL-BODY");
    expect(result.stdout).not.toContain("HEADERS-TOO-BIG");
  });

  it("from a port that speaks another protocol says so, and which scheme to try", async () => {
    const plain = await resources.server();
    // Answers anything with bytes that are no HTTP status line.
    const raw = createTcpServer((socket) => socket.once("data", () => socket.end("SSH-2.0-OpenSSH_9.6\r\n")));
    raw.listen(0, "127.0.0.1");
    await once(raw, "listening");
    try {
      const rawPort = (raw.address() as AddressInfo).port;
      const result = await tacit(
        resources.dir(),
        `${ATTEMPT_PRELUDE}
requestNetwork(["127.0.0.1:*"], (net) => {
  attempt("https-to-plain", () => net.httpGet(${lit(`https://127.0.0.1:${plain.port}/tls`)}));
  attempt("not-http", () => net.httpGet(${lit(`http://127.0.0.1:${rawPort}/`)}));
});
`,
        permit("127.0.0.1:*"),
      );
      expect(result.code, result.stderr).toBe(0);
      const found = attempts(result.stdout);
      expect(attemptOf(found, "https-to-plain")).toEqual({
        status: "Error",
        value:
          `https://127.0.0.1:${plain.port}: does not speak TLS on port ${plain.port} (it answered the TLS handshake with something else, plain HTTP most often); ` +
          `no request was sent. If it serves plain HTTP, use http://127.0.0.1:${plain.port}; else check the port`,
      });
      expect(String(attemptOf(found, "not-http").value)).toMatch(
        new RegExp(`^http://127\\.0\\.0\\.1:${rawPort}: answered with something that is not HTTP/1\\.1 \\(Node read: .*\\); nothing of it was kept\\. If the port serves TLS, use https://`),
      );
      // The handshake is no request: the plain server received none.
      expect(plain.received).toEqual([]);
    } finally {
      raw.close();
    }
  });
});
