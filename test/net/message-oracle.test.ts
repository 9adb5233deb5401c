// A failure's message after an answer came, through the real CLI: only what the server chose in
// it (a redirect's URL, a Location, a content coding's or a charset's name) is redacted, never
// tacit's or Node's own words. Redacted whole, a message was an oracle: a script made a secret
// header one of its words or not, as one bit of a classified .env said (a map does that), sent it
// to a permitted host that redirects out of the scope (or answers in a coding tacit does not
// read, or stalls after its headers…), and read whether "[redacted]" stood in the message. Each
// case sends the word in one of two requests, which one decided by a bit of the canary: the two
// messages must be the same.

import { execFileSync } from "node:child_process";
import { once } from "node:events";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer as createTlsServer } from "node:https";
import { type AddressInfo, createServer as createTcpServer } from "node:net";
import path from "node:path";
import { describe, expect, it, type TestContext } from "vitest";
import { expectNoLeak } from "../files/fixtures.js";
import { freshTacitHome } from "../helpers.js";
import { attemptOf, attempts, configFile, type Handler, isEnvFile, lit, makeCanary, perTestResources, permit, secretNetScript, tacit, unusedPort, writeTree } from "./fixtures.js";

// The tests run concurrently (describe.concurrent): each has its own servers, directories,
// canary and tacit home, and mostly waits (requests wait for their maps to settle, two for
// a 1.5 s network timeout).
const resources = perTestResources("tacit-net-oracle-", { concurrent: true });

/** The secret header the servers below read (and echo, for the echoing one). */
const SECRET_HEADER = "x-k";

interface OracleCase {
  /** Also the path the server answers it on. */
  kind: string;
  /** A word of the message the answer makes tacit (or Node) say. */
  word: string;
  /** A text of the same length in no message. */
  other: string;
}

const CASES: OracleCase[] = [
  { kind: "out-of-scope", word: "among", other: "qzxvw" },
  { kind: "out-of-scope-name", word: "requestNetwork", other: "qzxvwqzxvwqzxv" },
  { kind: "coding", word: "decode", other: "qzxvwq" },
  { kind: "charset", word: "charset", other: "qzxvwqz" },
  { kind: "broken-location", word: "Location", other: "qzxvwqzx" },
  { kind: "timeout", word: "complete", other: "qzxvwqzx" },
  { kind: "cut-short", word: "whole", other: "qzxvw" },
  { kind: "loop", word: "redirects", other: "qzxvwqzxv" },
  { kind: "to-closed", word: "ECONNREFUSED", other: "QZXVWQZXVWQZ" },
  { kind: "to-invalid", word: "getaddrinfo", other: "qzxvwqzxvwq" },
  { kind: "partial", word: "Partial", other: "Qzxvwqz" },
  { kind: "multiple-choices", word: "returns", other: "qzxvwqz" },
];

/** Answers each case's path so that tacit fails the request with a message after the answer came; `echo` puts the secret header into what it chose. */
function answering(closedPort: number, echo: boolean): Handler {
  return (request, response) => {
    const secret = echo ? String(request.headers[SECRET_HEADER] ?? "") : "mystery";
    switch (new URL(request.url, "http://x").pathname) {
      case "/out-of-scope":
      case "/out-of-scope-name":
        response.writeHead(302, { location: `http://127.0.0.1:1/${secret}` });
        return void response.end();
      case "/coding":
        response.writeHead(200, { "content-encoding": `x-${secret}` });
        return void response.end("text");
      case "/charset":
        response.writeHead(200, { "content-type": `text/plain; charset=x-${secret}` });
        return void response.end("text");
      case "/broken-location":
        response.writeHead(302, { location: `http://[${secret}/` });
        return void response.end();
      case "/timeout":
        response.writeHead(200, { "content-length": "100" });
        return void response.write("a start"); // and nothing more: the request times out after its headers came
      case "/cut-short":
        response.writeHead(200, { "content-length": "100" });
        response.write("a start");
        return void setImmediate(() => response.socket?.destroy());
      case "/loop":
        response.writeHead(302, { location: `/loop?k=${secret}` });
        return void response.end();
      case "/to-invalid": // in the scope, and no such host: Node's message names it
        response.writeHead(302, { location: `http://${secret}.invalid/` });
        return void response.end();
      case "/to-closed":
        response.writeHead(302, { location: `http://127.0.0.1:${closedPort}/${secret}` });
        return void response.end();
      case "/partial":
        response.writeHead(206, { "content-range": "bytes 0-3/10" });
        return void response.end("text");
      case "/multiple-choices":
        response.writeHead(300, { "content-type": "text/plain" });
        return void response.end("pick one");
      default:
        response.writeHead(404);
        response.end();
    }
  };
}

