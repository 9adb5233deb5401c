// A self-signed certificate for 127.0.0.1 that nothing trusts: the https server of the chat tests
// that stands in for whoever answers for a model's address.

import { execFileSync } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import path from "node:path";

/** Makes key.pem and cert.pem in `dir` (openssl) and returns them, with where the certificate is (for NODE_EXTRA_CA_CERTS). */
export function selfSignedCertificate(dir: string): { key: Buffer; cert: Buffer; certFile: string } {
  const keyFile = path.join(dir, "key.pem");
  const certFile = path.join(dir, "cert.pem");
  execFileSync("openssl", [
    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", keyFile, "-out", certFile,
  ], { stdio: "ignore" });
  return { key: readFileSync(keyFile), cert: readFileSync(certFile), certFile };
}

/**
 * A model server over https on 127.0.0.1 with a certificate nothing trusts (made in `dir`): it
 * answers every chat with "answered" and records each request's authorization header and body, one
 * entry per request, in `received`. `baseUrl` is its OpenAI-compatible base URL.
 */
export async function untrustedModelServer(dir: string): Promise<{ server: Server; baseUrl: string; received: string[] }> {
  const received: string[] = [];
  const server = createServer(selfSignedCertificate(dir), (request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    request.on("end", () => {
      received.push(`${request.headers.authorization ?? ""} ${body}`);
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ choices: [{ message: { content: "answered" } }] }));
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { server, baseUrl: `https://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, received };
}
