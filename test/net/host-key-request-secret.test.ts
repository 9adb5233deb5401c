// The operator's LLM key in an answer, beside a secret the script's own request carried. The
// request's secrets were masked first and the key after, in the text that left: a mask of the
// request's secret that took in a piece of the key broke every form of it, and the key's masking
// found nothing. A script that sent the key's public lead ("sk-test/", as "sk-proj-" is anyone's)
// as a secret header read the rest of the key from any answer that held it, as it is or escaped,
// and from a refused redirect's message. Both are now found in the text as the server sent it and
// masked together (HostSecrets.inServerTextWith). Through the real CLI and a loopback server;
// asserted: no piece of the key of 8 characters reaches the script, and a secret that guesses the
// key's last characters and the text after it is told nothing: the answer reads the same whether
// the guess is right or wrong.

import { randomBytes, randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import type http from "node:http";
import path from "node:path";
import { afterAll, afterEach, expect, it } from "vitest";
import { runCli, tempDirWithHome, unchecked } from "../helpers.js";
import { startServer, type Received, type TestServer } from "./fixtures.js";

const { dir, env, cleanup } = tempDirWithHome("tacit-host-key-request-secret-");
afterAll(cleanup);

const random = randomBytes(24).toString("base64").replace(/[+/=]/g, "x");
const apiKey = `sk-test/${random}+k==`;
const hex2 = (c: string): string => c.charCodeAt(0).toString(16).padStart(2, "0");

/** Answers holding the key: as it is, in ASP.NET's JSON, in Twig's html_attr; and a redirect to a URL holding it. */
const answers: Record<string, string> = {
  plain: `KEY=${apiKey};END`,
  "dotnet-json": `{"key":"${apiKey.replace(/\+/g, "\\u002B")}"}`,
  "html-attr": `<input value="${apiKey.replace(/[^A-Za-z0-9]/g, (c) => `&#x${hex2(c).toUpperCase()};`)}">`,
};

let server: TestServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function run(script: string): Promise<{ code: number; stdout: string; stderr: string }> {
  server = await startServer((request: Received, response: http.ServerResponse) => {
    const name = new URL(request.url, "http://x").pathname.slice(1);
    if (name === "redirect") {
      response.writeHead(302, { location: `http://elsewhere.example/${apiKey}` });
      response.end();
      return;
    }
    const echoed = request.headers["x-echo"];
    response.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
    response.end(`${answers[name] ?? ""}${typeof echoed === "string" ? ` echo=${echoed}` : ""}`);
  });
  const at = `127.0.0.1:${server.port}`;
  const file = path.join(dir, `${randomUUID()}.ts`);
  writeFileSync(file, `const origin = "${server.origin}";\nrequestNetwork(["${at}"], (net) => {\n${script}\n});\n`);
  const r = await runCli(unchecked(["run", "--network-permissions", at, "--llm-base-url", "http://127.0.0.1:9", "--llm-api-key", apiKey, "--llm-model", "m", file]), { cwd: dir, env });
  return { code: r.code ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** A text with the escapes the answers above hold undone. */
function decoded(text: string): string {
  return text
    .replace(/&#x([0-9a-f]+);/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    .replace(/\\u([0-9a-f]{4})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}

function expectNoPieceOfTheKey(stdout: string): void {
  for (const seen of [stdout, decoded(stdout)]) {
    for (let at = 0; at + 8 <= random.length; at++) expect(seen, `holds ${random.slice(at, at + 8)} of the key`).not.toContain(random.slice(at, at + 8));
  }
}

it("an answer holding the key, fetched with a secret header that is the key's public lead, shows the script no piece of it", async () => {
  const names = Object.keys(answers);
  const { code, stdout, stderr } = await run(
    `  for (const name of ${JSON.stringify(names)}) for (const lead of ["sk-test/", "KEY=sk-t", "y value=\\"&#x73"]) {\n` +
      `    println(name, JSON.stringify(net.httpGet(origin + "/" + name, { secretHeaders: { "x-lead": classify(lead) } })));\n` +
      `  }`,
  );
  expect(code, stderr).toBe(0);
  // Each answer was asked for three times and printed, masked where the key was.
  expect(server!.received.length).toBe(names.length * 3);
  for (const name of names) expect(stdout.split("\n").filter((line) => line.startsWith(`${name} "`) && line.includes("[redacted]")).length, stdout).toBe(3);
  expectNoPieceOfTheKey(stdout);
});

it("a refused redirect to a URL holding the key, with the key's public lead as a secret header, names no piece of it", async () => {
  const { code, stdout, stderr } = await run(
    `  try { net.httpGet(origin + "/redirect", { secretHeaders: { "x-lead": classify("sk-test/") } }); println("followed"); }\n` +
      `  catch (e) { println("refused", String(e)); }`,
  );
  expect(code, stderr).toBe(0);
  expect(stdout).toMatch(/^refused .*redirected to http:\/\/elsewhere\.example\/\[redacted\]/m);
  expectNoPieceOfTheKey(stdout);
});

it("a secret that guesses the key's last characters and the text after it reads the same answer whether the guess is right or wrong; an echoed secret beside the key is masked", async () => {
  const right = `${apiKey.slice(-3)};EN`;
  const wrong = `${apiKey[apiKey.length - 3] === "A" ? "B" : "A"}${apiKey.slice(-2)};EN`;
  const { code, stdout, stderr } = await run(
    `  for (const [label, guess] of ${JSON.stringify([["right", right], ["wrong", wrong]])}) println(label, JSON.stringify(net.httpGet(origin + "/plain", { secretHeaders: { "x-guess": classify(guess) } })));\n` +
      `  println("echo", JSON.stringify(net.httpGet(origin + "/plain", { secretHeaders: { "x-echo": classify("pw-1234567") } })));`,
  );
  expect(code, stderr).toBe(0);
  const printed = (label: string): string => JSON.parse(stdout.split("\n").find((line) => line.startsWith(`${label} `))!.slice(label.length + 1)) as string;
  expect(printed("right")).toBe("KEY=[redacted];END");
  expect(printed("wrong")).toBe("KEY=[redacted];END");
  expect(printed("echo")).toBe("KEY=[redacted];END echo=[redacted]");
  expectNoPieceOfTheKey(stdout);
});
