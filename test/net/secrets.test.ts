// Secrets on the wire, through the real CLI: a random canary in a classified `.env` is sent
// as a secret header or a classified body and arrives at the server in plaintext, while the
// agent's stdout, stderr and errors never hold it — also when the server reflects it back
// (in the body, in a redirect, in a truncated answer). A classified answer goes to the
// secure sink only.

import { once } from "node:events";
import { readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { expectNoLeak } from "../files/fixtures.js";
import { connectServe, freshTacitHome } from "../helpers.js";
import { ConcurrencyLimit } from "../../runner/concurrency-limit.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, configFile, echo, expectRefused, type Handler, isEnvFile, lit, makeCanary, permit, perTestResources, secretCutMarker, tacit as tacitRun, type TestServer, unusedPort, writeTree } from "./fixtures.js";

/**
 * At most two of this file's tacits at once. Its tests run concurrently (vitest takes five at a
 * time), and several post, map or redact megabytes, a few seconds of CPU each within the default
 * 30 s limit: five at once, beside the other worker's file on two cores, ran past it (124).
 */
const running = new ConcurrencyLimit(2);
const tacit = (...args: Parameters<typeof tacitRun>): ReturnType<typeof tacitRun> =>
  running.run(() => tacitRun(...args), undefined, () => new Error("not cancelled"));

const resources = perTestResources("tacit-net-secret-", { concurrent: true });
const server = resources.server;

interface SecretWorld {
  /** The script's working directory, with `.env` holding the canary. */
  root: string;
  /** The secure sink, outside the root. */
  sink: string;
  canary: string;
}

function secretWorld(): SecretWorld {
  const base = resources.dir();
  const root = path.join(base, "work");
  const canary = makeCanary();
  writeTree(root, { ".env": `  ${canary}\n`, "plain.txt": "nothing here\n" });
  return { root, sink: path.join(base, "sink.log"), canary };
}

/** The canary reached neither output stream nor any ordinary file of the tree. */
function expectNotSeen(world: SecretWorld, seen: { stdout: string; stderr: string }): void {
  expectNoLeak(world.canary, seen, world.root, isEnvFile);
  // Not even its random part, in pieces (a partial leak is a leak).
  const random = world.canary.slice("canary-".length);
  for (let at = 0; at + 8 <= random.length; at += 4) {
    const piece = random.slice(at, at + 8);
    expect(seen.stdout.includes(piece), `stdout holds ${piece} of the canary`).toBe(false);
    expect(seen.stderr.includes(piece), `stderr holds ${piece} of the canary`).toBe(false);
  }
}

// `env` as read, and `token`, its map that trims it. A value derived from the token is mapped from
// `env` (fromToken): a map settles MAP_SETTLE_MS (half a second) after the maps it is made from
// have settled (runner/classified/store.ts), so a map of `token` held its request for two.
const TOKEN = `const env = requestFileSystem(".", (fs) => fs.readClassified(".env"));
const token = env.map((t) => t.trim());`;

/** Script text: a map of the .env to `expression` of `t`, the token (the .env trimmed): what `token.map((t) => expression)` gives, settled half a second sooner. */
const fromToken = (expression: string): string => `env.map((raw) => { const t = raw.trim(); return ${expression}; })`;

/** Reflects the authorization header: in the body, a redirect, an error status, a malformed Location. */
const reflecting: Handler = (request, response) => {
  const secret = String(request.headers.authorization ?? "");
  const url = new URL(request.url, "http://x");
  switch (url.pathname) {
    case "/text":
      response.end(`you sent ${secret} and ${secret}!`);
      return;
    case "/error":
      response.statusCode = 500;
      response.end(`bad token: ${secret}`);
      return;
    case "/to-host":
      response.writeHead(302, { location: `http://${secret}.evil.example/` });
      response.end();
      return;
    case "/to-path":
      response.writeHead(302, { location: `/echo?k=${secret}` });
      response.end();
      return;
    case "/to-port":
      response.writeHead(302, { location: `http://127.0.0.1:1/${secret}` });
      response.end();
      return;
    case "/to-malformed":
      response.writeHead(302, { location: `http://[${secret}/` });
      response.end();
      return;
    default:
      echo(request, response);
  }
};


/**
 * A script's start that sends secret headers to an echo server and reads back what it
 * received: `echoed(name, value)` returns the header as the server saw it (the body follows).
 */
function echoingScript(a: TestServer): string {
  return `${ATTEMPT_PRELUDE}
${TOKEN}
${echoingBlock(a)}`;
}

/** echoingScript's requestNetwork block alone, for a script that has ATTEMPT_PRELUDE and TOKEN already. */
function echoingBlock(a: TestServer): string {
  return `requestNetwork([${lit(`127.0.0.1:${a.port}`)}], (net) => {
  const echoed = (name: string, value: Classified<string>): string =>
    String(JSON.parse(net.httpGet(${lit(`${a.origin}/echo`)}, { secretHeaders: { [name]: value } })).headers[name] ?? "");`;
}

/** Guesses of the canary's beginning, right (as it is, and in either case) and wrong, for the notes server of the shared run. */
function notesGuesses(world: SecretWorld): Record<string, string> {
  const random = world.canary.slice("canary-".length);
  return { right: world.canary.slice(0, 16), rightLower: world.canary.slice(0, 16).toLowerCase(), rightUpper: world.canary.slice(0, 16).toUpperCase(), wrong: `canary-${random[0] === "f" ? "e" : "f"}${random.slice(1, 9)}` };
}

/**
 * The length of the smuggled request's body that ends right after the secret, so that an echo
 * of it holds the secret alone, which redaction of the value sent (secret + a request line) cannot find.
 */
function smuggledCut(world: SecretWorld): number {
  return "GET /second HTTP/1.1\r\nauthorization: ".length + world.canary.length;
}

/**
 * The tests that send the .env's token (TOKEN) to a server of their own and look at what came
 * back share one run: each part is a server and a block of the script sending to it (its
 * attempts named apart from the others'), and each test checks its own. A run each was a tacit
 * start, most of each test's CPU, for a few requests; no part's requests carry or are answered
 * anything another's could change.
 */
const SHARED_PARTS = {
  /** Reflects the authorization header (see `reflecting`); every way of sending a secret header. */
  reflecting: {
    handler: reflecting,
    block: (a: TestServer): string => {
      const O = a.origin;
      return `requestNetwork([${lit(`127.0.0.1:${a.port}`)}], (net) => {
  const secret = { secretHeaders: { authorization: token } };
  attempt("echo-get", () => JSON.parse(net.httpGet("${O}/echo", secret)).headers.authorization);
  attempt("echo-raw", () => net.httpGet("${O}/echo", secret));
  attempt("echo-post", () => JSON.parse(net.httpPost("${O}/echo", "body", secret)).headers.authorization);
  attempt("echo-request", () => net.httpRequest("PUT", "${O}/echo", { ...secret, body: "b" }));
  attempt("text", () => net.httpGet("${O}/text", secret));
  attempt("error-status", () => net.httpRequest("GET", "${O}/error", secret));
  attempt("redirect-path", () => JSON.parse(net.httpGet("${O}/to-path", secret)).url);
  attempt("redirect-host", () => net.httpGet("${O}/to-host", secret));
  attempt("redirect-port", () => net.httpGet("${O}/to-port", secret));
  attempt("redirect-malformed", () => net.httpGet("${O}/to-malformed", secret));
  // Another header name, and a secret in a plain header or URL is only its mask.
  attempt("custom-name", () => JSON.parse(net.httpGet("${O}/echo", { secretHeaders: { "x-api-key": token } })).headers["x-api-key"]);
  attempt("as-plain-header", () => JSON.parse(net.httpGet("${O}/plain", { headers: { "x-leak": String(token) } })).headers["x-leak"]);
  attempt("in-url", () => JSON.parse(net.httpGet("${O}/u?k=" + encodeURIComponent(\`\${token}\`))).url);
  attempt("as-plain-body", () => JSON.parse(net.httpPost("${O}/b", String(token))).body);
});
println("token:", token, String(token), JSON.stringify({ token }));
`;
    },
  },
  /** Gives back the note it is sent: the script's own text, ending with a guess of the secret's beginning. */
  notes: {
    handler: ((request, response) => response.end(`saved note: ${request.body}`)) satisfies Handler,
    block: (a: TestServer, world: SecretWorld): string => `requestNetwork([${lit(`127.0.0.1:${a.port}`)}], (net) => {
  for (const [label, guess] of Object.entries(${JSON.stringify(notesGuesses(world))})) {
    attempt(label, () => net.httpPost(${lit(`${a.origin}/notes`)}, "note " + guess, { secretHeaders: { authorization: token } }) === "saved note: note " + guess);
  }
});
`,
  },
  /** A plain JSON echo, like any public "echo my request" endpoint, of secrets it escapes. */
  reshaped: {
    handler: undefined,
    block: (a: TestServer): string => `${echoingBlock(a)}
  // The echo JSON-escapes these, so the text it answers is not the text that was sent. Made
  // before the requests, so they settle together (a request waits for its value to settle).
  const quoted = ${fromToken('t + \'"\'')};
  const tabbed = ${fromToken('t + "\\t"')};
  attempt("quote", () => echoed("x-quote", quoted));
  attempt("tab", () => echoed("x-tab", tabbed));
});
`,
  },
  // A security review had ordinary servers give the token back alone: one that parses
  // "Bearer <token>", httpbin's /cookies parsing "a=<token>", one that answers in base64, and a
  // redirect to a host named after it (lower-cased by the URL parser).
  tokenAlone: {
    handler: ((request, response) => {
      const url = new URL(request.url, "http://x");
      const authorization = String(request.headers.authorization ?? "");
      const cookie = String(request.headers.cookie ?? "");
      switch (url.pathname) {
        case "/bearer":
          response.end(JSON.stringify({ token: authorization.replace(/^Bearer /, "") }));
          return;
        case "/cookies":
          response.end(JSON.stringify({ cookies: Object.fromEntries(cookie.split("; ").map((pair) => pair.split("="))) }));
          return;
        case "/base64":
          response.end(Buffer.from(authorization.replace(/^Bearer /, "")).toString("base64"));
          return;
        case "/to-host":
          response.writeHead(302, { location: `http://${authorization.replace(/^Bearer /, "")}.invalid/` });
          response.end();
          return;
        default:
          echo(request, response);
      }
    }) satisfies Handler,
    block: (a: TestServer): string => {
      const O = a.origin;
      return `requestNetwork([${lit(`127.0.0.1:${a.port}`)}], (net) => {
  // Both maps made before the requests, so they settle together (a request waits for its value to settle).
  const bearer = { secretHeaders: { authorization: ${fromToken('"Bearer " + t')} } };
  const cookie = { secretHeaders: { cookie: ${fromToken('"a=" + t + "; b=1"')} } };
  attempt("bearer", () => net.httpGet("${O}/bearer", bearer));
  attempt("cookies", () => net.httpGet("${O}/cookies", cookie));
  attempt("base64", () => net.httpGet("${O}/base64", bearer));
  attempt("host", () => net.httpGet("${O}/to-host", bearer));
});
`;
    },
  },
  /** A plain JSON echo, sent requests that would smuggle another, after which comes one with the secret. */
  smuggling: {
    handler: undefined,
    block: (a: TestServer, world: SecretWorld): string => {
      const cut = smuggledCut(world);
      return `requestNetwork([${lit(`127.0.0.1:${a.port}`)}], (net) => {
  // One value for every second request, made once: each map made in the loop held its request
  // for the map to settle (half a second each).
  const withRequestLine = ${fromToken('t + "GET / HTTP/1.1"')};
  for (let n = ${cut - 2}; n <= ${cut + 2}; n++) {
    const smuggled = "POST /smuggled HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: " + n + "\\r\\n\\r\\n";
    attempt("first-" + n, () => net.httpRequest("POST", "${a.origin}/first", { headers: { "Content-Length": "0" }, body: smuggled }).status);
    attempt("second-" + n, () => net.httpRequest("GET", "${a.origin}/second", { secretHeaders: { authorization: withRequestLine } }).body);
  }
  attempt("chunked", () => net.httpPost("${a.origin}/te", "0\\r\\n\\r\\nGET /smuggled HTTP/1.1\\r\\n\\r\\n", { headers: { "transfer-encoding": "chunked" } }));
  attempt("connection", () => net.httpGet("${a.origin}/conn", { headers: { Connection: "upgrade", Upgrade: "h2c" } }));
  attempt("secret-length", () => net.httpPost("${a.origin}/sl", "x", { secretHeaders: { "content-length": classify("0000") } }));
});
`;
    },
  },
  /**
   * Answers with the request's head base64-encoded, as an inspection API gives a raw request
   * (ngrok's does): the secret header's bytes fall anywhere in a run of groups of three.
   */
  inspector: {
    handler: ((request, response) => {
      const head = `${request.method} ${request.url} HTTP/1.1\r\n${Object.entries(request.headers).map(([name, value]) => `${name}: ${String(value)}\r\n`).join("")}\r\n`;
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ request: { raw: Buffer.from(head, "latin1").toString("base64") } }));
    }) satisfies Handler,
    block: (a: TestServer): string => `requestNetwork([${lit(`127.0.0.1:${a.port}`)}], (net) => {
  // Three paths of different lengths: the header starts at each place in a group of three.
  for (const where of ["/a", "/ab", "/abc"]) {
    attempt(where, () => atob(JSON.parse(net.httpGet(${lit(a.origin)} + where, { secretHeaders: { authorization: token } })).request.raw.replace(/[^A-Za-z0-9+/=]/g, "")));
  }
});
`,
  },
};

