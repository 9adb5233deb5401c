// The operator's LLM key in what a server chose and tacit quotes in an error or a refusal (a
// Location, a redirect's URL, a content coding's name), through the real CLI and a loopback
// server that knows the key. Every reply to the sandbox is scrubbed of the key's whole forms,
// but a quote cut at its length inside the key left the key's first characters, a URL's host
// is the key lower-cased, and a path may escape some of its characters: none of those was a
// form the scrub knew, and the script printed the key (and the audit log recorded it).
// Asserted: no piece of the key of 8 characters reaches stdout, stderr, the secure output or
// the audit log.

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import type http from "node:http";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { afterAll, afterEach, expect, it } from "vitest";
import { runCli, tempDirWithHome, unchecked } from "../helpers.js";
import { startServer, type Received, type TestServer } from "./fixtures.js";

const { dir, env, cleanup } = tempDirWithHome("tacit-host-key-text-");
afterAll(cleanup);

/** Letters of both cases (a URL's host folds them), digits, and "-". */
const apiKey = `sk-${[...randomUUID().replaceAll("-", "")].map((c, i) => (i % 2 === 0 ? c.toUpperCase() : c)).join("")}`;

let server: TestServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

/** The key with its first character percent-escaped, as an encoder that escapes more than it must writes it. */
const escapedKey = `%${apiKey.charCodeAt(0).toString(16).toUpperCase()}${apiKey.slice(1)}`;

/** Runs `body` (a script's lines inside requestNetwork) against a server answering with `handler`; all that tacit wrote. */
async function runAgainst(handler: (request: Received, response: http.ServerResponse) => void, body: string): Promise<{ code: number; seen: string }> {
  server = await startServer(handler);
  const at = `127.0.0.1:${server.port}`;
  const name = randomUUID();
  const script = path.join(dir, `${name}.ts`);
  const sink = path.join(dir, `${name}.sink`);
  const log = path.join(dir, `${name}.audit.jsonl`);
  writeFileSync(
    script,
    `const origin = "${server.origin}";\n` +
      `const attempt = (label: string, op: () => unknown) => { try { println(label, "ok", String(op())); } catch (e) { println(label, "error", (e as Error).message); } };\n` +
      `requestNetwork(["${at}"], (net) => {\n${body}\n});\n`,
  );
  const r = await runCli(
    unchecked(["run", "--network-permissions", at, "--llm-base-url", "http://127.0.0.1:9", "--llm-api-key", apiKey, "--llm-model", "m", "--secure-output", sink, "--audit-log", log, script]),
    { cwd: dir, env },
  );
  const written = [r.stdout, r.stderr, existsSync(sink) ? readFileSync(sink, "utf8") : "", readFileSync(log, "utf8")].join("\n");
  return { code: r.code ?? -1, seen: written };
}

/** No piece of the key of 8 characters, in any case, with escapes and NULs (UTF-16) taken out. */
function expectNoPieceOfKey(seen: string): void {
  const plain = decodeURIComponent(seen.replace(/%(?![0-9a-f]{2})/gi, "%25")).replace(/\\u0000|\0/g, "").toLowerCase();
  const key = apiKey.toLowerCase();
  for (let at = 0; at + 8 <= key.length; at++) expect(plain, `holds ${key.slice(at, at + 8)} of the key`).not.toContain(key.slice(at, at + 8));
}

