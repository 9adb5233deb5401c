// A net rule on a method holds when a request names that method for the server to take instead
// of its own. Rails, Laravel and Symfony take a POST carrying `_method=DELETE` (in the query or
// the body) as a DELETE: judged by the request line alone, an always-ask rule on DELETE to a host
// let a script delete there with a POST, unasked. A body tacit cannot see (a classified one) may
// name it too. (The override headers are refused outright: test/net/header-shapes.test.ts.)

import { expect, it } from "vitest";
import { lit, startServer, unattended, withServer, worlds } from "./fixtures.js";

const world = worlds("tacit-net-rule-method-override-");

it("an always-ask rule on DELETE asks about a POST that names DELETE by _method, in the query, the body or a classified body", () =>
  withServer(async (server) => {
    const w = world();
    const config = w.config([{ action: "net", host: "127.0.0.1", method: "DELETE", tier: "always-ask" }], {
      libraryConfig: { networkPermissions: ["127.0.0.1:*"] },
    });
    const script = w.script(
      `requestNetwork(["127.0.0.1:*"], (net) => {\n` +
        `  const attempts = [\n` +
        `    ["query", () => net.httpPost(${lit(`${server.origin}/query?_method=DELETE`)}, "id=1")],\n` +
        `    ["form", () => net.httpPost(${lit(`${server.origin}/form`)}, "id=1&_method=DELETE", { contentType: "application/x-www-form-urlencoded" })],\n` +
        `    ["json", () => net.httpPost(${lit(`${server.origin}/json`)}, JSON.stringify({ _METHOD: "delete" }), { contentType: "application/json" })],\n` +
        `    ["classified", () => net.httpPostClassified(${lit(`${server.origin}/classified`)}, classify("_method=DELETE"))],\n` +
        `    ["plain", () => net.httpPost(${lit(`${server.origin}/plain`)}, "id=1")],\n` +
        `  ] as const;\n` +
        `  for (const [label, attempt] of attempts) {\n` +
        `    try { attempt(); println("sent", label); } catch (e) { println("refused", label + ":", String(e)); }\n` +
        `  }\n` +
        `});\n`,
    );
    const run = await unattended(w, ["run", "--config", config, script]);
    // The bad thing: a request the server takes as DELETE reached it with no one asked.
    expect(server.received.map((r) => r.url), run.all).toEqual(["/plain"]);
    const refused = (label: string, said: string): string =>
      `refused ${label}: SecurityError: net POST http://127.0.0.1:${server.port} (method override: ${said}): refused: the policy requires a person's approval (always-ask)`;
    expect(run.stdout, run.all).toContain(refused("query", "DELETE"));
    expect(run.stdout, run.all).toContain(refused("form", "maybe, in the body"));
    expect(run.stdout, run.all).toContain(refused("json", "maybe, in the body"));
    expect(run.stdout, run.all).toContain(refused("classified", "maybe, in the classified body"));
    expect(run.stdout, run.all).toContain("sent plain");
    expect(run.code, run.all).toBe(0);
  }));

it("a redirect that keeps a POST's body (307) is not followed to a host whose rule on DELETE the body may name; a GET's is", async () => {
  const w = world();
  const asked = await startServer();
  const redirector = await startServer((request, response) => {
    response.statusCode = request.method === "POST" ? 307 : 302;
    response.setHeader("location", `${asked.origin}/${request.method === "POST" ? "deleted" : "read"}`);
    response.end();
  });
  try {
    const config = w.config([{ action: "net", host: `127.0.0.1:${asked.port}`, method: "DELETE", tier: "always-ask" }], {
      libraryConfig: { networkPermissions: ["127.0.0.1:*"] },
    });
    const script = w.script(
      `requestNetwork(["127.0.0.1:*"], (net) => {\n` +
        `  try { net.httpPost(${lit(`${redirector.origin}/hop`)}, "_method=DELETE"); println("posted"); } catch (e) { println("refused:", String(e)); }\n` +
        `  println("got", JSON.parse(net.httpGet(${lit(`${redirector.origin}/hop`)})).url);\n` +
        `});\n`,
    );
    const run = await unattended(w, ["run", "--config", config, script]);
    // The bad thing: the body naming DELETE reached the host the rule asks about, carried by the redirect.
    expect(asked.received.filter((r) => r.method === "POST"), run.all).toEqual([]);
    expect(run.stdout, run.all).toContain(
      `refused: SecurityError: ${redirector.origin} redirected the request to ${asked.origin}/deleted, which the approval policy puts a person in front of`,
    );
    expect(run.stdout, run.all).toContain("got /read");
    expect(run.code, run.all).toBe(0);
  } finally {
    await Promise.all([asked.close(), redirector.close()]);
  }
});

it("an always-ask rule on DELETE asks about a POST that names _method in another spelling a framework decodes to it", () =>
  withServer(async (server) => {
    // Each reaches a framework as `_method`: Rack and PHP percent-decode a form's names (%5F is
    // "_"), JSON decodes \u005f, and PHP turns a name's ".", " " and "[" into "_" (`.method=DELETE`
    // is $_POST["_method"], which Symfony and Laravel read), in the body and the query alike.
    const w = world();
    const config = w.config([{ action: "net", host: "127.0.0.1", method: "DELETE", tier: "always-ask" }], {
      libraryConfig: { networkPermissions: ["127.0.0.1:*"] },
    });
    const form = { contentType: "application/x-www-form-urlencoded" };
    const attempts: [string, string, string][] = [
      ["percent", "/percent", "id=1&%5Fmethod=DELETE"],
      ["percent-lower", "/percent-lower", "id=1&%5fMETHOD=DELETE"],
      ["json-escape", "/json-escape", '{"\\u005fmethod":"DELETE"}'],
      ["php-dot", "/php-dot", "id=1&.method=DELETE"],
      ["php-dot-encoded", "/php-dot-encoded", "id=1&%2Emethod=DELETE"],
      ["php-space", "/php-space", "id=1&+.method=DELETE"],
      ["php-bracket", "/php-bracket", "id=1&[method=DELETE"],
      ["query-php-dot", "/query-php-dot?.method=DELETE", "id=1"],
      ["query-php-bracket", "/query-php-bracket?%5Bmethod=DELETE", "id=1"],
    ];
    const script = w.script(
      `requestNetwork(["127.0.0.1:*"], (net) => {\n` +
        `  const attempts: [string, string, string][] = ${JSON.stringify(attempts.map(([label, where, body]) => [label, `${server.origin}${where}`, body]))};\n` +
        `  for (const [label, url, body] of attempts) {\n` +
        `    try { net.httpPost(url, body, ${JSON.stringify(form)}); println("sent", label); } catch (e) { println("refused", label + ":", String(e)); }\n` +
        `  }\n` +
        `  net.httpPost(${lit(`${server.origin}/plain`)}, "id=1&payment method=card");\n` +
        `  println("sent plain");\n` +
        `});\n`,
    );
    const run = await unattended(w, ["run", "--config", config, script]);
    // The bad thing: a request a server takes as DELETE reached it with no one asked.
    expect(server.received.map((r) => r.url), run.all).toEqual(["/plain"]);
    for (const [label] of attempts) {
      expect(run.stdout, run.all).toMatch(new RegExp(`refused ${label}: SecurityError: net POST http://127\\.0\\.0\\.1:${server.port} \\(method override: [^)]*\\): refused: the policy requires a person's approval \\(always-ask\\)`));
    }
    expect(run.stdout, run.all).toContain("sent plain");
    expect(run.code, run.all).toBe(0);
  }));
