// tacit run stopped by SIGTERM while its script ran a command logged the evaluation's end as
// outcome "threw", exit 1, as if the script had thrown, while tacit exited 143: a reader of the
// log could not tell a stop from a failure. The log, --json and the exit now agree: "cancelled", 143.

import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { childEnv, runCli, tacitBin, tempDirWithHome } from "../helpers.js";
import { rawClient } from "../mcp/raw-client.js";
import { commandRunsBelow } from "./ended-steps.js";
import { shownEntries } from "./fixtures.js";

/** The evaluation-ended events of the log, read through `tacit audit show --json`. */
async function loggedEnds(log: string, env: Record<string, string>): Promise<Array<{ outcome?: string; exitCode?: number }>> {
  const shown = await runCli(["audit", "show", "--json", log], { env });
  expect(shown.code, shown.stderr).toBe(0);
  const lines = shownEntries<{ event: { type: string; outcome?: string; exitCode?: number } }>(shown.stdout);
  return lines.filter((line) => line.event.type === "evaluation-ended").map((line) => line.event);
}

describe("a stopped evaluation: its audit log says it was cancelled", () => {
  it("evaluation-ended is outcome cancelled with exit 143, as --json says and tacit exits", async () => {
    const { dir, env, cleanup } = tempDirWithHome("tacit-stop-outcome-");
    try {
      const work = path.join(dir, "work");
      mkdirSync(work);
      const log = path.join(dir, "audit.jsonl");
      const child = spawn(process.execPath, [tacitBin, "run", "--json", "--no-check", "--command-permissions", "sleep", "--audit-log", log, "-"], {
        cwd: work,
        env: childEnv(env),
        stdio: ["pipe", "pipe", "ignore"],
      });
      let stdout = "";
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
      const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
      child.stdin.end('requestExecPermission(["sleep"], (proc) => proc.exec("sleep", ["30"]));\n');
      await commandRunsBelow(child.pid!, "sleep 30", () => child.exitCode !== null);
      child.kill("SIGTERM");
      expect(await closed).toBe(143);
      const printed = JSON.parse(stdout) as { outcome: string; exitCode: number; error: string };
      expect(printed).toMatchObject({ outcome: "cancelled", exitCode: 143, error: "cancelled: tacit was stopped by SIGTERM" });

      expect(await loggedEnds(log, env)).toEqual([expect.objectContaining({ outcome: "cancelled", exitCode: 143 })]);
    } finally {
      cleanup();
    }
  });

  it("tacit serve, a call its client cancelled while its command ran: logged the same way, outcome cancelled, exit 1", async () => {
    const { dir, env, cleanup } = tempDirWithHome("tacit-stop-outcome-serve-");
    const work = path.join(dir, "work");
    mkdirSync(work);
    const log = path.join(dir, "audit.jsonl");
    const client = rawClient<{ id?: unknown; result?: { structuredContent?: { exitCode?: number } } }>(
      ["--no-check", "--command-permissions", "sleep", "--audit-log", log],
      work,
      env,
    );
    try {
      const exited = new Promise<number | null>((resolve) => client.child.once("exit", (code) => resolve(code)));
      await client.initialize();
      const call = (id: number, code: string) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "execute_typescript", arguments: { code } } });
      client.send(call(2, 'requestExecPermission(["sleep"], (proc) => proc.exec("sleep", ["31"]));'));
      await commandRunsBelow(client.child.pid!, "sleep 31", () => client.child.exitCode !== null);
      client.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 2, reason: "the user stopped it" } });
      // A later call runs once the cancelled one has ended (one execute_typescript at a time).
      client.send(call(3, 'println("after");'));
      expect((await client.answer(3)).result?.structuredContent?.exitCode).toBe(0);
      client.child.stdin.end();
      expect(await exited).toBe(0);
      expect(await loggedEnds(log, env)).toEqual([
        expect.objectContaining({ outcome: "cancelled", exitCode: 1 }),
        expect.objectContaining({ outcome: "ok", exitCode: 0 }),
      ]);
    } finally {
      client.close();
      cleanup();
    }
  });
});