interface SharedRun {
  world: SecretWorld;
  result: Awaited<ReturnType<typeof tacit>>;
  found: ReturnType<typeof attempts>;
  servers: Record<keyof typeof SHARED_PARTS, TestServer>;
}

let shared: Promise<SharedRun> | undefined;

/** The shared run (see SHARED_PARTS), started by the first test that asks for it. */
function sharedRun(): Promise<SharedRun> {
  shared ??= (async () => {
    const world = secretWorld();
    const names = Object.keys(SHARED_PARTS) as Array<keyof typeof SHARED_PARTS>;
    const servers = Object.fromEntries(await Promise.all(names.map(async (name) => [name, await server(SHARED_PARTS[name].handler)] as const))) as SharedRun["servers"];
    const blocks = names.map((name) => SHARED_PARTS[name].block(servers[name], world));
    const result = await tacit(world.root, `${ATTEMPT_PRELUDE}\n${TOKEN}\n${blocks.join("")}`, permit(...names.map((name) => `127.0.0.1:${servers[name].port}`)));
    return { world, result, found: attempts(result.stdout), servers };
  })();
  return shared;
}

/**
 * One run for the tests of a secret with non-ASCII characters ("pässwörd-<canary>") that servers
 * give back in the forms of their languages: a raw echo of the request's head, Python's ASCII
 * JSON and Ruby's inspect, one request to each (a run each was a tacit start for one or two requests).
 */
