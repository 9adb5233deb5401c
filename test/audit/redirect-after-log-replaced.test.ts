// A request's redirect hops are steps that change the world too: each is sent anew, to a URL the
// server chose. The decision on the request is logged before its first hop; before, only that
// first call checked the log's file, so a log rotated away (or deleted) while the first hop was
// answered had the next hop sent anyway, with its decision in a file no longer at the log's path
// and nothing at that path saying it went out. Now the file is checked before every hop, and a
// log found replaced stops the request there (AuditLog.flush, via the gate's BeforeEffect).

import { existsSync, renameSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { runCli, unchecked } from "../helpers.js";
import { startServer } from "../net/fixtures.js";
import { auditHome, readLines, verifyJson, workAndLog } from "./fixtures.js";

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
