// A red team cancelled a `tacit serve` call (the MCP client's AbortSignal) while its POST waited
// for the answer of a server on 127.0.0.1 that held it: the log said "decision allow" and then
// "action-result ok: false", although the server had the POST. A reader could not tell whether a
// POST or a DELETE went out. Each HTTP request's action-result now says how far it got
// (requestProgress, a fixed vocabulary, never text of the script's or the server's): "sent" for the
// cancelled POST the server received, "not-sent" for one refused before sending (its server got no
// connection), "answered" for one answered. Through the real MCP SDK client, a real tacit serve and
// real HTTP servers; the log verifies and `tacit audit show` says it. A log of an earlier tacit,
// without the field, still verifies and shows.

import { writeFileSync } from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectServe, fileOnce, runCli } from "../helpers.js";
import { startServer, type TestServer } from "../net/fixtures.js";
import { auditHome, cleanLog, declinedInServe, expectProgressField, expectVerifiedAndShown, type Line, readLines, verifyJson, workAndLog } from "./fixtures.js";

/** Text the script sends (in a URL and a body): it must reach no action-result event. */
const CANARY = "canary-7e52c1";
const PROGRESS = ["not-sent", "connected", "sent", "answered"];

describe("an HTTP request's action-result says how far it got", () => {
  let ctx: ReturnType<typeof auditHome>;
  /** Holds /hold's answer for ever (tells `arrived` once the whole POST is in); answers anything else. */
  let server: TestServer;
  /** Not among the permitted hosts: it must get nothing. */
  let bystander: TestServer;
  let log: string;
  let lines: Line[];
  let cancelledCall: unknown;
  let answered: string;

  beforeAll(async () => {
    ctx = auditHome();
    let arrive: () => void = () => undefined;
    const arrived = new Promise<void>((resolve) => (arrive = resolve));
    server = await startServer((request, response) => {
      if (request.url.startsWith("/hold")) return arrive();
      response.end("done");
    });
    bystander = await startServer();
    const layout = workAndLog(ctx.dir);
    log = layout.log;
    const config = path.join(ctx.dir, "tacit.json");
    writeFileSync(config, JSON.stringify({ libraryConfig: { networkPermissions: [`127.0.0.1:${server.port}`] } }));
    const client: Client = await connectServe(["--no-check", "--config", config, "--audit-log", log], layout.work, { env: ctx.env });
    try {
      const scope = `requestNetwork(["127.0.0.1:${server.port}"], (net) =>`;
      // Cancelled once the server has the whole POST, while it holds the answer.
      const abort = new AbortController();
      const held = client.callTool(
        { name: "execute_typescript", arguments: { code: `${scope} net.httpPost("${server.origin}/hold/${CANARY}", "${CANARY} body"));` } },
        undefined,
        { signal: abort.signal },
      );
      await arrived;
      abort.abort("the test cancels it");
      cancelledCall = await held.then(() => "answered", () => "cancelled");
      await fileOnce(log, (text) => text.includes('"requestProgress"'));
      // Refused by the scope before anything was sent: a host not among those it names.
      const refused = await client.callTool({
        name: "execute_typescript",
        arguments: { code: `${scope} { try { net.httpPost("${bystander.origin}/${CANARY}", "x"); } catch (e) { println("refused"); } });` },
      });
      expect(JSON.stringify(refused.content)).toContain("refused");
      const ok = await client.callTool({ name: "execute_typescript", arguments: { code: `${scope} println(net.httpPost("${server.origin}/answer", "${CANARY}")));` } });
      answered = JSON.stringify(ok.content);
    } finally {
      await client.close();
    }
    lines = readLines(log);
  }, 90_000);
  afterAll(async () => {
    await server.close();
    await bystander.close();
    ctx.cleanup();
  });

  const events = () => lines.map((line) => line.event as Record<string, unknown>);
  /** The action-result of the request whose URL starts with `url`. */
  const resultFor = (url: string): Record<string, unknown> => {
    const request = events().find((event) => event.type === "action-requested" && String(event.url).startsWith(url));
    expect(request, `no request of ${url} in the log`).toBeDefined();
    const result = events().find((event) => event.type === "action-result" && event.evaluation === request!.evaluation && event.action === request!.action);
    expect(result, `no result of ${url} in the log`).toBeDefined();
    return result!;
  };

  it("the cancelled POST reached its server, and its result says it was sent (no answer), not merely failed", () => {
    expect(cancelledCall).toBe("cancelled");
    expect(server.received.some((request) => request.method === "POST" && request.body === `${CANARY} body`)).toBe(true);
    expect(resultFor(`${server.origin}/hold/`)).toMatchObject({ ok: false, requestProgress: "sent" });
  });

  it("a request refused before sending says not-sent, and its server got no connection", () => {
    expect(bystander.connections).toBe(0);
    expect(bystander.received).toEqual([]);
    expect(resultFor(`${bystander.origin}/`)).toMatchObject({ ok: false, requestProgress: "not-sent" });
  });

  it("an answered request says answered", () => {
    expect(answered).toContain("done");
    expect(resultFor(`${server.origin}/answer`)).toMatchObject({ ok: true, requestProgress: "answered" });
  });

  it("the field is a name from the fixed vocabulary, on HTTP requests' results only; no result holds the script's text", () => {
    expect(events().filter((event) => event.type === "action-result").length).toBeGreaterThanOrEqual(3);
    expectProgressField(events(), "requestProgress", PROGRESS, "HttpRequest", CANARY);
  });

  it("the log verifies, and tacit audit show says how far each request got", async () => {
    await expectVerifiedAndShown(log, ctx.env, ["  failed  request sent  ", "  failed  request not-sent  ", "  ok  request answered  "]);
  });
});