const closedAfterFile: Array<() => void> = [];
afterAll(() => {
  for (const close of closedAfterFile.splice(0)) close();
});
let nonAscii: Promise<{ world: SecretWorld; result: Awaited<ReturnType<typeof tacit>>; found: ReturnType<typeof attempts> }> | undefined;
function nonAsciiRun(): NonNullable<typeof nonAscii> {
  nonAscii ??= (async () => {
    const world = secretWorld();
    writeTree(world.root, { ".env": `pässwörd-${world.canary}\n` });
    // Echoes the request's head byte for byte, as many debugging endpoints do.
    const raw = net.createServer((socket) => {
      let head = Buffer.alloc(0);
      socket.on("error", () => {});
      socket.on("data", (data: Buffer) => {
        head = Buffer.concat([head, data]);
        const end = head.indexOf("\r\n\r\n");
        if (end === -1) return;
        const body = head.subarray(0, end);
        socket.end(Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n`), body]));
      });
    });
    raw.listen(0, "127.0.0.1");
    await once(raw, "listening");
    closedAfterFile.push(() => void raw.close());
    const rawPort = (raw.address() as AddressInfo).port;
    // Python's json.dumps: every non-ASCII character as \uXXXX.
    const py = await server((request, response) =>
      response.end(JSON.stringify(request.headers).replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)),
    );
    // A header's bytes as Ruby's String#inspect shows a binary string (Rack keeps headers so; a
    // Rails error page lists them): ASCII as it is, every other byte as \xHH.
    const ruby = await server((request, response) => {
      const bytes = [...Buffer.from(String(request.headers.authorization ?? ""), "latin1")];
      const shown = bytes.map((byte) => (byte < 0x80 ? String.fromCharCode(byte) : `\\x${byte.toString(16).toUpperCase()}`)).join("");
      response.end(`{"HTTP_AUTHORIZATION"=>"${shown}"}`);
    });
    const result = await tacit(
      world.root,
      `${ATTEMPT_PRELUDE}
${TOKEN}
requestNetwork([${lit(`127.0.0.1:${rawPort}`)}, ${lit(`127.0.0.1:${py.port}`)}, ${lit(`127.0.0.1:${ruby.port}`)}], (net) => {
  attempt("raw", () => net.httpGet(${lit(`http://127.0.0.1:${rawPort}/`)}, { secretHeaders: { authorization: token } }));
  attempt("ascii-json", () => net.httpGet(${lit(`${py.origin}/`)}, { secretHeaders: { authorization: token } }));
  attempt("ruby-inspect", () => net.httpGet(${lit(`${ruby.origin}/`)}, { secretHeaders: { authorization: token } }));
});
`,
      permit(`127.0.0.1:${rawPort}`, `127.0.0.1:${py.port}`, `127.0.0.1:${ruby.port}`),
    );
    return { world, result, found: attempts(result.stdout) };
  })();
  return nonAscii;
}

describe("secret headers", () => {
  it.concurrent("arrive at the server in plaintext; echoes of them come back redacted, in bodies, statuses and errors", async () => {
    const { world, result, found, servers } = await sharedRun();
    const a = servers.reflecting;
    expect(result.code, result.stderr).toBe(0);
    expect(attemptOf(found, "echo-get")).toEqual({ status: "ok", value: "[redacted]" });
    expect(String(attemptOf(found, "echo-raw").value)).toContain('"authorization":"[redacted]"');
    expect(attemptOf(found, "echo-post")).toEqual({ status: "ok", value: "[redacted]" });
    expect(attemptOf(found, "echo-request").value).toMatchObject({ status: 200 });
    expect(attemptOf(found, "text")).toEqual({ status: "ok", value: "you sent [redacted] and [redacted]!" });
    expect(attemptOf(found, "error-status")).toEqual({ status: "ok", value: { status: 500, body: "bad token: [redacted]" } });
    expect(attemptOf(found, "redirect-path")).toEqual({ status: "ok", value: "/echo?k=[redacted]" });
    expectRefused(found, ["redirect-host"], /not among the hosts/);
    expectRefused(found, ["redirect-port"], /not among the hosts/);
    expect(attemptOf(found, "redirect-malformed").status).not.toBe("ok");
    expect(attemptOf(found, "custom-name")).toEqual({ status: "ok", value: "[redacted]" });
    expect(attemptOf(found, "as-plain-header")).toEqual({ status: "ok", value: "Classified(***)" });
    expect(attemptOf(found, "in-url")).toEqual({ status: "ok", value: "/u?k=Classified(***)" });
    expect(attemptOf(found, "as-plain-body")).toEqual({ status: "ok", value: "Classified(***)" });
    expect(result.stdout).toContain("token: Classified(***) Classified(***)");

    // The server did get the plaintext, trimmed, under the names asked for.
    const withSecret = a.received.filter((r) => r.headers.authorization !== undefined);
    expect(withSecret.length).toBeGreaterThanOrEqual(11);
    for (const r of withSecret) expect(r.headers.authorization).toBe(world.canary);
    expect(a.received.find((r) => r.url === "/echo" && r.headers["x-api-key"] !== undefined)?.headers["x-api-key"]).toBe(world.canary);
    // Plain channels carried only the mask.
    for (const url of ["/plain", "/b"]) expect(JSON.stringify(a.received.find((r) => r.url.startsWith(url)))).not.toContain(world.canary);
    expect(a.received.some((r) => r.url.startsWith("/u?") && r.url.includes(world.canary))).toBe(false);
    expectNotSeen(world, result);
  });

  /**
   * One run for the two tests below, whose requests fail before any answer comes (each may reach
   * any port of 127.0.0.1, to find the closed ones closed): a run each was a tacit start.
   */
  let ownFailures: Promise<{ world: SecretWorld; result: Awaited<ReturnType<typeof tacit>>; found: ReturnType<typeof attempts>; echoing: TestServer }> | undefined;
  const ownFailuresRun = (): NonNullable<typeof ownFailures> =>
    (ownFailures ??= (async () => {
      const world = secretWorld();
      const echoing = await server(echo);
      const hangsUp = await server((_request, response) => void response.socket?.destroy());
      const [pin, otherPin, closed] = [await unusedPort(), await unusedPort(), await unusedPort()];
      writeFileSync(path.join(world.root, ".env.pin"), `${pin}\n`);
      const guesses = { right: world.canary, wrong: makeCanary() };
      const values = { word: ["ECONNREFUSED", "connection"], other: ["NOTAWORDXXXX", "zzzzzzzzzz"] };
      const result = await tacit(
        world.root,
        `${ATTEMPT_PRELUDE}
${TOKEN}
const pin = requestFileSystem(".", (fs) => fs.readClassified(".env.pin").map((t) => t.trim()));
const failure = (f: () => unknown, guess: string, as: string): unknown => {
  try {
    f();
    return "sent";
  } catch (e) {
    return [e instanceof SecurityError ? "SecurityError" : (e as Error).name, String((e as Error).message).split(guess).join(as)];
  }
};
requestNetwork(["127.0.0.1:*"], (net) => {
  for (const [label, guess] of Object.entries(${JSON.stringify(guesses)})) {
    const headers = { ["no " + guess + " token"]: "1" };
    attempt("name-" + label, () => failure(() => net.httpGet(${lit(`${echoing.origin}/x`)}, { headers, secretHeaders: { authorization: token } }), guess, "GUESS"));
    attempt("classified-" + label, () => failure(() => net.httpPostClassified(${lit(`${echoing.origin}/x`)}, token, { headers }), guess, "GUESS"));
  }
  for (const [label, port] of Object.entries(${JSON.stringify({ right: pin, wrong: otherPin })})) {
    attempt("port-" + label, () => failure(() => net.httpGet("http://127.0.0.1:" + port + "/", { secretHeaders: { "x-pin": pin } }), String(port), "PORT"));
  }
});
requestNetwork(["127.0.0.1:*"], (net) => {
  // Maps of the classified .env, as an agent makes them (an attack picks the word by a bit of it),
  // made before the requests so that they settle together (a request waits for its value to settle).
  const maps: Array<[string, Classified<string>, Classified<string>]> = [];
  for (const [label, [refused, hungUp]] of Object.entries(${JSON.stringify(values)})) {
    maps.push([label, env.map(() => refused), env.map(() => hungUp)]);
  }
  for (const [label, first, second] of maps) {
    attempt("closed-header-" + label, () => net.httpGet(${lit(`http://127.0.0.1:${closed}/`)}, { secretHeaders: { "x-k": first } }));
    attempt("closed-body-" + label, () => net.httpPostClassified(${lit(`http://127.0.0.1:${closed}/`)}, first));
    attempt("hangs-up-" + label, () => net.httpGet(${lit(`${hangsUp.origin}/`)}, { secretHeaders: { "x-k": second } }));
  }
});
`,
        permit("127.0.0.1:*"),
      );
      return { world, result, found: attempts(result.stdout), echoing };
    })());

  it.concurrent("tacit's own errors tell a right guess of a secret from a wrong one in no way: no header name, host or port of the script's is redacted", async () => {
    // Redaction masks whatever text holds a form of a secret the request carried, and an error
    // after the secret was unwrapped quoted the script's own text: a header name Node refused
    // (1 KiB of free text, a hundred guesses of a password from a classified .env at once, with
    // no server contacted), or the URL's host and port in a failed connection (a PIN as the port).
    const { world, result, found, echoing } = await ownFailuresRun();
    expect(result.code, result.stderr).toBe(0);
    for (const kind of ["name", "classified", "port"]) {
      const right = attemptOf(found, `${kind}-right`);
      expect(right.status, kind).toBe("ok");
      expect(right.value, kind).toEqual(attemptOf(found, `${kind}-wrong`).value);
      expect(JSON.stringify(right.value), kind).toMatch(kind === "port" ? /PORT/ : /GUESS/);
    }
    expect(JSON.stringify(attemptOf(found, "name-right").value)).toContain("nothing was sent");
    // Refused before anything was sent; the connections to the PIN's port were refused by the system.
    expect(echoing.received).toHaveLength(0);
    expectNotSeen(world, result);
  });

  it.concurrent("nor do the words of tacit's and Node's own failures: a secret that is one of them is not masked where no answer came", async () => {
    // A failure before any answer came quotes nothing a server chose, yet its message was
    // redacted: a secret header (or classified body) made "ECONNREFUSED" or not, as a bit of the
    // secret said, and sent to a closed port came back masked or not. A security review read a
    // .env's character so, a bit per request, with no server at all; a server that hangs up on
    // every request (a TLS port asked over http://) did the same for its message's words.
    const { world, result, found } = await ownFailuresRun();
    expect(result.code, result.stderr).toBe(0);
    for (const kind of ["closed-header", "closed-body", "hangs-up"]) {
      const word = attemptOf(found, `${kind}-word`);
      expect(word.status, kind).toBe("Error");
      expect(word, kind).toEqual(attemptOf(found, `${kind}-other`));
      expect(String(word.value), kind).not.toContain("[redacted]");
    }
    expect(String(attemptOf(found, "closed-header-word").value)).toContain("ECONNREFUSED");
    expect(String(attemptOf(found, "hangs-up-word").value)).toContain("closed the connection without answering");
    expectNotSeen(world, result);
  });

  it.concurrent("an answer that ends with the script's own text tells a right guess of a secret's beginning from a wrong one in no way", async () => {
    // Redaction masked a text that ends partway into a secret, whether or not tacit cut the
    // answer there: a server that gives back what it is sent (a note, a search's query), with
    // the secret header that authorizes the request and never echoed, masked the end of a note
    // ending with the secret's first characters and no other, which told a script the token
    // character by character (ghp_ and 16 more, read in 619 requests).
    const { world, result, found, servers } = await sharedRun();
    expect(result.code, result.stderr).toBe(0);
    const guesses = notesGuesses(world);
    expect(servers.notes.received.map((r) => r.headers.authorization)).toEqual(Object.keys(guesses).map(() => world.canary));
    for (const label of Object.keys(guesses)) expect(attemptOf(found, label), label).toEqual({ status: "ok", value: true });
  });

  it.concurrent("a secret reshaped so that a JSON echo escapes it (a quote, a tab) is still redacted", async () => {
    const { world, result, found } = await sharedRun();
    expect(result.code, result.stderr).toBe(0);
    for (const label of ["quote", "tab"]) attemptOf(found, label);
    expectNotSeen(world, result);
  });

  // A reflecting host could be sent a secret a few characters at a time (map(t => t.slice(i,
  // i + 3))): pieces that short cannot be redacted without destroying ordinary answers, so they
  // are not sent. Checked to fail (the canary's pieces on stdout) when the length check is off.
  // Whether a piece is too short depends on the secret, so the script must not learn it: a
  // refusal at the request told it one bit per request (a security review read a whole secret
  // so, through an unreachable host), and stopping the evaluation told the agent one bit per
  // call (read through tacit serve, from a host that answers every request the same). The value
  // is sent empty, as one that could not be computed is, and the secure output says why.
  it.concurrent("a secret too short to redact (a piece of a longer one) is sent empty, and the script goes on; a longer piece is redacted", async () => {
    const world = secretWorld();
    const a = await server(); // a plain JSON echo, like any public "echo my request" endpoint
    // Each value to send, a map of the classified .env, and the request that sends it (VALUE).
    const variants: Record<string, { value: string; request: string }> = {
      "pieces-of-3": { value: fromToken("t.slice(7, 10)"), request: `echoed("x-piece", VALUE);` },
      "pieces-of-1": { value: fromToken("t.charAt(8)"), request: `echoed("x-char", VALUE);` },
      "padded-piece": { value: fromToken('"   " + t.slice(7, 9) + "   "'), request: `echoed("x-padded", VALUE);` },
      "classified-body-piece": { value: fromToken("t.slice(7, 10)"), request: `net.httpPostClassified(${lit(`${a.origin}/echo`)}, VALUE);` },
      "control-character": { value: fromToken('t + "\\u0001"'), request: `echoed("x-control", VALUE);` },
    };
    // One run makes every request, each followed by a line of its own: a request that stopped the
    // script leaves the lines of those after it unprinted (one tacit start instead of six). The
    // values are made before the requests, so they settle together (a request waits for its value
    // to settle, half a second after it was made).
    const entries = Object.entries(variants);
    const values = entries.map(([, { value }], at) => `  const value${at} = ${value};\n`);
    const requests = entries.map(([label, { request }], at) => `  ${request.replace("VALUE", `value${at}`)}\n  println("after the request: ${label}");\n`);
    const prefixedPiece = `  attempt("prefixed-piece", () => echoed("x-prefixed", prefixed));\n`;
    const prefixedValue = `  const prefixed = ${fromToken('"XXXX" + t.slice(7, 10)')};\n`;
    const result = await tacit(world.root, `${echoingScript(a)}\n${values.join("")}${prefixedValue}${requests.join("")}${prefixedPiece}});\n`, [
      ...permit(`127.0.0.1:${a.port}`),
      "--secure-output",
      world.sink,
    ]);
    expect(result.code, result.stderr).toBe(0);
    for (const label of Object.keys(variants)) expect(result.stdout, label).toContain(`after the request: ${label}\n`);
    expectNotSeen(world, result);
    const sink = readFileSync(world.sink, "utf8");
    expect(sink).toContain('secretHeaders["x-piece"] was sent empty: a secret of fewer than 4 characters');
    expect(sink).toContain('secretHeaders["x-control"] was sent empty: the value holds characters an HTTP header cannot carry');
    expect(sink).toContain("the classified body was sent empty");
    expect(attemptOf(attempts(result.stdout), "prefixed-piece")).toEqual({ status: "ok", value: "[redacted]" });
    // Nothing short ever reached the server, only the header, empty; the prefixed piece did, whole.
    for (const name of ["x-piece", "x-char", "x-padded", "x-control"]) {
      expect(a.received.filter((r) => r.headers[name] !== undefined).map((r) => r.headers[name]), name).toEqual([""]);
    }
    expect(a.received.filter((r) => r.headers["x-prefixed"] !== undefined).map((r) => r.headers["x-prefixed"])).toEqual([`XXXX${world.canary.slice(7, 10)}`]);
    expect(a.received.filter((r) => r.method === "POST").map((r) => r.body)).toEqual([""]);
  });

  it.concurrent("whether a secret can be sent tells the agent nothing: a host that answers alike gives the same result either way, through tacit serve", async ({ onTestFinished }) => {
    const world = secretWorld();
    const a = await server((_request, response) => response.end("the same answer"));
    const home = freshTacitHome();
    onTestFinished(home.cleanup);
    const client = await connectServe(["--no-check", ...permit(`127.0.0.1:${a.port}`), "--secure-output", world.sink], world.root, {
      env: { TACIT_HOME: home.home },
    });
    onTestFinished(() => client.close());
    // The map sends the token whole, or a piece too short to redact, or a value with a line
    // break, as the canary's character says: an agent that could tell these apart read the
    // secret a bit per call. A piece of 3 of it and the line break stand for the real thing.
    const shapes = ["t", "t.slice(7, 10)", 't + "\\n"', '"x".repeat(70_000)'];
    const results: unknown[] = [];
    for (const shape of shapes) {
      // One map of the .env, trimmed in it (a map of TOKEN's map would wait for both to settle, half a second each).
      const code = `const env = requestFileSystem(".", (fs) => fs.readClassified(".env"));\nrequestNetwork([${lit(`127.0.0.1:${a.port}`)}], (net) => {\n  println(net.httpGet(${lit(`${a.origin}/static`)}, { secretHeaders: { "x-token": env.map((raw) => { const t = raw.trim(); return ${shape}; }) } }));\n});\nprintln("after the request");\n`;
      const response = await client.callTool({ name: "execute_typescript", arguments: { code } });
      const { durationMs: _, ...seen } = response.structuredContent as Record<string, unknown>;
      results.push({ ...seen, text: (response.content as Array<{ text: string }>).map((item) => item.text.replace(/\d+ ms\]/, "ms]")), isError: response.isError });
    }
    expect(results[0]).toMatchObject({ stdout: "the same answer\nafter the request\n", exitCode: 0, error: null });
    for (const [at, result] of results.entries()) expect(result, shapes[at]).toEqual(results[0]);
    expect(a.received.map((r) => r.headers["x-token"])).toEqual([world.canary, "", "", ""]);
  });

  it.concurrent("a token sent inside a longer header value is redacted when the server gives it back alone, encoded or lower-cased", async () => {
    const { world, result, found, servers } = await sharedRun();
    expect(result.code, result.stderr).toBe(0);
    expect(attemptOf(found, "bearer")).toEqual({ status: "ok", value: JSON.stringify({ token: "[redacted]" }) });
    expect(attemptOf(found, "cookies")).toEqual({ status: "ok", value: JSON.stringify({ cookies: { a: "[redacted]", b: "1" } }) });
    expect(attemptOf(found, "base64")).toEqual({ status: "ok", value: "[redacted]" });
    expect(attemptOf(found, "host").status).toBe("SecurityError");
    expectNotSeen(world, result);
    // The server did get the token itself.
    expect(servers.tokenAlone.received.some((r) => r.headers.authorization === `Bearer ${world.canary}`)).toBe(true);
  });

  /**
   * A script that guesses the canary's 9th character by halves of the alphabet, through the
   * server on `port`: `atOrPast` is the body of a function of `middle` (and `hex`, `token`, `net`)
   * that tells whether the character is at or past hex[middle]. The map function gets plain data only.
   */
  const learnNinthCharacter = (label: string, port: number, atOrPast: string): string => `requestNetwork([${lit(`127.0.0.1:${port}`)}], (net) => {
  const hex = "0123456789abcdef";
  const atOrPast = (middle: number): boolean => {
    ${atOrPast}
  };
  let low = 0;
  let high = 16;
  while (high - low > 1) {
    const middle = (low + high) >> 1;
    if (atOrPast(middle)) low = middle;
    else high = middle;
  }
  println(${lit(`learned by ${label}: `)} + hex[low]);
});
`;

  /** What the script learned of the canary's 9th character through the host named `label` (see learnNinthCharacter), as it would print it. */
  const learnedLine = (label: string, world: SecretWorld): string => `learned by ${label}: ${world.canary.charAt(8)}\n`;

  /**
   * One run for the KNOWN LIMITATION tests below, each the requests of its own host in a block of
   * its own, its result printed on a line of its own: a run each was a tacit start.
   */
  let limitations: Promise<{ world: SecretWorld; result: Awaited<ReturnType<typeof tacit>> }> | undefined;
  const limitationsRun = (): NonNullable<typeof limitations> =>
    (limitations ??= (async () => {
      const world = secretWorld();
      const echoing = await server();
      const page = await server((_request, response) => response.end("<html><title>Welcome to the service</title></html>"));
      let stored = "";
      const storing = await server((request, response) => {
        if (request.method === "POST") stored = `${String(request.headers["x-api-key"])} ${request.body}`;
        response.end(request.method === "POST" ? "stored" : stored);
      });
      const script = `${ATTEMPT_PRELUDE}
${TOKEN}
${learnNinthCharacter(
  "echo",
  echoing.port,
  // The answer is the URL's echo.
  `const derived = ${fromToken('(hex.indexOf(t.charAt(8)) >= middle ? "guess-yes-0000" : "guess-no-11111")')};
    const answer = JSON.parse(net.httpGet(${lit(`${echoing.origin}/echo?q=guess-yes-0000`)}, { secretHeaders: { "x-guess": derived } }));
    return !String(answer.url).includes("guess-yes-0000");`,
)}${learnNinthCharacter(
  "page",
  page.port,
  `const derived = ${fromToken('(hex.indexOf(t.charAt(8)) >= middle ? "Welcome" : "Qzxvwqz")')};
    return net.httpGet(${lit(`${page.origin}/`)}, { secretHeaders: { "x-guess": derived } }).includes("[redacted]");`,
)}requestNetwork([${lit(`127.0.0.1:${storing.port}`)}], (net) => {
  net.httpPostClassified(${lit(`${storing.origin}/paste`)}, token, { secretHeaders: { "x-api-key": token } });
  println(net.httpGet(${lit(`${storing.origin}/paste/1`)}));
});
`;
      const result = await tacit(world.root, script, permit(...[echoing, page, storing].map((a) => `127.0.0.1:${a.port}`)));
      return { world, result };
    })());

  // KNOWN LIMITATION, asserted as failing so that a fix shows up: redaction itself answers a
  // question. A script sends a secret derived to be one of two known strings and puts one of
  // them in the URL; an echo reflects both, and the URL's copy comes back redacted exactly when
  // the secret equals it: one bit of the secret per request, for any host that echoes
  // requests. Any answer that depends on the plaintext can be turned into such a bit, so the
  // defence is the operator's --network-permissions: no echoing host where secrets are sent.
  it.concurrent.fails("KNOWN LIMITATION: redaction by a reflecting host tells the script one bit per request", async () => {
    const { world, result } = await limitationsRun();
    expect(result.code, result.stderr).toBe(0);
    // What must not be possible: the script learning a character of the secret.
    expect(result.stdout).not.toContain(learnedLine("echo", world));
  });

  // KNOWN LIMITATION, asserted as failing so that a fix shows up: no echo is needed for the
  // bit above. Redaction masks a secret's forms wherever they stand in an answer, and cannot tell
  // an echo from a text the server always sends; a script that knows a word of a page (a title, a
  // product name) makes the secret that word or not, as a bit of it says, and reads whether the
  // page came back with the word masked. The same holds for what a server chose in an error (a
  // redirect's fixed URL, a coding's name). The defence is the operator's --network-permissions:
  // a secret sent to a host can be learned through that host.
  it.concurrent.fails("KNOWN LIMITATION: a word of a page that never echoes anything, masked or not, tells the script one bit per request", async () => {
    const { world, result } = await limitationsRun();
    expect(result.code, result.stderr).toBe(0);
    // What must not be possible: the script learning a character of the secret.
    expect(result.stdout).not.toContain(learnedLine("page", world));
  });

  it.concurrent("a request cannot smuggle a second one that takes the next request's secret header as its body", async () => {
    const { world, result, found, servers } = await sharedRun();
    const cut = smuggledCut(world);
    expect(result.code, result.stderr).toBe(0);
    expectNotSeen(world, result);
    for (let n = cut - 2; n <= cut + 2; n++) expect(attemptOf(found, `first-${n}`).status).toBe("SecurityError");
    expectRefused(found, ["chunked", "connection", "secret-length"], /set by tacit, not by scripts/);
    expect(servers.smuggling.received.map((r) => r.url).filter((url) => url !== "/second")).toEqual([]);
  });

  it.concurrent("a body on GET, HEAD, DELETE, OPTIONS or TRACE is framed: it cannot be read as a request of its own", async ({ onTestFinished }) => {
    const world = secretWorld();
    // A lenient server that reads on past "Connection: close", as some servers and fronts do.
    const seen: Array<{ method: string; url: string; host: string; body: string }> = [];
    const lenient = http.createServer({ insecureHTTPParser: true }, (request, response) => {
      let body = "";
      request.on("data", (chunk: Buffer) => (body += chunk.toString("latin1")));
      request.on("end", () => {
        seen.push({ method: request.method ?? "", url: request.url ?? "", host: String(request.headers.host), body });
        response.end("ok");
      });
    });
    lenient.listen(0, "127.0.0.1");
    await once(lenient, "listening");
    onTestFinished(() => void lenient.close());
    const port = (lenient.address() as AddressInfo).port;
    const smuggled = "POST /smuggled HTTP/1.1\r\nHost: other-site.example\r\nContent-Length: 5\r\n\r\nhello";
    const methods = ["GET", "HEAD", "DELETE", "OPTIONS", "TRACE"];
    const result = await tacit(
      world.root,
      `${ATTEMPT_PRELUDE}
requestNetwork([${lit(`127.0.0.1:${port}`)}], (net) => {
  for (const method of ${JSON.stringify(methods)}) {
    attempt(method, () => net.httpRequest(method, ${lit(`http://127.0.0.1:${port}/first-`)} + method, { body: ${lit(smuggled)} }).status);
  }
});
`,
      permit(`127.0.0.1:${port}`),
    );
    expect(result.code, result.stderr).toBe(0);
    // The server never took the body for a request (to another site, with the script's framing).
    expect(seen.filter((r) => r.url === "/smuggled" || r.host !== `127.0.0.1:${port}`)).toEqual([]);
    for (const method of methods) expect(seen.find((r) => r.url === `/first-${method}`)).toMatchObject({ method, body: smuggled });
  });

  // Not concurrent with the file's other runs: its claim is that ~5 s of the host's CPU ends
  // within a 30 s limit, and on two cores four other tacits of this file at once took it past that.
  it("redacting an answer reads it once, however many words the secret has: the run ends within its limit", async ({ onTestFinished }) => {
    const world = secretWorld();
    // 8 MiB of text that starts a match with every word of the secret at every few characters,
    // from a server that takes long headers (Node's default is 16 KiB).
    const urls: string[] = [];
    const big = http.createServer({ maxHeaderSize: 128 * 1024 }, (request, response) => {
      urls.push(request.url ?? "");
      response.end("w0000000".repeat(1024 * 1024));
    });
    big.listen(0, "127.0.0.1");
    await once(big, "listening");
    onTestFinished(() => void big.close());
    const port = (big.address() as AddressInfo).port;
    const a = { port, origin: `http://127.0.0.1:${port}` };
    const result = await tacit(
      world.root,
      `${ATTEMPT_PRELUDE}
const words: string[] = [];
for (let i = 0; i < 5000; i++) words.push("w" + String(i).padStart(9, "0"));
const many = classify(words.join(" "));
requestNetwork([${lit(`127.0.0.1:${a.port}`)}], (net) => {
  attempt("big", () => net.httpGet(${lit(`${a.origin}/big`)}, { secretHeaders: { "x-words": many } }).length);
  attempt("too-long", () => net.httpGet(${lit(`${a.origin}/long`)}, { secretHeaders: { "x-words": many, "x-more": many } }).length);
});
`,
      // Before, the host's thread searched the answer once per form (50,000 of them), about a
      // minute here, and the wall-clock limit could not fire until it was done.
      [...permit(`127.0.0.1:${a.port}`), "--exec-timeout-ms", "30000", "--secure-output", world.sink],
    );
    // Done within the limit, not killed at it (124).
    expect(result.code, result.stderr).toBe(0);
    // The 8 MiB answer, with the secret's words masked (the last one, cut short, too), and said to fill the limit.
    expect(attemptOf(attempts(result.stdout), "big")).toEqual({ status: "ok", value: 8 * 1024 * 1024 - 8 + "[redacted]".length + secretCutMarker(8 * 1024 * 1024, true).length });
    // Secret headers longer than servers take are sent empty (the second request), and its answer is not searched for them.
    expect(attemptOf(attempts(result.stdout), "too-long")).toEqual({ status: "ok", value: 8 * 1024 * 1024 });
    expect(urls).toEqual(["/big", "/long"]);
    expect(readFileSync(world.sink, "utf8")).toMatch(/secretHeaders were sent empty: together they are longer than 65536 characters/);
  }, 120_000);

  it.concurrent("a secret with \"/\" is redacted when a server's JSON escapes it as \"\\/\" (PHP's json_encode)", async () => {
    const world = secretWorld();
    // A base64 key has "/" in it (an AWS secret key, say).
    const key = `${world.canary.slice(0, 14)}/${world.canary.slice(14, 28)}/${world.canary.slice(28)}`;
    writeTree(world.root, { ".env": `${key}\n` });
    // PHP's json_encode of the request headers: "/" comes out as "\/".
    const php = await server((request, response) => response.end(JSON.stringify(request.headers).replace(/\//g, "\\/")));
    const result = await tacit(
      world.root,
      `${ATTEMPT_PRELUDE}
${TOKEN}
requestNetwork([${lit(`127.0.0.1:${php.port}`)}], (net) => {
  attempt("php", () => net.httpGet(${lit(`${php.origin}/`)}, { secretHeaders: { authorization: token, "x-bearer": ${fromToken('"Bearer " + t')} } }));
});
`,
      permit(`127.0.0.1:${php.port}`),
    );
    expect(result.code, result.stderr).toBe(0);
    expect(php.received[0]?.headers.authorization).toBe(key);
    const echoed = String(attemptOf(attempts(result.stdout), "php").value);
    expect(echoed).toContain('"authorization":"[redacted]"');
    expect(echoed).toContain('"x-bearer":"[redacted]"');
    expectNotSeen(world, result);
  });

  it.concurrent("a secret with non-ASCII characters is redacted when a Go server echoes it as JSON (bytes that are not UTF-8 as \\ufffd)", async ({ onTestFinished }) => {
    const world = secretWorld();
    writeTree(world.root, { ".env": `pässwörd-àª-${world.canary}\n` });
    // Go's encoding/json of the header's bytes: a byte that does not start valid UTF-8 is the escape \ufffd.
    const go = net.createServer((socket) => {
      let head = Buffer.alloc(0);
      socket.on("error", () => {});
      socket.on("data", (data: Buffer) => {
        head = Buffer.concat([head, data]);
        if (head.indexOf("\r\n\r\n") === -1) return;
        const line = head.subarray(0, head.indexOf("\r\n\r\n")).toString("latin1").split("\r\n").find((l) => /^authorization:/i.test(l)) ?? "";
        const bytes = Buffer.from(line.slice("authorization:".length).trim(), "latin1");
        const strict = new TextDecoder("utf-8", { fatal: true });
        let text = "";
        for (let i = 0; i < bytes.length; ) {
          const size = [1, 2, 3, 4].find((n) => {
            try {
              return i + n <= bytes.length && (strict.decode(bytes.subarray(i, i + n)), true);
            } catch {
              return false;
            }
          });
          text += size === undefined ? "\ufffd" : bytes.subarray(i, i + size).toString("utf8");
          i += size ?? 1;
        }
        const body = Buffer.from(`{"authorization":${JSON.stringify(text).replace(/\ufffd/g, "\\ufffd")}}`);
        socket.end(Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n`), body]));
      });
    });
    go.listen(0, "127.0.0.1");
    await once(go, "listening");
    onTestFinished(() => void go.close());
    const port = (go.address() as AddressInfo).port;
    const result = await tacit(
      world.root,
      `${ATTEMPT_PRELUDE}
${TOKEN}
requestNetwork([${lit(`127.0.0.1:${port}`)}], (net) => {
  attempt("go", () => net.httpGet(${lit(`http://127.0.0.1:${port}/`)}, { secretHeaders: { authorization: token } }));
});
`,
      permit(`127.0.0.1:${port}`),
    );
    expect(result.code, result.stderr).toBe(0);
    expect(attemptOf(attempts(result.stdout), "go").value).toBe('{"authorization":"[redacted]"}');
    expectNotSeen(world, result);
  });

  it.concurrent("a secret with a non-ASCII character is redacted when a server echoes its bytes or escapes it as ASCII JSON", async () => {
    const { world, result, found } = await nonAsciiRun();
    expect(result.code, result.stderr).toBe(0);
    expect(attemptOf(found, "raw").value).toMatch(/^authorization: \[redacted\]$/m);
    expect(attemptOf(found, "ascii-json").value).toContain('"authorization":"[redacted]"');
    expectNotSeen(world, result);
  });

  // KNOWN LIMITATION, asserted as failing so that a fix shows up: redaction knows only what
  // the same request carried. A host that stores what it is sent (a paste, a gist, object
  // storage) gives it back to a later request that carried nothing secret, in plaintext; the
  // next run could ask for it as well, so remembering this run's secrets would not close it.
  // The defence is the operator's --network-permissions: no such host where secrets are sent.
  it.concurrent.fails("KNOWN LIMITATION: a host that stores what it is sent gives a classified value back to a later request", async () => {
    const { world, result } = await limitationsRun();
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).not.toContain(world.canary);
  });

  it.concurrent("a secret with a non-ASCII character is redacted when a server shows its bytes escaped, as Ruby's inspect and Python's bytes repr do (\\xE4)", async () => {
    const { world, result, found } = await nonAsciiRun();
    expect(result.code, result.stderr).toBe(0);
    expect(attemptOf(found, "ruby-inspect").value).toBe('{"HTTP_AUTHORIZATION"=>"[redacted]"}');
    expectNotSeen(world, result);
  });

  it.concurrent("a secret inside a base64 text of a longer one (a raw request, base64-encoded) is redacted wherever it falls in it", async () => {
    const { world, result, servers } = await sharedRun();
    expect(result.code, result.stderr).toBe(0);
    expect(servers.inspector.received.map((r) => r.headers.authorization)).toEqual([world.canary, world.canary, world.canary]);
    expectNotSeen(world, result);
  });

  it.concurrent("an answer cut by the size limit does not reveal part of a secret it reflected", async () => {
    const world = secretWorld();
    const limit = 4096;
    // Pads the reflection so that the cut falls inside it, leaving `keep` of its characters.
    const a = await server((request, response) => {
      const secret = String(request.headers.authorization ?? "");
      const keep = Number(new URL(request.url, "http://x").searchParams.get("keep"));
      response.end("x".repeat(limit - keep) + secret + "y".repeat(100));
    });
    const keeps = [8, 20, world.canary.length - 4, world.canary.length - 1];
    const result = await tacit(
      world.root,
      `${ATTEMPT_PRELUDE}
${TOKEN}
requestNetwork([${lit(`127.0.0.1:${a.port}`)}], (net) => {
  for (const keep of ${JSON.stringify(keeps)}) {
    attempt("keep-" + keep, () => net.httpGet(${lit(`${a.origin}/pad?keep=`)} + keep, { secretHeaders: { authorization: token } }).replace(/^x+/, ""));
  }
});
`,
      [...permit(`127.0.0.1:${a.port}`), "--config", configFile(world.root, { networkResponseLimitBytes: limit })],
    );
    expect(result.code, result.stderr).toBe(0);
    const found = attempts(result.stdout);
    for (const keep of keeps) {
      const { status, value } = attemptOf(found, `keep-${keep}`);
      expect(status).toBe("ok");
      expect(String(value)).toContain("[tacit: response truncated");
    }
    expect(a.received).toHaveLength(keeps.length);
    for (const r of a.received) expect(r.headers.authorization).toBe(world.canary);
    expectNotSeen(world, result);
  });
});

describe("secret headers and the size limit", () => {
  it.concurrent("an answer cut inside a character of a reflected secret does not reveal the secret before it", async () => {
    const world = secretWorld();
    writeTree(world.root, { ".env": `ä${world.canary}ö-tail\n` });
    const limit = 4096;
    // Reflects the header as UTF-8 ("ö" is two bytes), padded so that the cut falls between them.
    const a = await server((request, response) => {
      const secret = String(request.headers.authorization ?? "");
      response.end("x".repeat(limit - Buffer.byteLength(`ä${world.canary}`) - 1) + secret + "y".repeat(100));
    });
    const result = await tacit(
      world.root,
      `${ATTEMPT_PRELUDE}
${TOKEN}
requestNetwork([${lit(`127.0.0.1:${a.port}`)}], (net) => {
  attempt("cut", () => net.httpGet(${lit(`${a.origin}/`)}, { secretHeaders: { authorization: token } }).replace(/^x+/, ""));
});
`,
      [...permit(`127.0.0.1:${a.port}`), "--config", configFile(world.root, { networkResponseLimitBytes: limit })],
    );
    expect(result.code, result.stderr).toBe(0);
    expect(a.received[0]?.headers.authorization).toBe(`ä${world.canary}ö-tail`);
    expect(String(attemptOf(attempts(result.stdout), "cut").value)).toMatch(/^\[redacted\]\n\[tacit: response truncated/);
    expectNotSeen(world, result);
  });
});

describe("httpPostClassified", () => {
  it.concurrent("sends the plaintext body; the answer is a Classified whose plaintext reaches the secure sink only", async () => {
    const world = secretWorld();
    const replyMarker = makeCanary().replace("canary", "reply");
    const a = await server((request, response) => {
      response.end(`${replyMarker} got ${request.body} type=${request.headers["content-type"]}`);
    });
    const result = await tacit(
      world.root,
      `${ATTEMPT_PRELUDE}
${TOKEN}
requestNetwork([${lit(`127.0.0.1:${a.port}`)}], (net) => {
  const answer = net.httpPostClassified(${lit(`${a.origin}/classified`)}, token);
  println("answer:", answer);
  println("string:", String(answer), JSON.stringify({ answer }), \`\${answer}\`);
  println("length:", answer.map((s) => s.length));
  println("sink:", answer);
  attempt("json-type", () => String(net.httpPostClassified(${lit(`${a.origin}/json`)}, classify('{"k": 1}'), { contentType: "application/json" })));
  attempt("with-secret-header", () => String(net.httpPostClassified(${lit(`${a.origin}/both`)}, token, { secretHeaders: { authorization: token } })));
  attempt("denied", () => net.httpPostClassified("http://127.0.0.1:1/", token));
  attempt("not-classified", () => net.httpPostClassified(${lit(`${a.origin}/plain`)}, "plain" as unknown as Classified<string>));
});
`,
      [...permit(`127.0.0.1:${a.port}`), "--secure-output", world.sink],
    );
    expect(result.code, result.stderr).toBe(0);
    const found = attempts(result.stdout);
    expect(result.stdout).toContain("answer: Classified(***)");
    expect(result.stdout).toContain('string: Classified(***) {"answer":"Classified(***)"} Classified(***)');
    expect(result.stdout).toContain("length: Classified(***)");
    expect(attemptOf(found, "json-type")).toEqual({ status: "ok", value: "Classified(***)" });
    expect(attemptOf(found, "with-secret-header")).toEqual({ status: "ok", value: "Classified(***)" });
    expectRefused(found, ["denied"], /not among the hosts/);
    expect(attemptOf(found, "not-classified").status).not.toBe("ok");

    // The server got the plaintext body with the default content type.
    const [first] = a.received.filter((r) => r.url === "/classified");
    expect(first).toMatchObject({ method: "POST", body: world.canary });
    expect(first?.headers["content-type"]).toBe("text/plain; charset=utf-8");
    expect(a.received.find((r) => r.url === "/json")?.headers["content-type"]).toBe("application/json");
    expect(a.received.find((r) => r.url === "/both")).toMatchObject({ body: world.canary });
    expect(a.received.find((r) => r.url === "/both")?.headers.authorization).toBe(world.canary);
    expect(a.received.some((r) => r.url === "/plain")).toBe(false);

    // The answer's plaintext is in the sink, and nowhere the agent sees.
    const sink = readFileSync(world.sink, "utf8");
    expect(sink).toContain(`${replyMarker} got ${world.canary} type=text/plain; charset=utf-8`);
    expect(sink).toContain(String(`${replyMarker} got ${world.canary}`.length + " type=text/plain; charset=utf-8".length));
    expect(result.stdout + result.stderr).not.toContain(replyMarker);
    expectNotSeen(world, result);
  });

  it.concurrent("a key from past the first 64 KiB of a classified body, reflected by the server in a content coding or a redirect, never reaches the script", async () => {
    const world = secretWorld();
    // A long .env (over 64 KiB) whose key comes last.
    const filler = Array.from({ length: 9000 }, (_, i) => `SETTING_${i}=value\n`).join("");
    writeTree(world.root, { ".env": `${filler}API_KEY=${world.canary}\n` });
    // Sends the posted key back as a content coding, which the error names, or as a redirect to a
    // host outside the scope, which httpPostClassified does not follow. Both are its answer,
    // classified (the error, once visible and redacted, goes to the secure output: a failure
    // after the body was sent would tell the script how the server answered, see test/net/status.test.ts).
    const a = await server((request, response) => {
      const key = /API_KEY=(\S+)/.exec(request.body)?.[1] ?? "none";
      if (request.url === "/upload") response.writeHead(200, { "content-encoding": key });
      else response.writeHead(302, { location: `http://${key}.evil.example/` });
      response.end("x");
    });
    const result = await tacit(
      world.root,
      `${ATTEMPT_PRELUDE}
const env = requestFileSystem(".", (fs) => fs.readClassified(".env"));
requestNetwork([${lit(`127.0.0.1:${a.port}`)}], (net) => {
  attempt("reflected", () => String(net.httpPostClassified(${lit(`${a.origin}/upload`)}, env)));
  attempt("redirected", () => String(net.httpPostClassified(${lit(`${a.origin}/redirect`)}, env)));
});
`,
      permit(`127.0.0.1:${a.port}`),
    );
    expect(result.code, result.stderr).toBe(0);
    expect(a.received[0]?.body).toContain(`API_KEY=${world.canary}`);
    expect(attemptOf(attempts(result.stdout), "reflected")).toEqual({ status: "ok", value: "Classified(***)" });
    expect(attemptOf(attempts(result.stdout), "redirected")).toEqual({ status: "ok", value: "Classified(***)" });
    expectNotSeen(world, result);
  });

  it.concurrent("a key from past the first 64 KiB of a classified body, glued inside a longer word of a redirect's URL, is redacted in the audit log's record of the hop", async () => {
    const world = secretWorld();
    const filler = Array.from({ length: 9000 }, (_, i) => `SETTING_${i}=value\n`).join("");
    writeTree(world.root, { ".env": `${filler}API_KEY=${world.canary}\n` });
    // Sends its client on (307: the body goes along) to a URL that holds the key glued to other text.
    const a = await server((request, response) => {
      if (request.url !== "/upload") return void response.end("stored");
      const key = /API_KEY=(\S+)/.exec(request.body)?.[1] ?? "none";
      response.writeHead(307, { location: `/collect?seen=xx${key}yy` });
      response.end();
    });
    const log = path.join(resources.dir(), "audit.jsonl");
    const result = await tacit(
      world.root,
      `${ATTEMPT_PRELUDE}
const env = requestFileSystem(".", (fs) => fs.readClassified(".env"));
requestNetwork([${lit(`127.0.0.1:${a.port}`)}], (net) => {
  attempt("posted", () => String(net.httpPostClassified(${lit(`${a.origin}/upload`)}, env)));
});
`,
      ["--audit-log", log, ...permit(`127.0.0.1:${a.port}`)],
    );
    expect(result.code, result.stderr).toBe(0);
    expect(attemptOf(attempts(result.stdout), "posted")).toEqual({ status: "ok", value: "Classified(***)" });
    // The hop was followed, with the key in its URL; the log records it masked.
    expect(a.received.map((r) => r.url)).toEqual(["/upload", `/collect?seen=xx${world.canary}yy`]);
    const written = readFileSync(log, "utf8");
    expect(written).toContain(`POST ${a.origin}/collect?seen=xx[redacted]yy`);
    expect(written).not.toContain(world.canary.slice("canary-".length, "canary-".length + 8));
    expectNotSeen(world, result);
  });

  it.concurrent("an answer (or a failure) a server sends as soon as it has read part of a classified body, before the rest was sent, is classified: a key it names in a content coding never reaches the script", async ({ onTestFinished }) => {
    const world = secretWorld();
    const filler = Array.from({ length: 9000 }, (_, i) => `SETTING_${i}=value\n`).join("");
    writeTree(world.root, { ".env": `${filler}API_KEY=${world.canary}\n` });
    // Answers as soon as it has read the key, and reads no more: the rest of the body (8 MB of
    // padding a map put after it, more than the socket buffers take while nothing reads them) is
    // never sent whole. Counted from the body's last byte, the request failed before it was sent,
    // and the script saw the error, naming the content coding the server chose: the key with text
    // glued to it (redacted: see the test above), and, whether a server fails or answers, a bit a
    // map could make depend on the secret. (The answer is not ended: Node's server would read the
    // rest of the body to discard it.)
    const bodiesSeen: string[] = [];
    const early = http.createServer((request, response) => {
      let seen = "";
      request.on("data", (chunk: Buffer) => {
        if (response.headersSent) return;
        seen += chunk.toString("latin1");
        const key = /API_KEY=([^\s#]+)\n/.exec(seen)?.[1];
        if (key === undefined) return;
        bodiesSeen.push(seen);
        request.pause();
        const where = new URL(request.url ?? "/", "http://x").pathname;
        response.writeHead(200, { "content-encoding": where === "/glued" ? `xx${key}yy` : `gzip${key}0` });
        response.write("x");
      });
    });
    await new Promise<void>((resolve) => early.listen(0, "127.0.0.1", resolve));
    onTestFinished(() => new Promise<void>((resolve) => early.close(() => resolve())));
    early.on("connection", (socket) => onTestFinished(() => void socket.destroy()));
    const { port } = early.address() as AddressInfo;
    const result = await tacit(
      world.root,
      `${ATTEMPT_PRELUDE}
const env = requestFileSystem(".", (fs) => fs.readClassified(".env"));
const padded = env.map((text) => text + "#".repeat(8_000_000));
requestNetwork([${lit(`127.0.0.1:${port}`)}], (net) => {
  attempt("glued", () => String(net.httpPostClassified("http://127.0.0.1:${port}/glued", padded)));
  attempt("prefixed", () => String(net.httpPostClassified("http://127.0.0.1:${port}/prefixed", padded)));
});
`,
      ["--json", "--secure-output", world.sink, ...permit(`127.0.0.1:${port}`)],
    );
    expect(result.code, result.stderr).toBe(0);
    const found = attempts(JSON.parse(result.stdout).stdout);
    expect(attemptOf(found, "glued")).toEqual({ status: "ok", value: "Classified(***)" });
    expect(attemptOf(found, "prefixed")).toEqual({ status: "ok", value: "Classified(***)" });
    expectNotSeen(world, result);
    // For the person: the secure output says how each failed (the key masked there too).
    const said = readFileSync(world.sink, "utf8");
    expect(said).toContain(`[tacit] httpPostClassified: POST http://127.0.0.1:${port}/glued: http://127.0.0.1:${port}: answered in a content coding tacit does not decode (xx[redacted]yy)`);
    expect(said).toContain("(gzip[redacted]0)");
    // The server had the key each time, before the body was sent whole.
    expect(bodiesSeen).toHaveLength(2);
    for (const body of bodiesSeen) {
      expect(body).toContain(`API_KEY=${world.canary}\n`);
      expect(body.length).toBeLessThan(4 * 1024 * 1024);
    }
  });

  it.concurrent("a failed request whose classified body has an astral character (or a lone surrogate) is redacted wherever its message is cut, and the script goes on", async () => {
    const world = secretWorld();
    // Longer than the error message below, by far.
    writeTree(world.root, { ".env": `${"s".repeat(400)}-${world.canary}\n` });
    // Hangs up on every request, so each one fails with an error that redaction reads.
    const a = await server((_request, response) => void response.socket?.destroy());
    // The error ("http://127.0.0.1:PORT: the server closed the connection without answering …")
    // is measured first, on a plain request; an emoji at each place around its length puts one
    // where redaction cuts the body to the message's length.
    const result = await tacit(
      world.root,
      `${ATTEMPT_PRELUDE}
${TOKEN}
requestNetwork([${lit(`127.0.0.1:${a.port}`)}], (net) => {
  let length = 0;
  try {
    net.httpPost(${lit(`${a.origin}/x`)}, "plain");
  } catch (e) {
    length = (e as Error).message.length;
  }
  println("@@length\tok\t" + length);
  // Made before the requests, so they settle together (a request waits for its value to settle).
  const bodies: Classified<string>[] = [];
  for (let at = length - 25; at < length + 25; at++) bodies.push(${fromToken('t.slice(0, at) + "\u{1F600}" + t.slice(at)')});
  for (let at = 0; at < 50; at++) {
    attempt("emoji-" + at, () => String(net.httpPostClassified(${lit(`${a.origin}/x`)}, bodies[at]!)));
  }
  attempt("lone", () => String(net.httpPostClassified(${lit(`${a.origin}/x`)}, classify("ab\ud800cdefgh"))));
  println("after");
});
`,
      permit(`127.0.0.1:${a.port}`),
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("after\n");
    const found = attempts(result.stdout);
    // The message the emojis were placed around (the .env's body is longer still).
    expect(attemptOf(found, "length").value).toBeGreaterThan(100);
    expect(attemptOf(found, "length").value).toBeLessThan(400);
    // The server had each body when it hung up: the failure goes to the secure output (redacted
    // there as it was in the error the script saw before), and the script gets its answer, classified.
    for (let at = 0; at < 50; at++) expect(attemptOf(found, `emoji-${at}`)).toEqual({ status: "ok", value: "Classified(***)" });
    expect(attemptOf(found, "lone")).toEqual({ status: "ok", value: "Classified(***)" });
    expectNotSeen(world, result);
  });

  // Whether a server takes a body whole can depend on its size (a limit of its own, a reset
  // partway), and a map can make the body long or short as a bit of the secret says: a failure
  // partway through a long body was an error the script saw, and redacting it, a body of one
  // word of ten million characters overflowed a regular expression's stack, which ended the
  // evaluation. Either told the script the bit.
  it("a server that hangs up partway through a long classified body tells the script nothing of the body's length", async ({ onTestFinished }) => {
    const world = secretWorld();
    // Takes a megabyte of a body, then hangs up; answers a shorter one.
    const limited = http.createServer((request, response) => {
      let received = 0;
      request.on("data", (chunk: Buffer) => {
        received += chunk.length;
        if (received > 1024 * 1024) request.socket.destroy();
      });
      request.on("end", () => response.end("stored"));
    });
    limited.listen(0, "127.0.0.1");
    await once(limited, "listening");
    onTestFinished(() => void limited.close());
    const port = (limited.address() as AddressInfo).port;
    const a = { port, origin: `http://127.0.0.1:${port}` };
    const shapes = ['"short-" + t', '"x".repeat(12_000_000)', '"x y".repeat(4_000_000)'];
    const seen: Array<{ code: number | null; stdout: string; stderr: string }> = [];
    for (const shape of shapes) {
      const result = await tacit(
        world.root,
        `${ATTEMPT_PRELUDE}
const env = requestFileSystem(".", (fs) => fs.readClassified(".env"));
// One map of the .env, trimmed in it (a map of TOKEN's map would wait for both to settle, half a second each).
const body = env.map((raw) => { const t = raw.trim(); return ${shape}; });
requestNetwork([${lit(`127.0.0.1:${a.port}`)}], (net) => {
  attempt("post", () => String(net.httpPostClassified(${lit(`${a.origin}/upload`)}, body)));
});
println("after");
`,
        [...permit(`127.0.0.1:${a.port}`), "--secure-output", world.sink],
      );
      expectNotSeen(world, result);
      seen.push({ code: result.code, stdout: result.stdout, stderr: result.stderr });
    }
    expect(seen[0]!.code, seen[0]!.stderr).toBe(0);
    expect(attemptOf(attempts(seen[0]!.stdout), "post")).toEqual({ status: "ok", value: "Classified(***)" });
    for (const [at, result] of seen.entries()) expect(result, shapes[at]).toEqual(seen[0]);
    // The long bodies did fail partway, out of the script's sight.
    expect(readFileSync(world.sink, "utf8").match(/httpPostClassified: POST .*\/upload: .*its answer, classified as any other, is empty/g)).toHaveLength(2);
  }, 120_000);
});

describe("redact (unit): the forms a server gives a value back in", () => {
  it("covers upper case, Go-style and HTML escaping of the value and of its long words", async () => {
    const { redact } = await import("../../runner/net/redaction.js");
    const secret = "pw<Secr3t>Wxyz&Q-longenough";
    const header = `Bearer ${secret}`;
    for (const echo of [
      secret.toUpperCase(),
      JSON.stringify(secret).slice(1, -1).replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026"),
      secret.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;"),
    ]) {
      expect(redact(`you sent: ${echo}.`, [header]), echo).toBe("you sent: [redacted].");
    }
  });

  it("masks overlapping forms as one, a text that ends partway into a form, and a secret longer than the text", async () => {
    const { redact } = await import("../../runner/net/redaction.js");
    expect(redact("a tokenAAAA-tokenBBBB z", ["tokenAAAA-tok", "A-tokenBBBB"])).toBe("a [redacted] z");
    expect(redact("x=sk-1234567", ["sk-12345678"])).toBe("x=[redacted]");
    expect(redact("x=sk-", ["sk-12345678"])).toBe("x=sk-"); // Under 4 characters: left.
    const long = "k".repeat(1_000_000);
    expect(redact(`head ${"k".repeat(20)}`, [long])).toBe("head [redacted]");
    expect(redact("nothing secret here", ["Bearer sk-abcdefghij"])).toBe("nothing secret here");
    expect(redact("got sk-abcdefghij and SK-ABCDEFGHIJ.", ["Bearer sk-abcdefghij"])).toBe("got [redacted] and [redacted].");
  });
});
