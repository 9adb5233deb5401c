// A classified canary must not leave through any effect the agent controls: URLs, plain
// headers, request bodies, command arguments, a child's stdin, exit codes. In the sandbox a
// Classified value is only a handle, so every route can carry at most "Classified(***)";
// this checks it from the outside — what the server received, what the child recorded.

import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers.js";

let server: Server;
let port = 0;
const received: string[] = [];
let dir: string;
const canary = `CANARY-${randomUUID()}`;

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      received.push(JSON.stringify({ url: request.url, headers: request.headers, body }));
      response.end("ok");
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  port = (server.address() as AddressInfo).port;
  dir = mkdtempSync(path.join(tmpdir(), "tacit-routes-"));
  writeFileSync(path.join(dir, ".env"), `${canary}\n`);
  // A child that records everything it was given: arguments and stdin.
  writeFileSync(path.join(dir, "record.sh"), 'printf "%s\\n" "$@" >> recorded.txt\ncat >> recorded.txt\nexit 3\n');
});

afterAll(() => {
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("a classified canary reaches no effect", () => {
  it("URLs, plain headers, bodies, command arguments, a child's stdin and exit codes carry only the mask", async () => {
    const script = path.join(dir, "routes.ts");
    writeFileSync(
      script,
      `requestFileSystem(".", (fs) => {
  const secret = fs.readClassified(".env");
  const asText = String(secret) + \`\${secret}\` + JSON.stringify({ secret }) + (secret as unknown as string);
  requestNetwork(["127.0.0.1:${port}"], (net) => {
    net.httpGet("http://127.0.0.1:${port}/q?s=" + encodeURIComponent(asText));
    net.httpPost("http://127.0.0.1:${port}/body", asText, { headers: { "x-plain": asText } });
    net.httpRequest("PUT", "http://127.0.0.1:${port}/put", { body: JSON.stringify([secret]) });
  });
  requestExecPermission(["bash"], (proc) => {
    const r = proc.exec("bash", ["record.sh", asText, String(secret)], { input: asText + "\\n" });
    println("exit", r.exitCode);
  });
  println(asText);
});
`,
    );
    const r = await runCli(["run", "--no-check", "--network-permissions", `127.0.0.1:${port}`, "--command-permissions", "bash", script], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("exit 3");
    expect(r.stdout).toContain("Classified(***)");
    expect(received.length).toBe(3);
    const everything = [r.stdout, r.stderr, received.join("\n"), readFileSync(path.join(dir, "recorded.txt"), "utf8")].join("\n");
    expect(everything).not.toContain(canary);
    expect(received.join("\n")).toContain("Classified(***)");
  });
});
