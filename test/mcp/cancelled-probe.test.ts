// A script longer than 8 KiB is measured before it is checked by a parse probe, a child process
// of tacit serve with a heap of its own (up to 1.5 GB, 30 s: nesting.ts). The probes of the whole
// server run one at a time. A call cancelled while its probe ran left the probe running to its
// end, and the call holding its evaluation slot meanwhile, then the next cancelled call's probe, one
// after another: work for calls the client had given up on. The probe of a cancelled call is now
// ended, and one still waiting for its turn never starts.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { connectServeProcess, createSession, runInSession, tempDirWithHome, type ToolResult } from "../helpers.js";
import { commandLineOf, descendantsOf, isRunning } from "../processes.js";

let cleanup: () => void;
let client: Client;
let server: number;
beforeAll(async () => {
  let dir: string;
  let env: Record<string, string>;
  ({ dir, env, cleanup } = tempDirWithHome("tacit-cancelled-probe-"));
  ({ client, pid: server } = await connectServeProcess(["--no-check"], dir, { env }));
});
afterAll(async () => {
  await client.close();
  cleanup();
});

/** The parse probes the server runs now. */
const probes = (): number[] => descendantsOf(server).filter((pid) => commandLineOf(pid).includes("parse-probe") && isRunning(pid));

/** A script of 8 MB (2,000,000 statements on one line, within what a message may hold): its probe takes seconds. */
const LONG = "let a = 0;\n" + "a++;".repeat(2_000_000);

describe("a call cancelled while its script's parse probe runs", () => {
  it("ends the probe, and the probes of calls cancelled while they waited for it never start", async () => {
    const cancels = [new AbortController(), new AbortController(), new AbortController()];
    const calls = cancels.map((cancel) =>
      client.callTool({ name: "execute_typescript", arguments: { code: LONG } }, undefined, { signal: cancel.signal, timeout: 120_000 }).catch(() => null),
    );
    while (probes().length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    const cancelledAt = Date.now();
    for (const cancel of cancels) cancel.abort("the person stopped it");
    await Promise.all(calls);
    // The probe under way ends within moments (the server may be slow to read the cancellations
    // behind 8 MB calls on a loaded machine), where one probe alone takes seconds and three in turn
    // took 15 s; and no cancelled call's probe starts later.
    while (probes().length > 0 && Date.now() - cancelledAt < 30_000) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(Date.now() - cancelledAt).toBeLessThan(3_000);
    const seen = new Set<number>();
    const until = Date.now() + 3_000;
    while (Date.now() < until) {
      for (const pid of probes()) seen.add(pid);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect([...seen]).toEqual([]);
    // The server goes on.
    const fine = await client.callTool({ name: "execute_typescript", arguments: { code: 'println("fine")' } });
    expect((fine.structuredContent as unknown as ToolResult).stdout).toBe("fine\n");
  }, 120_000);

  it("in a session: ends the probe, and the session goes on as it was, its bindings kept", async () => {
    const session = await createSession(client);
    expect((await runInSession(client, session, "let kept = 41;")).exitCode).toBe(0);
    const cancel = new AbortController();
    const call = client
      .callTool({ name: "execute_in_session", arguments: { session_id: session, code: LONG } }, undefined, { signal: cancel.signal, timeout: 120_000 })
      .catch(() => null);
    while (probes().length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    const probe = probes()[0]!;
    cancel.abort("the person stopped it");
    await call;
    const until = Date.now() + 2_000;
    while (isRunning(probe) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(isRunning(probe)).toBe(false);
    const next = await runInSession(client, session, "kept + 1");
    expect(next.exitCode).toBe(0);
    expect(next.stdout).toContain("42");
  }, 120_000);
});
