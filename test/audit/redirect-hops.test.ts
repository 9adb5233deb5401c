// A request's redirect hops are steps that change the world too: each is sent anew, to a URL the
// server chose (a 307 sends a POST's body again). The decision on the request is logged before its
// first hop. Before, a hop was recorded only in the request's result, once it had been answered,
// so a tacit that crashed after sending one left a log naming the first URL alone; and only the
// first hop checked the log's file, so a log rotated away (or deleted) while the first hop was
// answered had the next hop sent anyway. Now each hop is logged (request-redirected) and the file
// checked before it is sent (the gate's BeforeEffect), and a log found replaced stops it there.

import { existsSync, readFileSync, renameSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { runCli, unchecked } from "../helpers.js";
import { startServer } from "../net/fixtures.js";
import { auditHome, type Line, readLines, verifyJson, workAndLog } from "./fixtures.js";

describe("a request that follows a redirect", () => {
  it("has the hop in the log file before the hop reaches the server, and audit show says where it went", async () => {
    const ctx = auditHome();
    const { work, log } = workAndLog(ctx.dir);
    /** The log as it was in the file when the hop arrived. */
    let atHop: Line[] = [];
    const server = await startServer((request, response) => {
      if (request.url === "/first") {
        response.statusCode = 307;
        response.setHeader("location", "/second?q=1");
      } else {
        atHop = readFileSync(log, "utf8").trimEnd().split("\n").map((line) => JSON.parse(line) as Line);
      }
      response.end("ok");
    });
    try {
      const script = `requestNetwork(["127.0.0.1:${server.port}"], (net) => println(net.httpPost("${server.origin}/first", "the body")));\n`;
      const run = await runCli(unchecked(["run", "--audit-log", log, "--network-permissions", `127.0.0.1:${server.port}`, "-"]), { cwd: work, env: ctx.env, input: script });
      expect(run.code, run.stderr).toBe(0);
      expect(server.received.map((request) => [request.method, request.url, request.body])).toEqual([
        ["POST", "/first", "the body"],
        ["POST", "/second?q=1", "the body"],
      ]);
      const hop = `POST ${server.origin}/second?q=1`;
      expect(atHop.filter((line) => line.event.type === "request-redirected").map((line) => line.event.hop)).toEqual([hop]);
      // As before, the result lists it too.
      const result = readLines(log).find((line) => line.event.type === "action-result" && Array.isArray(line.event.redirects));
      expect(result?.event.redirects).toEqual([hop]);
      const shown = await runCli(["audit", "show", log], { env: ctx.env });
      expect(shown.code).toBe(0);
      expect(shown.stdout).toContain(`redirected to ${JSON.stringify(hop)}`);
    } finally {
      await server.close();
      ctx.cleanup();
    }
  }, 30_000);
});

describe("an audit log rotated away while a request's first hop is answered with a redirect", () => {
  it("keeps the next hop from being sent: the server never gets it, and tacit exits 2 naming the log", async () => {
    const ctx = auditHome();
    const { work, log } = workAndLog(ctx.dir);
    const rotated = `${log}.1`;
    const server = await startServer((request, response) => {
      if (request.url === "/first") {
        // Rotation, as logrotate does it, between the first hop and the second.
        renameSync(log, rotated);
        response.statusCode = 307;
        response.setHeader("location", "/second");
      }
      response.end("ok");
    });
    try {
      const script = `requestNetwork(["127.0.0.1:${server.port}"], (net) => println(net.httpGet("${server.origin}/first")));\nprintln("after");\n`;
      const run = await runCli(unchecked(["run", "--audit-log", log, "--network-permissions", `127.0.0.1:${server.port}`, "-"]), { cwd: work, env: ctx.env, input: script });
      // The hop the log could not hold was not sent.
      expect(server.received.map((request) => request.url)).toEqual(["/first"]);
      expect(run.code).toBe(2);
      expect(run.stdout).not.toContain("after");
      expect(run.stderr).toContain("tacit could not write its audit log (every action is logged before it is carried out), so it ended the script");
      expect(run.stderr).toContain(`the audit log ${log} was replaced while this tacit was writing it: there is no file there any more`);
      expect(existsSync(log)).toBe(false);
      // The file tacit wrote, where it was moved: the request and its decision are on file before its first hop,
      // unsigned (the writer failed closed and signed nothing after), which verify says.
      const lines = readLines(rotated);
      const request = lines.find((line) => line.event.type === "action-requested" && line.event.kind === "HttpRequest");
      expect(request?.event.url).toBe(`${server.origin}/first`);
      expect(lines.some((line) => line.event.type === "decision" && line.event.action === request?.event.action && line.event.decision === "allow")).toBe(true);
      const { result, report } = await verifyJson(rotated, ctx.env);
      expect(result.code).toBe(1);
      expect(report.ok).toBe(false);
    } finally {
      await server.close();
      ctx.cleanup();
    }
  }, 30_000);
});
