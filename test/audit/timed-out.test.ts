// An action that ran out of time was logged by its reply's digest alone: a command killed at its
// timeoutMs (exit code 124) and an HTTP request the server never answered looked, in the log,
// like any other result, and which limit ended them was not there. Their action-result events now
// carry the limit's name (timedOut: "command-timeout", "http-timeout", "chat-timeout", or
// "evaluation-time-limit" for an action under way when the evaluation's own limit ended it) and length
// (timeLimitMs), a fixed vocabulary and a number, never text of the script's or the host's; the
// log verifies and `tacit audit show` names them. Through the real CLI, a real command, a real
// HTTP server on 127.0.0.1 that never answers.

import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers.js";
import { startServer, type TestServer } from "../net/fixtures.js";
import { auditHome, type Line, readLines, verifyJson, workAndLog } from "./fixtures.js";

/** Text the script puts in the command's words and the URL: it must reach no action-result event. */
const CANARY = "canary-4b1d9e";
const LIMIT_MS = 400;

const SCRIPT = (origin: string) => `
requestExecPermission(["sleep"], (proc) => {
  const ran = proc.exec("sleep", ["30"], { timeoutMs: ${LIMIT_MS}, input: "${CANARY}" });
  println("command exit", ran.exitCode);
});
requestNetwork(["127.0.0.1:*"], (net) => {
  try { net.httpGet("${origin}/${CANARY}"); } catch (error) { println("request failed:", (error as Error).message.includes("${LIMIT_MS} ms")); }
});
requestExecPermission(["sleep"], (proc) => println("quick exit", proc.exec("sleep", ["0"]).exitCode));
`;

describe("an action that ran out of time: the log says which limit", () => {
  let ctx: ReturnType<typeof auditHome>;
  let server: TestServer;
  let log: string;
  let lines: Line[];
  let stdout: string;

  beforeAll(async () => {
    ctx = auditHome();
    // Never answers: the request runs out of the network timeout.
    server = await startServer(() => undefined);
    const layout = workAndLog(ctx.dir);
    log = layout.log;
    writeFileSync(path.join(layout.work, "script.ts"), SCRIPT(server.origin));
    const config = path.join(ctx.dir, "tacit.json");
    writeFileSync(config, JSON.stringify({ libraryConfig: { commandPermissions: ["sleep"], networkPermissions: [`127.0.0.1:${server.port}`], networkTimeoutMs: LIMIT_MS } }));
    const run = await runCli(["run", "--no-check", "--config", config, "--audit-log", log, "script.ts"], { cwd: layout.work, env: ctx.env });
    expect(run.code, run.stderr).toBe(0);
    stdout = run.stdout;
    lines = readLines(log);
  }, 60_000);
  afterAll(async () => {
    await server.close();
    ctx.cleanup();
  });

  const results = () => lines.map((line) => line.event).filter((event) => event.type === "action-result") as Array<Record<string, unknown>>;
  const requested = (kind: string) => lines.map((line) => line.event).filter((event) => event.type === "action-requested" && event.kind === kind) as Array<Record<string, unknown>>;
  const resultOf = (request: Record<string, unknown>) => results().find((event) => event.evaluation === request.evaluation && event.action === request.action)!;

  it("the script saw both run out of time", () => {
    expect(stdout).toBe("command exit 124\nrequest failed: true\nquick exit 0\n");
  });

  it("a command killed at its timeoutMs: its result says command-timeout and the limit", () => {
    const [slow, quick] = requested("Exec");
    expect(resultOf(slow!)).toMatchObject({ ok: true, timedOut: "command-timeout", timeLimitMs: LIMIT_MS });
    // A command that ended on its own says nothing of time.
    expect(resultOf(quick!)).not.toHaveProperty("timedOut");
    expect(resultOf(quick!)).not.toHaveProperty("timeLimitMs");
  });

  it("an HTTP request with no answer: its result says http-timeout and the limit", () => {
    const [request] = requested("HttpRequest");
    expect(resultOf(request!)).toMatchObject({ ok: false, timedOut: "http-timeout", timeLimitMs: LIMIT_MS });
  });

  it("the fields are a name from the fixed vocabulary and a number; no result holds the script's text", () => {
    for (const event of results()) {
      if (event.timedOut !== undefined) expect(["command-timeout", "http-timeout", "chat-timeout", "evaluation-time-limit"]).toContain(event.timedOut);
      if (event.timeLimitMs !== undefined) expect(typeof event.timeLimitMs).toBe("number");
      expect(JSON.stringify(event)).not.toContain(CANARY);
    }
  });

  it("the log verifies, and tacit audit show names the limits", async () => {
    const { result, report } = await verifyJson(log, ctx.env);
    expect(result.code, result.stdout).toBe(0);
    expect(report.warnings).toEqual([]);
    const shown = await runCli(["audit", "show", log], { env: ctx.env });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(`  timed out: command-timeout of ${LIMIT_MS} ms`);
    expect(shown.stdout).toContain(`  timed out: http-timeout of ${LIMIT_MS} ms`);
    const json = await runCli(["audit", "show", log, "--json"], { env: ctx.env });
    expect(json.stdout).toContain(`"timedOut":"http-timeout"`);
  });
});

describe("an action under way when the evaluation's own time limit ends it", () => {
  it("is logged as having run out of it (evaluation-time-limit, executionTimeoutMs); the log verifies", async () => {
    const ctx = auditHome();
    try {
      const { work, log } = workAndLog(ctx.dir);
      writeFileSync(path.join(work, "script.ts"), 'requestExecPermission(["sleep"], (proc) => println(proc.exec("sleep", ["30"]).exitCode));\n');
      const run = await runCli(["run", "--no-check", "--command-permissions", "sleep", "--exec-timeout-ms", "1500", "--audit-log", log, "script.ts"], { cwd: work, env: ctx.env });
      expect(run.code, run.stderr).toBe(124);
      const events = readLines(log).map((line) => line.event as Record<string, unknown>);
      const exec = events.find((event) => event.type === "action-requested" && event.kind === "Exec")!;
      const result = events.find((event) => event.type === "action-result" && event.action === exec.action)!;
      expect(result).toMatchObject({ timedOut: "evaluation-time-limit", timeLimitMs: 1500 });
      // The actions before it ended in time, and say nothing of it.
      for (const event of events) if (event.type === "action-result" && event.action !== exec.action) expect(event).not.toHaveProperty("timedOut");
      expect(events.find((event) => event.type === "evaluation-ended")).toMatchObject({ outcome: "timeout", exitCode: 124 });
      const { result: verified } = await verifyJson(log, ctx.env);
      expect(verified.code, verified.stdout).toBe(0);
    } finally {
      ctx.cleanup();
    }
  }, 60_000);
});
