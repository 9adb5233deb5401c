// Requests the library would never send, made by agent code through the real CLI (validator and
// type checker on): the stub frames its requests with the global JSON.stringify, which a script can
// replace. What the host accepts must not depend on the stub having written the frame. (The replies
// are parsed with a JSON.parse the channel took as it loaded, so the script's own JSON.parse no longer
// sees them; the assertions are on what the host sent and answered.)

import path from "node:path";
import { describe, expect, it } from "vitest";
import { expectNoLeak } from "../files/fixtures.js";
import { isEnvFile, lit, makeCanary, permit, perTestResources, tacit, writeTree } from "./fixtures.js";

const resources = perTestResources("tacit-net-forged-");

describe("a forged request", () => {
  it("a classified body renamed to a plain request (HttpRequest) ends the evaluation: its answer is never shown, nothing is sent", async () => {
    // An ordinary form endpoint (httpbin's /post, any framework's form parser): it answers with
    // the form it parsed, and parsing turns each "+" into a space. Redaction looks for the forms
    // the body was sent in, so the key came back whole, space-separated, past it, and a script
    // that put the dashes back printed it.
    const a = await resources.server((request, response) => {
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ form: Object.fromEntries(new URLSearchParams(request.body)) }));
    });
    const base = resources.dir();
    const root = path.join(base, "work");
    const canary = makeCanary();
    writeTree(root, { ".env": `API_KEY=${canary.replaceAll("-", "+")}\n` });
    const result = await tacit(
      root,
      `
const originalStringify = JSON.stringify;
const originalParse = JSON.parse;
const replies: string[] = [];
// The stub asks for httpPostClassified as HttpRequestClassified (a classified answer); renamed,
// the same request asks for a plain answer.
JSON.stringify = ((value: any, ...rest: any[]) => {
  if (value?.action?.kind === "HttpRequestClassified") value.action.kind = "HttpRequest";
  return originalStringify(value, ...rest);
}) as typeof JSON.stringify;
JSON.parse = ((text: string, ...rest: any[]) => {
  replies.push(text);
  return originalParse(text, ...rest);
}) as typeof JSON.parse;
const env = requestFileSystem(".", (fs) => fs.readClassified(".env"));
try {
  requestNetwork([${lit(`127.0.0.1:${a.port}`)}], (net) => {
    net.httpPostClassified(${lit(`${a.origin}/post`)}, env, { contentType: "application/x-www-form-urlencoded" });
  });
} finally {
  JSON.stringify = originalStringify;
  JSON.parse = originalParse;
}
for (const reply of replies) {
  const body = originalParse(reply)?.value?.body;
  if (typeof body === "string") println("recovered: " + String(originalParse(body).form?.API_KEY).replaceAll(" ", "-"));
}
`,
      permit(`127.0.0.1:${a.port}`),
    );
    // Nothing reached the server: the frame is refused before anything acts on it.
    expect(a.received).toEqual([]);
    expect(result.code, result.stdout + result.stderr).not.toBe(0);
    expect(result.stderr).toMatch(/protocol/);
    expect(result.stdout).not.toContain("recovered:");
    expectNoLeak(canary, result, root, isEnvFile);
    expect(result.stdout + result.stderr).not.toContain(canary.slice("canary-".length, "canary-".length + 8));
  });
});
