// `tacit run` stopped by SIGTERM while its script ran an allowed command: the command was killed,
// and its action-result said "ok" (its reply, exit code 137, digested), as a command that ran to
// its end would. Each command's action-result now says how far it got (commandProgress, a fixed
// vocabulary): "killed" for the one tacit killed (at the signal, or at its own timeoutMs),
// "exited" for one that ended by itself, "not-started" for one refused before it ran (the file it
// would have removed is still there). Through the real CLI, a real Deno and real commands; the log
// verifies and `tacit audit show` says it.

import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childEnv, tacitBin } from "../helpers.js";
import { commandRunsBelow } from "./ended-steps.js";
import { auditHome, declinedInServe, expectProgressField, expectVerifiedAndShown, type Line, readLines, verifyJson, workAndLog } from "./fixtures.js";

const CANARY = "canary-c0d5e1";

const SCRIPT = `
requestExecPermission(["sleep"], (proc) => {
  try { proc.exec("rm", ["victim.txt"]); } catch (error) { println("rm refused"); }
  println("quick", proc.exec("sleep", ["0"], { input: "${CANARY}" }).exitCode);
  println("own limit", proc.exec("sleep", ["30"], { timeoutMs: 300 }).exitCode);
  proc.exec("sleep", ["87"]);
});
`;

describe("a command's action-result says how far it got", () => {
  let ctx: ReturnType<typeof auditHome>;
  let work: string;
  let log: string;
  let lines: Line[];
  let exitCode: number | null;

  beforeAll(async () => {
    ctx = auditHome();
    ({ work, log } = workAndLog(ctx.dir));
    writeFileSync(path.join(work, "victim.txt"), "keep me\n");
    const child = spawn(process.execPath, [tacitBin, "run", "--no-check", "--command-permissions", "sleep", "--audit-log", log, "-"], {
      cwd: work,
      env: childEnv(ctx.env),
      stdio: ["pipe", "ignore", "ignore"],
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    child.stdin.end(SCRIPT);
    await commandRunsBelow(child.pid!, "sleep 87", () => child.exitCode !== null);
    child.kill("SIGTERM");
    exitCode = await exited;
    lines = readLines(log);
  }, 60_000);
  afterAll(() => ctx.cleanup());

  const events = () => lines.map((line) => line.event as Record<string, unknown>);
  /** The action-result of the command whose line is `commandLine`. */
  const resultOf = (commandLine: string): Record<string, unknown> => {
    const request = events().find((event) => event.type === "action-requested" && event.commandLine === commandLine);
    expect(request, `no request of ${commandLine} in the log`).toBeDefined();
    const result = events().find((event) => event.type === "action-result" && event.action === request!.action);
    expect(result, `no result of ${commandLine} in the log`).toBeDefined();
    return result!;
  };

  it("tacit was stopped by the signal while the last command ran", () => {
    expect(exitCode).toBe(143);
  });

  it("the command killed by the cancellation says killed, not merely ok", () => {
    expect(resultOf("sleep 87")).toMatchObject({ commandProgress: "killed" });
  });

  it("one killed at its own timeoutMs says killed; one that ended by itself says exited", () => {
    expect(resultOf("sleep 30")).toMatchObject({ ok: true, commandProgress: "killed", timedOut: "command-timeout" });
    expect(resultOf("sleep 0")).toMatchObject({ ok: true, commandProgress: "exited" });
  });

  it("one refused before it ran says not-started, and did nothing", () => {
    expect(existsSync(path.join(work, "victim.txt"))).toBe(true);
    expect(resultOf("rm victim.txt")).toMatchObject({ ok: false, commandProgress: "not-started" });
  });

  it("the field is from the fixed vocabulary, on commands' results only; no result holds the script's text", () => {
    expectProgressField(events(), "commandProgress", ["not-started", "started", "killed", "exited"], "Exec", CANARY);
  });

  it("the log verifies, and tacit audit show says how far each command got", async () => {
    await expectVerifiedAndShown(log, ctx.env, ["  command killed  ", "  ok  command exited  ", "  failed  command not-started  "]);
  });
});

describe("a command a person refused", () => {
  it("never started: the file it would remove is still there, and its result says not-started; the log verifies", async () => {
    const ctx = auditHome();
    try {
      const { work, log } = workAndLog(ctx.dir);
      writeFileSync(path.join(work, "victim.txt"), "keep me\n");
      const declined = await declinedInServe(
        ctx,
        { work, log },
        { libraryConfig: { commandPermissions: ["rm"] }, policy: { rules: [{ action: "exec", command: "rm", tier: "always-ask" }] } },
        'requestExecPermission(["rm"], (proc) => { try { proc.exec("rm", ["victim.txt"]); } catch (e) { println("refused"); } });',
        "Exec",
      );
      expect(declined.said).toContain("refused");
      expect(declined.asked).toBe(1);
      expect(existsSync(path.join(work, "victim.txt"))).toBe(true);
      expect(declined.decision).toMatchObject({ decision: "asked", answer: "no" });
      expect(declined.result).toMatchObject({ ok: false, commandProgress: "not-started" });
      const { result } = await verifyJson(log, ctx.env);
      expect(result.code, result.stdout).toBe(0);
    } finally {
      ctx.cleanup();
    }
  }, 60_000);
});
