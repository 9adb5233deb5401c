// tacit serve whose client goes away (closes its end of stdin), or that is sent SIGTERM or SIGINT
// (as MCP clients end their servers), while calls are under way: the server stops, and the audit
// log must still say how each of them ended. A security review's
// client closed while an always-ask `fs.delete` waited for the person's answer: the server closed
// the log under the call, which then held the delete's request and nothing after it (no decision,
// no result, no end of the evaluation), signed and verified, so a reader could not tell whether
// the file was deleted. Each call under way is now ended as a cancellation would end it, and
// waited for, before the log is closed.

import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, describe, expect, it } from "vitest";
import { connectServe, createSession, expectNoneLeft, runCli, tempDirWithHome, watchProcesses } from "../helpers.js";
import { commandRunsBelow, expectEveryStepEnded, loggedEvents as events } from "../audit/ended-steps.js";
import { rawClient } from "./raw-client.js";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** A working directory with victim.txt, a policy that asks before any delete, and an audit log beside it (outside the root). */
function world(): { work: string; log: string; config: string; env: Record<string, string> } {
  const { dir, env, cleanup } = tempDirWithHome("tacit-stop-under-way-");
  cleanups.push(cleanup);
  const work = path.join(dir, "work");
  const config = path.join(dir, "tacit.json");
  mkdirSync(work);
  writeFileSync(path.join(work, "victim.txt"), "keep me\n");
  writeFileSync(config, JSON.stringify({ policy: { rules: [{ action: "fs.delete", tier: "always-ask" }] } }));
  return { work, log: path.join(dir, "audit.jsonl"), config, env };
}

/** Connects a client that declares elicitation and never answers; resolves `asked` at the first question. */
async function neverAnswering(w: ReturnType<typeof world>, args: string[] = []): Promise<{ client: Client; asked: Promise<void> }> {
  let questionCame: () => void = () => undefined;
  const asked = new Promise<void>((resolve) => (questionCame = resolve));
  const client = await connectServe(["--no-check", "--config", w.config, "--audit-log", w.log, ...args], w.work, {
    env: w.env,
    onElicit: () => {
      questionCame();
      return new Promise(() => undefined);
    },
  });
  return { client, asked };
}

const DELETE = 'requestFileSystem(".", (fs) => fs.access("victim.txt").delete());\nprintln("deleted");';

/** Makes `call` (one that deletes victim.txt, asked about), closes the client once the person is asked; the file stays, and every step is ended in the log it gives. */
async function goneWhileAsked(w: ReturnType<typeof world>, call: (client: Client) => Promise<unknown>): Promise<ReturnType<typeof events>> {
  const { client, asked } = await neverAnswering(w);
  const pending = call(client).catch(() => undefined);
  await asked;
  await client.close();
  await pending;
  expect(existsSync(path.join(w.work, "victim.txt"))).toBe(true);
  const logged = events(w.log);
  expectEveryStepEnded(logged);
  return logged;
}

describe("tacit serve whose client goes away while a call is under way", () => {
  it("an execute_typescript call waiting for a person's answer: its question is withdrawn and logged, its evaluation's end too; the file stays", async () => {
    const w = world();
    const logged = await goneWhileAsked(w, (client) => client.callTool({ name: "execute_typescript", arguments: { code: DELETE } }));
    const deleteAction = logged.find((event) => event.type === "action-requested" && event.kind === "FsDelete")!;
    expect(logged.find((event) => event.type === "decision" && event.evaluation === deleteAction.evaluation && event.action === deleteAction.action)).toMatchObject({ decision: "deny", via: "withdrawn" });
    const verified = await runCli(["audit", "verify", w.log], { env: w.env });
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
  });

  it("a session snippet waiting for a person's answer: the same", async () => {
    const logged = await goneWhileAsked(world(), async (client) => {
      const session = await createSession(client);
      return client.callTool({ name: "execute_in_session", arguments: { session_id: session, code: DELETE } });
    });
    expect(logged.filter((event) => event.type === "decision").map((event) => event.via)).toContain("withdrawn");
    expect(logged.some((event) => event.type === "session-ended")).toBe(true);
  });

  it("an allowed command running: it is ended, and its result and its evaluation's end are logged", async () => {
    const w = world();
    const { client } = await neverAnswering(w, ["--command-permissions", "sleep"]);
    const { seen } = await watchProcesses(async (watched) => {
      const call = client
        .callTool({ name: "execute_typescript", arguments: { code: 'requestExecPermission(["sleep"], (proc) => proc.exec("sleep", ["87"]));' } })
        .catch(() => undefined);
      // The client goes once the command runs.
      await commandRunsBelow((client.transport as StdioClientTransport).pid!, "sleep 87", () => false, watched);
      await client.close();
      await call;
    });
    expectNoneLeft(seen, "sleep 87");
    expectEveryStepEnded(events(w.log));
  });

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it(`${signal} while an execute_typescript call waits for a person's answer: the server ends the call and logs it before it exits, with ${signal === "SIGTERM" ? 143 : 130}`, async () => {
      const w = world();
      const { client, asked } = await neverAnswering(w);
      const transport = client.transport as StdioClientTransport;
      const pid = transport.pid!;
      const exited = new Promise<number | null>((resolve) => {
        const child = (transport as unknown as { _process: import("node:child_process").ChildProcess })._process;
        child.once("exit", (code) => resolve(code));
      });
      const call = client.callTool({ name: "execute_typescript", arguments: { code: DELETE } }).catch(() => undefined);
      await asked;
      process.kill(pid, signal);
      expect(await exited).toBe(signal === "SIGTERM" ? 143 : 130);
      await call;
      await client.close();
      expect(existsSync(path.join(w.work, "victim.txt"))).toBe(true);
      const logged = events(w.log);
      expectEveryStepEnded(logged);
      expect(logged.filter((event) => event.type === "decision").map((event) => event.via)).toContain("withdrawn");
    });
  }

  it("a delete_repl_session whose client goes away as it is sent: the session's end is logged before the log closes", async () => {
    const w = world();
    const client = rawClient<{ id?: unknown; result?: { structuredContent?: { session_id: string } } }>(["--no-check", "--audit-log", w.log], w.work, w.env);
    await client.initialize();
    client.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "create_repl_session", arguments: {} } });
    const session = (await client.answer(2)).result!.structuredContent!.session_id;
    const exited = new Promise<number | null>((resolve) => client.child.once("exit", (code) => resolve(code)));
    // The deletion and the end of the client's input in one write: the server stops while the session ends.
    client.child.stdin.end(client.line({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "delete_repl_session", arguments: { session_id: session } } }));
    expect(await exited).toBe(0);
    const logged = events(w.log);
    expect(logged.filter((event) => event.type === "session-started").map((event) => event.session)).toEqual([session]);
    expect(logged.filter((event) => event.type === "session-ended").map((event) => event.session)).toEqual([session]);
  });
});
