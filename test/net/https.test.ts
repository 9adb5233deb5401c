// https works, with certificate checking on: a server with a certificate the host does not
// trust is refused; the same server is reached once the operator trusts its CA (Node's
// NODE_EXTRA_CA_CERTS, read by the host process, never by the sandbox). http:// to its port
// fails with a message that says the port may serve TLS.

import { execFileSync } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { RequestListener } from "node:http";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers.js";
import { startServer, type TestServer } from "./fixtures.js";

/**
 * An https server on loopback with a fresh self-signed certificate (cert.pem in `dir`) for
 * `name`, given as the certificate's subject alternative name ("IP:…" or "DNS:…").
 */
async function startTlsServer(dir: string, name: string, handler: RequestListener): Promise<{ server: Server; port: number }> {
  execFileSync("openssl", [
    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", `/CN=${name.replace(/^\w+:/, "")}`,
    "-addext", `subjectAltName=${name}`, "-keyout", path.join(dir, "key.pem"), "-out", path.join(dir, "cert.pem"),
  ], { stdio: "ignore" });
  const server = createServer({ key: readFileSync(path.join(dir, "key.pem")), cert: readFileSync(path.join(dir, "cert.pem")) }, handler);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { server, port: (server.address() as AddressInfo).port };
}

let dir: string;
let server: Server;
let port = 0;
let requests = 0;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "tacit-https-"));
  ({ server, port } = await startTlsServer(dir, "IP:127.0.0.1", (_request, response) => {
    requests++;
    response.end("over tls");
  }));
  writeFileSync(
    path.join(dir, "get.ts"),
    `requestNetwork(["127.0.0.1:${port}"], (net) => {\n  try { println(net.httpGet("https://127.0.0.1:${port}/")); } catch (e) { println("refused:", (e as Error).message); }\n});\n`,
  );
});