it("a Location that is no URL, quoted up to 200 characters, shows no first part of the key where the cut falls inside it", async () => {
  const cuts = [8, 12, 20, apiKey.length - 1];
  const { code, seen } = await runAgainst(
    (request, response) => {
      const n = Number(new URL(request.url, "http://x").searchParams.get("n"));
      // "http://[" and padding: the quote's 200th character is the key's n-th.
      response.writeHead(302, { location: `http://[${"x".repeat(200 - 8 - n)}${apiKey}]/` });
      response.end();
    },
    cuts
      .map((n) => `  attempt("cut ${n}", () => net.httpGet(origin + "/?n=${n}"));\n  attempt("posted ${n}", () => String(net.httpPostClassified(origin + "/?n=${n}", classify("x"))));`)
      .join("\n"),
  );
  expect(code, seen).toBe(0);
  // Each request failed on the broken Location (the quote was made); httpPostClassified's answer is
  // that redirect, classified, and the secure output says why it was not followed.
  for (const n of cuts) expect(seen).toMatch(new RegExp(`cut ${n} error .*a Location that is no URL`));
  for (const n of cuts) expect(seen).toContain(`posted ${n} ok Classified(***)`);
  expect(seen.split("(a redirect tacit did not follow: ").length - 1).toBe(cuts.length);
  expectNoPieceOfKey(seen);
});

it("a redirect to a host named by the key (which a URL lower-cases) is refused without naming it, to the script and in the audit log", async () => {
  const { code, seen } = await runAgainst(
    (_request, response) => {
      response.writeHead(302, { location: `http://${apiKey}.example/` });
      response.end();
    },
    `  attempt("host", () => net.httpGet(origin + "/"));`,
  );
  expect(code, seen).toBe(0);
  expect(seen).toMatch(/host error .*was redirected to .*which tacit did not follow/);
  expectNoPieceOfKey(seen);
});

it("a chain of redirects through paths that hold the key with a character escaped names none of it, in the error or in the audit log's hops", async () => {
  const { code, seen } = await runAgainst(
    (request, response) => {
      const hop = Number(new URL(request.url, "http://x").searchParams.get("hop"));
      response.writeHead(302, { location: `/${escapedKey}/?hop=${hop + 1}` });
      response.end();
    },
    `  attempt("chain", () => net.httpGet(origin + "/?hop=0"));`,
  );
  expect(code, seen).toBe(0);
  expect(seen).toMatch(/chain error .*more than 5 redirects/);
  // The hops were followed (the server was asked for them), and the log records them.
  expect(server!.received.length).toBe(6);
  expect(seen).toContain('"redirects":[');
  expectNoPieceOfKey(seen);
});

it("a content coding named by the key, escaped, is not quoted with the key in it", async () => {
  const { code, seen } = await runAgainst(
    (_request, response) => {
      response.writeHead(200, { "content-encoding": escapedKey });
      response.end("x");
    },
    `  attempt("coding", () => net.httpGet(origin + "/"));`,
  );
  expect(code, seen).toBe(0);
  expect(seen).toMatch(/coding error .*content coding tacit does not decode/);
  expectNoPieceOfKey(seen);
});

it("a charset named by the key, which an error quotes upper-cased, is not quoted with the key in it", async () => {
  const { code, seen } = await runAgainst(
    (_request, response) => {
      // A UTF-32 name: refused, and quoted upper-cased.
      response.writeHead(200, { "content-type": `text/plain; charset=utf32-${apiKey}` });
      response.end("x");
    },
    `  attempt("charset", () => net.httpGet(origin + "/"));`,
  );
  expect(code, seen).toBe(0);
  expect(seen).toMatch(/charset error .*answered in UTF32-\[redacted\], which tacit does not read/);
  expectNoPieceOfKey(seen);
});

// A server that knows the key chooses its form: split in two (two Content-Encoding headers, which
// Node joins with ", "), each half is no form of the key, and masking every long enough piece of
// it would confirm a script's guesses through a server that gives its text back (eight characters
// it knows, "sk-proj-", then one more at a time). The README says so.
it.fails("KNOWN LIMITATION: a key a server splits in two (a content coding named twice) is quoted in its halves", async () => {
  const half = Math.floor(apiKey.length / 2);
  const { code, seen } = await runAgainst(
    (_request, response) => {
      response.setHeader("content-encoding", [apiKey.slice(0, half), apiKey.slice(half)]);
      response.end("x");
    },
    `  attempt("split", () => net.httpGet(origin + "/"));`,
  );
  expect(code, seen).toBe(0);
  expect(seen).toMatch(/split error .*content coding tacit does not decode/);
  expectNoPieceOfKey(seen);
});