describe("an HTTP request a person refused", () => {
  it("was never sent: its server got no connection, and its result says not-sent; the log verifies", async () => {
    const ctx = auditHome();
    const server = await startServer();
    try {
      const { work, log } = workAndLog(ctx.dir);
      const declined = await declinedInServe(
        ctx,
        { work, log },
        { libraryConfig: { networkPermissions: [`127.0.0.1:${server.port}`] }, policy: { rules: [{ action: "net", tier: "always-ask" }] } },
        `requestNetwork(["127.0.0.1:${server.port}"], (net) => { try { net.httpPost("${server.origin}/${CANARY}", "x"); } catch (e) { println("refused"); } });`,
        "HttpRequest",
      );
      expect(declined.said).toContain("refused");
      expect(declined.asked).toBe(1);
      expect(server.connections).toBe(0);
      expect(declined.decision).toMatchObject({ decision: "asked", answer: "no" });
      expect(declined.result).toMatchObject({ ok: false, requestProgress: "not-sent" });
      const { result } = await verifyJson(log, ctx.env);
      expect(result.code, result.stdout).toBe(0);
    } finally {
      await server.close();
      ctx.cleanup();
    }
  }, 60_000);
});

describe("a log of an earlier tacit, whose results have no requestProgress or commandProgress", () => {
  it("verifies, and shows its HTTP request's and command's results as before, with no progress", async () => {
    const { ctx, original, lines } = cleanLog();
    try {
      // The fixture's log records a request (its run fetched a URL), written as an earlier tacit wrote results.
      expect(lines.some((line) => line.event.type === "action-requested" && line.event.kind === "HttpRequest")).toBe(true);
      expect(lines.some((line) => line.event.type === "action-requested" && line.event.kind === "Exec")).toBe(true);
      expect(lines.some((line) => "requestProgress" in line.event || "commandProgress" in line.event)).toBe(false);
      const { result } = await verifyJson(original, ctx.env);
      expect(result.code, result.stdout).toBe(0);
      const shown = await runCli(["audit", "show", original], { env: ctx.env });
      expect(shown.code, shown.stderr).toBe(0);
      const resultLines = shown.stdout.split("\n").filter((line) => line.includes("action-result"));
      expect(resultLines.length).toBeGreaterThan(0);
      for (const line of resultLines) {
        expect(line).not.toContain("  request ");
        expect(line).not.toContain("  command ");
      }
    } finally {
      ctx.cleanup();
    }
  }, 60_000);
});