/**
 * The script: each case's request twice, the word as the secret header in the one a bit of the
 * canary picks, the other text in the other. Every case's two maps are asked for before the first
 * request: a request waits until its map is settled, half a second after it was asked for
 * (MAP_SETTLE_MS, runner/classified/store.ts), so maps asked for case by case held each case's
 * first request that long (some 6 s of the test); asked for together, they settle together.
 */
function oracleScript(origin: string, scope: string[]): string {
  return secretNetScript(scope, `
  for (const c of cases) {
    attempt(c.kind + "-picked", () => net.httpGet(${lit(origin)} + "/" + c.kind, { secretHeaders: { ${lit(SECRET_HEADER)}: c.picked } }));
    attempt(c.kind + "-not-picked", () => net.httpGet(${lit(origin)} + "/" + c.kind, { secretHeaders: { ${lit(SECRET_HEADER)}: c.notPicked } }));
  }
`, { setup: `const cases = ${JSON.stringify(CASES)}.map((c) => ({
  ...c,
  picked: token.map((t) => ((t.charCodeAt(7) & 1) === 1 ? c.word : c.other)),
  notPicked: token.map((t) => ((t.charCodeAt(7) & 1) === 1 ? c.other : c.word)),
}));
` });
}

describe.concurrent("a failure's message after an answer came", () => {
  it("reads the same whether a secret header is one of its words or not: a bit of the secret picks the word, and the script cannot tell", async () => {
    const { root, canary } = resources.projectWithSecret();
    const home = freshTacitHome();
    try {
      const closed = await unusedPort();
      const server = await resources.server(answering(closed, false));
      const result = await tacit(
        root,
        oracleScript(server.origin, [`127.0.0.1:${server.port}`, `127.0.0.1:${closed}`, "*.invalid"]),
        [...permit("127.0.0.1:*", "*.invalid"), "--config", configFile(resources.dir(), { networkTimeoutMs: 1500 })],
        { TACIT_HOME: home.home },
      );
      expect(result.code, result.stderr).toBe(0);
      const found = attempts(result.stdout);
      for (const { kind, word, other } of CASES) {
        const picked = attemptOf(found, `${kind}-picked`);
        expect(picked.status, kind).not.toBe("ok");
        // The word is one of the message's own: the attack is real for this kind.
        expect(String(picked.value), kind).toContain(word);
        expect(String(picked.value), kind).not.toContain("[redacted]");
        expect(attemptOf(found, `${kind}-not-picked`), kind).toEqual(picked);
        // Both were sent, each with its own secret header: the word in one of them.
        const sent = server.received.filter((r) => r.url.split("?")[0] === `/${kind}`).map((r) => r.headers[SECRET_HEADER]);
        expect(new Set(sent), kind).toEqual(new Set([word, other]));
      }
      expect(String(attemptOf(found, "out-of-scope-picked").value)).toMatch(/was redirected to http:\/\/127\.0\.0\.1:1\/mystery, which tacit did not follow: 127\.0\.0\.1:1 is not among the hosts this requestNetwork scope asked for/);
      expect(String(attemptOf(found, "coding-picked").value)).toContain("(x-mystery)");
      expect(String(attemptOf(found, "multiple-choices-picked").value)).toContain('Its body began: "pick one"');
      expectNoLeak(canary, result, root, isEnvFile);
    } finally {
      home.cleanup();
    }
  });

  it("still masks a secret the server put into what it chose: a redirect's URL, a Location, a coding's or a charset's name", async () => {
    const { root, canary } = resources.projectWithSecret();
    const home = freshTacitHome();
    try {
      const closed = await unusedPort();
      const server = await resources.server(answering(closed, true));
      const echoed = ["out-of-scope", "coding", "charset", "broken-location", "loop", "to-invalid"];
      const result = await tacit(
        root,
        secretNetScript([`127.0.0.1:${server.port}`, `127.0.0.1:${closed}`, "*.invalid"], `
  for (const kind of ${JSON.stringify(echoed)}) attempt(kind, () => net.httpGet(${lit(server.origin)} + "/" + kind, { secretHeaders: { ${lit(SECRET_HEADER)}: token } }));
`),
        permit("127.0.0.1:*", "*.invalid"),
        { TACIT_HOME: home.home },
      );
      expect(result.code, result.stderr).toBe(0);
      const found = attempts(result.stdout);
      for (const kind of echoed) {
        const failed = attemptOf(found, kind);
        expect(failed.status, kind).not.toBe("ok");
        expect(String(failed.value), kind).toContain("[redacted]");
      }
      expect(String(attemptOf(found, "out-of-scope").value)).toContain("was redirected to http://127.0.0.1:1/[redacted], which tacit did not follow");
      expect(String(attemptOf(found, "coding").value)).toContain("(x-[redacted])");
      expect(String(attemptOf(found, "charset").value)).toContain("answered in x-[redacted], a charset");
      expect(String(attemptOf(found, "to-invalid").value)).toMatch(/getaddrinfo \w+ \[redacted\]\.invalid/);
      // The server did get the canary each time: the masks are of its echoes.
      expect(server.received.filter((r) => r.headers[SECRET_HEADER] === canary).length).toBeGreaterThanOrEqual(echoed.length);
      expectNoLeak(canary, result, root, isEnvFile);
    } finally {
      home.cleanup();
    }
  });
});