afterAll(() => {
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("https", () => {
  it("an untrusted certificate is refused; a trusted one works", async () => {
    const args = ["run", "--network-permissions", `127.0.0.1:${port}`, path.join(dir, "get.ts")];
    const untrusted = await runCli(args, { cwd: dir });
    expect(untrusted.code, untrusted.stderr).toBe(0);
    expect(untrusted.stdout).toMatch(/^refused: .*certificate/m);
    const trusted = await runCli(args, { cwd: dir, env: { NODE_EXTRA_CA_CERTS: path.join(dir, "cert.pem") } });
    expect(trusted.code, trusted.stderr).toBe(0);
    expect(trusted.stdout).toBe("over tls\n");
    expect(requests).toBe(1);
  });

  it("NODE_TLS_REJECT_UNAUTHORIZED=0 in tacit's environment does not turn certificate checking off: no secret goes to an untrusted server", async () => {
    const before = requests;
    const script = path.join(dir, "no-verify.ts");
    writeFileSync(
      script,
      `requestNetwork(["127.0.0.1:${port}"], (net) => {\n  try { println(net.httpGet("https://127.0.0.1:${port}/", { secretHeaders: { authorization: classify("Bearer tls-canary-7f3a9c") } })); } catch (e) { println("refused:", (e as Error).message); }\n});\n`,
    );
    // A developer's shell often has it set for some other tool; Node then skipped the check for every
    // TLS connection of tacit's host, and the secret header went to whoever answered on the address.
    const result = await runCli(["run", "--network-permissions", `127.0.0.1:${port}`, script], { cwd: dir, env: { NODE_TLS_REJECT_UNAUTHORIZED: "0" } });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^refused: https:\/\/127\.0\.0\.1:\d+: self-signed certificate.*NODE_TLS_REJECT_UNAUTHORIZED.*NODE_EXTRA_CA_CERTS/m);
    expect(result.stdout).not.toContain("over tls");
    expect(requests).toBe(before);
  });

  it("http:// to this TLS port says the port may serve TLS and names the https:// URL to use (Node said \"socket hang up\")", async () => {
    const before = requests;
    const script = path.join(dir, "plain-to-tls.ts");
    writeFileSync(
      script,
      `requestNetwork(["127.0.0.1:${port}"], (net) => {\n  try { println(net.httpGet("http://127.0.0.1:${port}/x")); } catch (e) { println("failed:", (e as Error).message); }\n});\n`,
    );
    const result = await runCli(["run", "--network-permissions", `127.0.0.1:${port}`, script], { cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe(
      `failed: http://127.0.0.1:${port}: the server closed the connection without answering (the request was sent; not a byte of an answer came). ` +
        `The port may serve TLS, which closes on a plain HTTP request: if so, use https://127.0.0.1:${port}; else the server refused or failed the request: retry it, or check the port`,
    );
    // The TLS server took the plain request for a failed handshake: no request reached its handler.
    expect(requests).toBe(before);
  });
});

describe("https: the Host header", () => {
  let frontDir: string;
  let front: Server;
  let frontPort = 0;
  const servedAs: string[] = [];

  beforeAll(async () => {
    frontDir = mkdtempSync(path.join(tmpdir(), "tacit-https-front-"));
    // A trusted certificate for a name the operator never permitted, served at a permitted
    // address: a CDN's shared front serves many sites at one address.
    ({ server: front, port: frontPort } = await startTlsServer(frontDir, "DNS:fronted.test", (request, response) => {
      servedAs.push(`${String((request.socket as { servername?: unknown }).servername)} ${request.headers.host}`);
      response.end("fronted");
    }));
  });

  afterAll(() => {
    front.close();
    rmSync(frontDir, { recursive: true, force: true });
  });

  it("is refused: it would pick the TLS server name and certificate of a site --network-permissions does not name", async () => {
    const script = path.join(frontDir, "front.ts");
    writeFileSync(
      script,
      `requestNetwork(["127.0.0.1:${frontPort}"], (net) => {
  for (const headers of [{ Host: "fronted.test" }, { HOST: "fronted.test:443" }] as Record<string, string>[]) {
    try { println(net.httpGet("https://127.0.0.1:${frontPort}/", { headers })); } catch (e) { println("refused:", (e as Error).message); }
  }
  try { println(net.httpGet("http://127.0.0.1:${frontPort}/", { secretHeaders: { host: classify("fronted.test") } })); } catch (e) { println("refused:", (e as Error).message); }
});
`,
    );
    const result = await runCli(["run", "--network-permissions", `127.0.0.1:${frontPort}`, script], {
      cwd: frontDir,
      env: { NODE_EXTRA_CA_CERTS: path.join(frontDir, "cert.pem") },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).not.toContain("fronted\n");
    expect(result.stdout.match(/^refused: .*Host header is set by tacit from the URL/gim)).toHaveLength(3);
    expect(servedAs).toEqual([]);
  });

  it("a certificate for another name is refused with NODE_TLS_REJECT_UNAUTHORIZED=0 in tacit's environment too", async () => {
    const script = path.join(frontDir, "other-name.ts");
    writeFileSync(
      script,
      `requestNetwork(["127.0.0.1:${frontPort}"], (net) => {\n  try { println(net.httpGet("https://127.0.0.1:${frontPort}/", { secretHeaders: { authorization: classify("Bearer tls-canary-7f3a9c") } })); } catch (e) { println("refused:", (e as Error).message); }\n});\n`,
    );
    const result = await runCli(["run", "--network-permissions", `127.0.0.1:${frontPort}`, script], {
      cwd: frontDir,
      env: { NODE_EXTRA_CA_CERTS: path.join(frontDir, "cert.pem"), NODE_TLS_REJECT_UNAUTHORIZED: "0" },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^refused: https:\/\/127\.0\.0\.1:\d+: .*IP: 127\.0\.0\.1 is not in the cert's list/m);
    expect(result.stdout).not.toContain("fronted");
    expect(servedAs).toEqual([]);
  });
});

describe("https: a redirect down to plain http", () => {
  let downDir: string;
  let tls: Server;
  let tlsPort = 0;
  let plain: TestServer;

  beforeAll(async () => {
    downDir = mkdtempSync(path.join(tmpdir(), "tacit-https-down-"));
    plain = await startServer();
    ({ server: tls, port: tlsPort } = await startTlsServer(downDir, "IP:127.0.0.1", (_request, response) => {
      response.writeHead(307, { location: `http://127.0.0.1:${plain.port}/landing` });
      response.end();
    }));
  });

  afterAll(async () => {
    tls.close();
    await plain.close();
    rmSync(downDir, { recursive: true, force: true });
  });

  it("is followed without the secret headers: the same host over http is another origin, readable on the way", async () => {
    const script = path.join(downDir, "down.ts");
    writeFileSync(
      script,
      `requestNetwork(["127.0.0.1:*"], (net) => {\n  const echo = JSON.parse(net.httpGet("https://127.0.0.1:${tlsPort}/", { secretHeaders: { authorization: classify("Bearer downgrade-canary-0c41d7") } }));\n  println(echo.url, echo.headers.authorization ?? "no authorization");\n});\n`,
    );
    const result = await runCli(["run", "--network-permissions", "127.0.0.1:*", script], { cwd: downDir, env: { NODE_EXTRA_CA_CERTS: path.join(downDir, "cert.pem") } });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe("/landing no authorization\n");
    expect(plain.received.map((request) => [request.url, request.headers.authorization])).toEqual([["/landing", undefined]]);
  });
});
