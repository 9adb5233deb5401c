// Shared pieces of the network suite: a real HTTP server on 127.0.0.1 that records every
// request it receives (so a test judges "nothing was sent" from the server's side, never by
// the script's word), config files for the limits, and the files suite's attempt reporting.
// No test sends traffic anywhere but 127.0.0.1.

import { writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { afterAll, afterEach, expect } from "vitest";
import { type CliResult, runCli, unchecked } from "../helpers.js";
import { CUT_END_CHARS } from "../../runner/net/redaction.js";

export { CUT_END_CHARS };
import { ATTEMPT_PRELUDE, type Attempt, attemptOf, attempts, lit, makeCanary, realTempDir, tacit, writeTree } from "../files/fixtures.js";

export {
  ATTEMPT_PRELUDE,
  attemptOf,
  attempts,
  expectRefused,
  lit,
  makeCanary,
  realTempDir,
  tacit,
  writeTree,
} from "../files/fixtures.js";
export type { CliResult } from "../files/fixtures.js";

/** One request as the server received it. */
export interface Received {
  method: string;
  /** Path and query. */
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export type Handler = (request: Received, response: http.ServerResponse) => void;

export interface TestServer {
  port: number;
  /** "http://127.0.0.1:PORT" */
  origin: string;
  /** Every request received, in order (including those a handler never answered). */
  received: Received[];
  /** TCP connections accepted so far, a request sent on them or not. */
  readonly connections: number;
  close(): Promise<void>;
}

/** Answers with a JSON echo of the request: method, url, headers, body. */
export const echo: Handler = (request, response) => {
  response.setHeader("content-type", "application/json");
  response.end(JSON.stringify(request));
};

/**
 * Starts a server on 127.0.0.1 (a free port). A request counts as received as soon as its
 * headers arrive (`received` is then updated again with the full body).
 */
export async function startServer(handler: Handler = echo): Promise<TestServer> {
  const received: Received[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = http.createServer((request, response) => {
    const entry: Received = { method: request.method ?? "", url: request.url ?? "", headers: request.headers, body: "" };
    received.push(entry);
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      entry.body = Buffer.concat(chunks).toString("utf8");
      handler(entry, response);
    });
  });
  server.on("connection", (socket) => {
    connections++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    received,
    get connections() {
      return connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Runs `test` against a server started for it, closed afterwards whatever happens. */
export async function withServer(test: (server: TestServer) => Promise<void>, handler?: Handler): Promise<void> {
  const server = await startServer(handler);
  try {
    await test(server);
  } finally {
    await server.close();
  }
}

/** A port nothing listens on (bound, then released); requests to it must never be tried. */
export async function unusedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Writes a `--config` file with these libraryConfig keys; returns its path. */
export function configFile(dir: string, libraryConfig: Record<string, unknown>): string {
  const file = path.join(dir, "tacit.json");
  writeFileSync(file, JSON.stringify({ libraryConfig }));
  return file;
}

/**
 * A script run with `apiKey` as the operator's LLM key that GETs `${server.origin}/?n=<n>` for each
 * of `ns`, under a response limit of `limit` bytes, and prints `cut <n> <JSON of the answer>`, its
 * lead of `{"k":"` and "f"s cut off: for the tests of answers cut inside or near a form of the key.
 */
export function runCutAnswers(dir: string, env: Record<string, string>, server: TestServer, apiKey: string, limit: number, ns: number[]): Promise<CliResult> {
  const at = `127.0.0.1:${server.port}`;
  const config = path.join(dir, `${randomUUID()}.json`);
  writeFileSync(config, JSON.stringify({ libraryConfig: { networkPermissions: [at], networkResponseLimitBytes: limit } }));
  const file = path.join(dir, `${randomUUID()}.ts`);
  writeFileSync(
    file,
    `requestNetwork(["${at}"], (net) => {\n` +
      `  for (const n of ${JSON.stringify(ns)}) println("cut", n, JSON.stringify(net.httpGet("${server.origin}/?n=" + n).replace(/^\\{"k":"f*/, "")));\n` +
      `});\n`,
  );
  return runCli(unchecked(["run", "--config", config, "--llm-base-url", "http://127.0.0.1:9", "--llm-api-key", apiKey, "--llm-model", "m", file]), { cwd: dir, env });
}

/**
 * The note that ends an answer to a request with secret headers (or a classified body) cut at
 * `limit` bytes (`filled`: one that fills the limit without being cut), as a script sees it.
 */
export function secretCutMarker(limit: number, filled = false): string {
  const where = filled ? `the response fills the size limit (${limit} bytes)` : `response truncated at ${limit} bytes`;
  return `\n[tacit: ${where}; unless a mask ends it, its last ${CUT_END_CHARS} characters are left out too, where a secret this request carried could begin partway]\n`;
}

/** `--network-permissions a,b,…` */
export const permit = (...patterns: string[]): string[] => ["--network-permissions", patterns.join(",")];

/**
 * Servers and temp dirs that live for one test: each test file calls this once at the top
 * level, and everything it hands out is closed or removed after each test; with
 * `{ concurrent: true }` (a file whose tests run concurrently) after the file instead: a test's
 * afterEach would close the servers and remove the directories of tests still running.
 */
export function perTestResources(dirPrefix: string, options: { concurrent?: boolean } = {}) {
  const cleanups: Array<() => void | Promise<void>> = [];
  (options.concurrent === true ? afterAll : afterEach)(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });
  return {
    async server(handler?: Handler): Promise<TestServer> {
      const started = await startServer(handler);
      cleanups.push(() => started.close());
      return started;
    },
    dir(): string {
      const { dir, cleanup } = realTempDir(dirPrefix);
      cleanups.push(cleanup);
      return dir;
    },
    /** A project directory ("work" in a temp dir) whose .env holds a fresh canary (see TOKEN_FROM_ENV). */
    projectWithSecret(): { root: string; canary: string } {
      const root = path.join(this.dir(), "work");
      const canary = makeCanary();
      writeTree(root, { ".env": `${canary}\n` });
      return { root, canary };
    },
  };
}

/** For expectNoLeak: the canary may stand only in the project's .env. */
export const isEnvFile = (file: string): boolean => path.basename(file) === ".env";

/** Script text: `token`, the canary of projectWithSecret's .env as a Classified value, to send as a secret header. */
export const TOKEN_FROM_ENV = `const token = requestFileSystem(".", (fs) => fs.readClassified(".env").map((t) => t.trim()));`;

/**
 * Script text: ATTEMPT_PRELUDE, then TOKEN_FROM_ENV's `token`, then `setup`, then `body` run
 * inside `requestNetwork(hosts, (net) => { … })`. `body` and `setup` are whole lines (each
 * begins and ends with a line break as a template literal written on its own lines does).
 */
export function secretNetScript(hosts: readonly string[], body: string, options: { setup?: string } = {}): string {
  return `${ATTEMPT_PRELUDE}\n${TOKEN_FROM_ENV}\n${options.setup ?? ""}requestNetwork(${JSON.stringify(hosts)}, (net) => {${body}});\n`;
}

/**
 * Sends the secret "pässwörd-<canary>" (a project's .env) as the header x-key to a loopback server,
 * once for each of `shapes`, the server answering each with `answer(shape, value)` (`value` as Node
 * read the header: one character a byte). Checks the run ended well and each request carried the
 * secret; returns what the script got for each shape, and the canary's random part to look for.
 */
export async function echoedNonAsciiSecret(
  resources: ReturnType<typeof perTestResources>,
  shapes: readonly string[],
  answer: (shape: string, value: string) => string,
): Promise<{ seen: (shape: string) => Attempt; random: string; root: string; canary: string; result: CliResult }> {
  const server = await resources.server((request, response) => {
    response.setHeader("content-type", "text/plain");
    response.end(answer(request.url.slice(1), String(request.headers["x-key"])));
  });
  const { root, canary } = resources.projectWithSecret();
  const secret = `pässwörd-${canary}`;
  writeTree(root, { ".env": `${secret}\n` });
  const result = await tacit(
    root,
    secretNetScript([`127.0.0.1:${server.port}`], `
  for (const shape of ${JSON.stringify(shapes)}) {
    attempt(shape, () => net.httpGet(${lit(server.origin)} + "/" + shape, { secretHeaders: { "x-key": token } }));
  }
`),
    permit(`127.0.0.1:${server.port}`),
  );
  expect(result.code, result.stderr).toBe(0);
  // The secret went out, once for each shape.
  expect(server.received.filter((r) => r.headers["x-key"] === secret)).toHaveLength(shapes.length);
  const found = attempts(result.stdout);
  return { seen: (shape) => attemptOf(found, shape), random: canary.slice("canary-".length), root, canary, result };
}