/**
 * A redirect's hop, with a secret header, to a TLS server on localhost whose trusted certificate
 * has the subject `subject(canary)` (and `extensions`): returns the hop's failure for the test to
 * match, having checked that the server got the canary and that it leaked nowhere.
 */
async function hopToCertificate(onTestFinished: TestContext["onTestFinished"], subject: (canary: string) => string, extensions: (canary: string) => string[] = () => []): Promise<string> {
  const { root, canary } = resources.projectWithSecret();
  const home = freshTacitHome();
  onTestFinished(home.cleanup);
  const certs = resources.dir();
  execFileSync("openssl", [
    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", subject(canary), ...extensions(canary),
    "-keyout", path.join(certs, "key.pem"), "-out", path.join(certs, "cert.pem"),
  ], { stdio: "ignore" });
  const tls = createTlsServer({ key: readFileSync(path.join(certs, "key.pem")), cert: readFileSync(path.join(certs, "cert.pem")) }, (_request, response) => response.end("over tls"));
  tls.listen(0); // every address: localhost may be ::1 or 127.0.0.1
  await once(tls, "listening");
  onTestFinished(() => void tls.close());
  const tlsPort = (tls.address() as AddressInfo).port;
  const redirector = await resources.server((_request, response) => {
    response.writeHead(302, { location: `https://localhost:${tlsPort}/` });
    response.end();
  });
  const result = await tacit(
    root,
    secretNetScript([`127.0.0.1:${redirector.port}`, `localhost:${tlsPort}`], `
  attempt("hop", () => net.httpGet(${lit(`${redirector.origin}/`)}, { secretHeaders: { ${lit(SECRET_HEADER)}: token } }));
`),
    permit(`127.0.0.1:${redirector.port}`, `localhost:${tlsPort}`),
    // The certificate is trusted: only its names are wrong.
    { TACIT_HOME: home.home, NODE_EXTRA_CA_CERTS: path.join(certs, "cert.pem") },
  );
  expect(result.code, result.stderr).toBe(0);
  const hop = attemptOf(attempts(result.stdout), "hop");
  expect(hop.status).toBe("Error");
  expect(redirector.received.map((r) => r.headers[SECRET_HEADER])).toEqual([canary]);
  expectNoLeak(canary, result, root, isEnvFile);
  return String(hop.value);
}

