// The resident memory all of a tacit serve's REPL sessions hold together is bounded
// (sessionsMemoryLimitMb). memoryLimitMb bounds one sandbox only, and a session keeps what its
// snippets made while idle: a red team's four idle sessions, each holding a
// Float64Array(75_000_000), kept 2,460 MB, and the default 100 sessions could hold 75 GB. Here,
// through the MCP SDK's client and a real tacit serve with small limits (128 MiB of heap, so 384
// MiB resident a sandbox, and 400 MiB for the sessions together): a session is refused when the
// sessions hold the budget, a snippet that grows its sandbox past it is stopped, each saying why
// and what to do; the other sessions, and the server, go on.

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { residentKb } from "../../runner/resident-memory.js";
import { bootstrapPath } from "../../runner/paths.js";
import { connectServe, createSession, runCli, runInSession, tempDirWithHome } from "../helpers.js";
import { commandLineOf, descendantsOf, isRunning, runsDeno } from "../processes.js";

const BUDGET_MIB = 400;

let temp: ReturnType<typeof tempDirWithHome>;
beforeAll(() => {
  temp = tempDirWithHome("tacit-sessions-memory-");
});
afterAll(() => temp?.cleanup());

async function serveWithBudget(budgetMib: number): Promise<{ client: Client; pid: number }> {
  const client = await connectServe(["--no-check", "--memory-limit-mb", "128", "--sessions-memory-limit-mb", String(budgetMib)], temp.dir, { env: temp.env });
  const pid = (client.transport as StdioClientTransport).pid;
  if (pid === null) throw new Error("the server has no pid");
  return { client, pid };
}

/** What the server's agent sandboxes (its sessions', and the warm spare beside them) hold, resident, in MiB. */
function sandboxesMib(serverPid: number): number {
  const sandboxes = descendantsOf(serverPid).filter((pid) => commandLineOf(pid).includes(bootstrapPath) && runsDeno(pid));
  return sandboxes.reduce((sum, pid) => sum + (residentKb(pid) ?? 0), 0) / 1024;
}

const textOf = (result: Awaited<ReturnType<Client["callTool"]>>): string => (result.content as Array<{ text: string }>)[0]?.text ?? "";

describe("tacit serve: the memory its sessions hold together", () => {
  it("refuses a session and stops a snippet past the budget, saying why and what to do; the sessions and the server go on", async () => {
    const { client, pid } = await serveWithBudget(BUDGET_MIB);
    try {
      const good = await createSession(client);
      expect(await runInSession(client, good, "let kept = 41;\nkept")).toMatchObject({ exitCode: 0, stdout: "41\n" });
      // 300 MB off the V8 heap, within the sandbox's own 384 MiB.
      const big = await createSession(client);
      const held = await runInSession(client, big, "const big = new Float64Array(37_500_000);\nbig.fill(1);\nbig.length", 60_000);
      expect(held, held.error ?? "").toMatchObject({ exitCode: 0, stdout: "37500000\n" });

      // The sessions hold some 370 MiB: a third would take them past 400.
      const refused = await client.callTool({ name: "create_repl_session", arguments: {} });
      expect(refused.isError).toBe(true);
      expect(refused.structuredContent).toBeUndefined();
      expect(textOf(refused)).toContain("create_repl_session refused: the server's 2 live sessions hold");
      expect(textOf(refused)).toContain(`past the ${BUDGET_MIB} MiB all REPL sessions of this tacit serve may hold together`);
      expect(textOf(refused)).toContain("delete sessions you no longer need with delete_repl_session");
      expect(textOf(refused)).toContain('--sessions-memory-limit-mb <MiB>, config "sessionsMemoryLimitMb"');

      // 100 MB more in the small session, within its own limit, takes the sessions past the budget: the snippet is stopped.
      const grown = await runInSession(client, good, "const more = new Float64Array(12_500_000);\nmore.fill(1);\nmore.length", 60_000);
      expect(grown.exitCode, grown.stdout).toBe(125);
      expect(grown.error).toContain("killed: the snippet grew its session's sandbox to");
      expect(grown.error).toContain(`more than the ${BUDGET_MIB} MiB all of them may hold together`);
      expect(grown.error).toContain("delete sessions you no longer need with delete_repl_session");
      expect(grown.error).toContain("sessionsMemoryLimitMb");
      // The bad thing: the sessions hold more than the budget (the warm spare, some 35 MiB, is no session's).
      expect(sandboxesMib(pid)).toBeLessThan(BUDGET_MIB + 64);

      // Both sessions go on: the stopped one from its earlier snippets, the big one as it was.
      expect(await runInSession(client, good, "kept + 1")).toMatchObject({ exitCode: 0, stdout: "42\n" });
      expect(await runInSession(client, big, "big.length")).toMatchObject({ exitCode: 0, stdout: "37500000\n" });
      // Deleting the big session makes room.
      expect(textOf(await client.callTool({ name: "delete_repl_session", arguments: { session_id: big } }))).toBe(`deleted ${big}`);
      const after = await createSession(client);
      expect(after).toMatch(/^s/);
      expect(await runInSession(client, after, "const more = new Float64Array(12_500_000);\nmore.fill(1);\nmore.length", 60_000)).toMatchObject({ exitCode: 0, stdout: "12500000\n" });
      expect(isRunning(pid)).toBe(true);
    } finally {
      await client.close();
    }
  }, 120_000);

  it("sessions created all at once cannot pass the budget before any is read: each counts 64 MiB from its start", async () => {
    // 200 MiB: three sessions of 64.
    const { client, pid } = await serveWithBudget(200);
    try {
      const answers = await Promise.all(Array.from({ length: 6 }, () => client.callTool({ name: "create_repl_session", arguments: {} })));
      const made = answers.filter((answer) => answer.isError !== true);
      expect(made).toHaveLength(3);
      for (const answer of answers.filter((answer) => answer.isError === true)) {
        expect(textOf(answer)).toContain("past the 200 MiB all REPL sessions of this tacit serve may hold together");
      }
      const listed = await client.callTool({ name: "list_sessions", arguments: {} });
      expect((listed.structuredContent as { sessions: unknown[] }).sessions).toHaveLength(3);
      expect(isRunning(pid)).toBe(true);
    } finally {
      await client.close();
    }
  }, 60_000);

  it("a budget below one sandbox's start is refused before the server starts, naming the key", async () => {
    const result = await runCli(["serve", "--sessions-memory-limit-mb", "10"], { cwd: temp.dir, env: temp.env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("sessionsMemoryLimitMb");
  });
});