/**
 * A file that holds the key (a config a server serves, an echo), served with ranges as a file
 * server serves them: one range as 206 with its Content-Range, several as multipart/byteranges.
 */
// Long enough before the key that a part from the first byte to 12 characters into it keeps 100
// characters and more past what a cut part leaves out (HostSecrets.cutMargin: 383 for this key).
const served = `${"a".repeat(600)}\nLLM_KEY=${apiKey}\n${"z".repeat(300)}\n`;
const keyAt = served.indexOf(apiKey);

function serveRanges(request: Received, response: http.ServerResponse): void {
  const ranges = /^bytes=(.*)$/.exec(String(request.headers.range ?? ""))?.[1]?.split(",").map((range) => range.trim().split("-").map(Number) as [number, number]);
  if (ranges === undefined) return void response.end(served);
  const part = ([from, to]: [number, number]): string => served.slice(from, to + 1);
  if (ranges.length === 1) {
    const [from, to] = ranges[0]!;
    response.writeHead(206, { "content-range": `bytes ${from}-${to}/${served.length}`, "content-type": "text/plain" });
    return void response.end(part(ranges[0]!));
  }
  response.writeHead(206, { "content-type": "multipart/byteranges; boundary=CUT" });
  response.end(ranges.map(([from, to]) => `--CUT\r\ncontent-range: bytes ${from}-${to}/${served.length}\r\n\r\n${part([from, to])}\r\n`).join("") + "--CUT--\r\n");
}

it("a part of an answer that holds the key shows no piece of it: one from the first byte is cut as the size limit cuts, any other is not kept", async () => {
  const asked = {
    // Starts 3 characters into the key: all of it but "sk-" was the part.
    inside: `${keyAt + 3}-${keyAt + apiKey.length + 5}`,
    // From the first byte, ending 12 characters into the key.
    head: `0-${keyAt + 11}`,
    // Two parts, the second from inside the key.
    several: `0-9,${keyAt + 5}-${keyAt + 30}`,
    // From the first byte to the last: the whole file, the key in it masked whole.
    whole: `0-${served.length - 1}`,
  };
  const { code, seen } = await runAgainst(
    serveRanges,
    Object.entries(asked)
      .map(([label, range]) => `  attempt("${label}", () => JSON.stringify(net.httpGet(origin + "/config", { headers: { range: "bytes=${range}" } })));`)
      .join("\n"),
  );
  expect(code, seen).toBe(0);
  expect(seen).toMatch(/inside error .*a part of its answer that does not start at its first byte/);
  expect(seen).toMatch(/several error .*a part of its answer that does not start at its first byte/);
  // The head is served, cut before the key; the whole with the key masked.
  expect(seen).toMatch(/head ok "a{100}a*\\n\[tacit: this part ends early: its last characters, where the operator's LLM key could begin, are left out/);
  expect(seen).toContain(`whole ok "${"a".repeat(600)}\\nLLM_KEY=[redacted]\\n${"z".repeat(300)}\\n"`);
  expectNoPieceOfKey(seen);
});

it("an answer that holds the key lower- or upper-cased (a URL's host, a header name a server folds) reaches the script masked", async () => {
  const { code, seen } = await runAgainst(
    (_request, response) => response.end(`link: http://${apiKey.toLowerCase()}.example/\nshout: ${apiKey.toUpperCase()}\n`),
    `  attempt("folded", () => JSON.stringify(net.httpGet(origin + "/")));`,
  );
  expect(code, seen).toBe(0);
  expect(seen).toContain('folded ok "link: http://[redacted].example/\\nshout: [redacted]\\n"');
  expectNoPieceOfKey(seen);
});