describe.concurrent("a certificate's names in Node's message", () => {
  it("are masked where they echo a secret header, on a redirect's hop to a server whose certificate is for another name", async ({ onTestFinished }) => {
    // Node words a certificate for another host "Host: localhost. is not in the cert's altnames:
    // DNS:…", the names being the server's to choose. A server that put a secret it was sent
    // into them (the test's own certificate stands for one) gets it masked, Node's words kept.
    const failure = await hopToCertificate(onTestFinished, (canary) => `/CN=${canary}.example`, (canary) => ["-addext", `subjectAltName=DNS:${canary}.example`]);
    expect(failure).toMatch(/Host: localhost\. is not in the cert's altnames: DNS:\[redacted\]\.example/);
  });

  it("are masked where a certificate with two CNs and no altnames echoes a secret header (Node joins its CNs with \",\")", async ({ onTestFinished }) => {
    // Node words a certificate without DNS altnames "Host: localhost. is not cert's CN: a,b" when
    // it has two CNs: the list is no one of the names the certificate holds, and it came back as
    // it was, the canary among them. The names as Node lists them are the server's piece.
    const failure = await hopToCertificate(onTestFinished, (canary) => `/CN=${canary}.example/CN=other.example`);
    expect(failure).toMatch(/Host: localhost\. is not cert's CN: \[redacted\]/);
  });
});

describe.concurrent("a redirect the approval policy would ask about", () => {
  it("is refused with the server's host masked where it echoes a secret, and tacit's words the same whatever the secret is", async ({ onTestFinished }) => {
    // The refusal names the pattern of the rule it matched ("net GET http://<host> (always-ask)"),
    // whose host is the one the server's Location named.
    const { root, canary } = resources.projectWithSecret();
    const home = freshTacitHome();
    onTestFinished(home.cleanup);
    const redirector = await resources.server((request, response) => {
      const echoed = new URL(request.url, "http://x").pathname === "/echo";
      response.writeHead(302, { location: `http://${echoed ? String(request.headers[SECRET_HEADER]) : "mystery"}.localtest/` });
      response.end();
    });
    const config = resources.dir() + "/tacit.json";
    writeFileSync(config, JSON.stringify({
      policy: { rules: [{ action: "net", tier: "always-ask", host: "*.localtest" }] },
      libraryConfig: { networkPermissions: ["127.0.0.1:*", "*.localtest"] },
    }));
    const result = await tacit(
      root,
      secretNetScript([`127.0.0.1:${redirector.port}`, "*.localtest"], `
  const picked = token.map((t) => ((t.charCodeAt(7) & 1) === 1 ? "approval" : "qzxvwqzx"));
  const notPicked = token.map((t) => ((t.charCodeAt(7) & 1) === 1 ? "qzxvwqzx" : "approval"));
  attempt("picked", () => net.httpGet(${lit(`${redirector.origin}/fixed`)}, { secretHeaders: { ${lit(SECRET_HEADER)}: picked } }));
  attempt("not-picked", () => net.httpGet(${lit(`${redirector.origin}/fixed`)}, { secretHeaders: { ${lit(SECRET_HEADER)}: notPicked } }));
  attempt("echo", () => net.httpGet(${lit(`${redirector.origin}/echo`)}, { secretHeaders: { ${lit(SECRET_HEADER)}: token } }));
`),
      ["--config", config],
      { TACIT_HOME: home.home },
    );
    expect(result.code, result.stderr).toBe(0);
    const found = attempts(result.stdout);
    const picked = attemptOf(found, "picked");
    expect(picked.status).toBe("SecurityError");
    expect(String(picked.value)).toContain("redirected the request to http://mystery.localtest/, which the approval policy puts a person in front of (net GET http://mystery.localtest (always-ask))");
    expect(attemptOf(found, "not-picked")).toEqual(picked);
    const echo = attemptOf(found, "echo");
    expect(echo.status).toBe("SecurityError");
    expect(String(echo.value)).toContain("redirected the request to http://[redacted].localtest/, which the approval policy puts a person in front of (net GET http://[redacted].localtest (always-ask))");
    expect(redirector.received.map((r) => r.headers[SECRET_HEADER])).toEqual(expect.arrayContaining(["approval", "qzxvwqzx", canary]));
    expectNoLeak(canary, result, root, isEnvFile);
  });
});

/**
 * Each path's answer: bytes Node's HTTP parser refuses, with the secret header the request carried
 * in them (`{k}`). "status-text" is HTTP it reads; its status text is never shown.
 */
const UNREADABLE: Record<string, string> = {
  "status-line": "HTTP/1.1 {k}\r\n\r\n",
  "status-text": "HTTP/1.1 200 {k}\x01\r\ncontent-length: 2\r\n\r\nok",
  "not-http": "{k}\r\n\r\n",
  "header-value": "HTTP/1.1 200 OK\r\nx-a: {k}\x01\r\n\r\n",
  "header-name": "HTTP/1.1 200 OK\r\n{k} x: y\r\n\r\n",
  "content-length": "HTTP/1.1 200 OK\r\ncontent-length: {k}\r\n\r\n",
  "chunk-size": "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n{k}\r\n",
  trailer: "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n{k}\x01: v\r\n\r\n",
  "folded-header": "HTTP/1.1 200 OK\r\nx-a: a\r\n {k}\r\ncontent-length: 0\r\n\r\n",
  "location-control": "HTTP/1.1 302 Found\r\nlocation: /{k}\x7f\r\ncontent-length: 0\r\n\r\n",
  "status-1000": "HTTP/1.1 1000 {k}\r\ncontent-length: 0\r\n\r\n",
};

describe.concurrent("an answer Node cannot read as HTTP", () => {
  it("fails in Node's words with nothing of the bytes that held the secret header: the canary reaches no output, --json's included", async ({ onTestFinished }) => {
    // A failure at the transport level is Node's message; what a server chose in it is redacted
    // (server-text.ts), whether Node raised it as an event or threw it from transport.request
    // (throwsWorded). The parser's messages quote none of the bytes: the canary must not come back.
    const { root, canary } = resources.projectWithSecret();
    const home = freshTacitHome();
    onTestFinished(home.cleanup);
    const received: string[] = [];
    const raw = createTcpServer((socket) => {
      socket.on("error", () => undefined);
      let head = "";
      socket.on("data", (data: Buffer) => {
        head += data.toString("latin1");
        const end = head.indexOf("\r\n\r\n");
        if (end === -1) return;
        const [, target = ""] = head.split(" ");
        const secret = new RegExp(`\r\n${SECRET_HEADER}: ([^\r]*)`, "i").exec(head.slice(0, end))?.[1] ?? "";
        received.push(secret);
        head = "";
        socket.end(Buffer.from((UNREADABLE[target.slice(1)] ?? "HTTP/1.1 404 x\r\ncontent-length: 0\r\n\r\n").replace("{k}", secret), "latin1"));
      });
    });
    raw.listen(0, "127.0.0.1");
    await once(raw, "listening");
    onTestFinished(() => void raw.close());
    const origin = `http://127.0.0.1:${(raw.address() as AddressInfo).port}`;
    const script = secretNetScript([origin.slice("http://".length)], `
  for (const path of ${JSON.stringify(Object.keys(UNREADABLE))}) {
    attempt(path, () => net.httpRequest("GET", ${lit(origin)} + "/" + path, { secretHeaders: { ${lit(SECRET_HEADER)}: token } }));
  }
`);
    for (const json of [false, true]) {
      const result = await tacit(root, script, [...(json ? ["--json"] : []), ...permit(origin.slice("http://".length))], { TACIT_HOME: home.home });
      expect(result.code, result.stderr).toBe(0);
      const found = attempts(json ? (JSON.parse(result.stdout) as { stdout: string }).stdout : result.stdout);
      for (const path of Object.keys(UNREADABLE)) {
        const answer = attemptOf(found, path);
        if (path === "status-text") {
          expect(answer, path).toEqual({ status: "ok", value: { status: 200, body: "ok" } });
          continue;
        }
        expect(answer.status, path).toBe("Error");
        expect(String(answer.value), path).toMatch(/answered with something that is not HTTP\/1\.1 \(Node read: Parse Error: [^)]*\); nothing of it was kept/);
      }
      expectNoLeak(canary, result, root, isEnvFile);
    }
    // The server had the canary each time: what it answered held it.
    expect(received.filter((secret) => secret === canary)).toHaveLength(2 * Object.keys(UNREADABLE).length);
  });
});

describe.concurrent("a secret with letters past ASCII that a server puts into a redirect's host", () => {
  it("is masked in the host's ASCII (xn--) form, in which the URL tacit follows and Node's messages name it", async ({ onTestFinished }) => {
    // A host is looked up, and named, in its ASCII form: "pässwörd-<canary>" is
    // "xn--psswrd-<canary>-…", the canary as it is, the rest in punycode's deltas. Neither was
    // a form redaction looked for, and the script read the whole secret back from that name.
    const canary = makeCanary();
    const root = path.join(resources.dir(), "work");
    writeTree(root, { ".env": `p\u00e4ssw\u00f6rd-${canary}\n` });
    const home = freshTacitHome();
    onTestFinished(home.cleanup);
    const redirector = await resources.server((request, response) => {
      const secret = String(request.headers[SECRET_HEADER] ?? "");
      const host = { "/out-of-scope": `${secret}.example`, "/in-a-label": `tenant-${secret}.invalid` }[request.url] ?? `${secret}.invalid`;
      response.writeHead(302, { location: `http://${host}/` });
      response.end();
    });
    const result = await tacit(
      root,
      secretNetScript([`127.0.0.1:${redirector.port}`, "*.invalid"], `
  for (const path of ["/to-invalid", "/out-of-scope", "/in-a-label"]) attempt(path, () => net.httpGet(${lit(redirector.origin)} + path, { secretHeaders: { ${lit(SECRET_HEADER)}: token } }));
`),
      permit(`127.0.0.1:${redirector.port}`, "*.invalid", "*.example"),
      { TACIT_HOME: home.home },
    );
    expect(result.code, result.stderr).toBe(0);
    const found = attempts(result.stdout);
    expect(attemptOf(found, "/to-invalid").status).toBe("Error");
    expect(String(attemptOf(found, "/to-invalid").value)).toMatch(/getaddrinfo \w+ \[redacted\]\.invalid/);
    expect(attemptOf(found, "/out-of-scope").status).toBe("SecurityError");
    expect(String(attemptOf(found, "/out-of-scope").value)).toContain("was redirected to http://[redacted].example/, which tacit did not follow");
    // In a label with more in it, its ASCII letters stand together: masked there.
    expect(String(attemptOf(found, "/in-a-label").value)).toMatch(/getaddrinfo \w+ xn--tenant-\[redacted\]-[a-z0-9]+\.invalid/);
    // The server had the secret, letters past ASCII and all (a header goes out one byte a character).
    expect(redirector.received.map((r) => r.headers[SECRET_HEADER])).toEqual(Array(3).fill(`p\u00e4ssw\u00f6rd-${canary}`));
    expectNoLeak(canary, result, root, isEnvFile);
  });
});
