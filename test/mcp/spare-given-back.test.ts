// tacit serve's warm spare (runner/warm-spare.ts) and a call whose script is refused before it
// runs: the validator's refusal or a type error. The spare the call took was killed, and the
// server booted another (a Deno boot, some 70-80 ms of CPU, for every refused call: an agent
// fixing its type errors pays it at each try). Untouched, it is given back and serves the next
// call. Seen from outside: the server's sandbox processes, by their pids in /proc.

import { setTimeout as sleep } from "node:timers/promises";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootstrapPath } from "../../runner/paths.js";
import { connectServeProcess, tempDir, type ToolResult } from "../helpers.js";
import { denoProcessesRunning, denoRunning, isRunning } from "../processes.js";

let client: Client;
let serverPid: number;
let cleanup: () => void;

beforeAll(async () => {
  const made = tempDir("tacit-spare-given-back-");
  cleanup = made.cleanup;
  ({ client, pid: serverPid } = await connectServeProcess([], made.dir));
});

afterAll(async () => {
  await client.close();
  cleanup();
});

async function call(code: string): Promise<ToolResult> {
  const response = await client.callTool({ name: "execute_typescript", arguments: { code } });
  return response.structuredContent as unknown as ToolResult;
}

describe("a call refused before it runs", () => {
  it("leaves the warm spare it took to the next call: not killed, no other booted, and the next call runs in it", async () => {
    // The spare, booted before any call.
    const spare = await denoRunning(serverPid, bootstrapPath);
    const refusals = [
      ["the validator", "const f = eval;\nprintln(f('1'));\n"],
      ["the type checker", "const n: number = 'not a number';\nprintln(n);\n"],
    ] as const;
    for (const [by, code] of refusals) {
      // Past a burst's 50 ms (mcp-server.ts BACK_TO_BACK_MS), where a new spare starts as the call comes.
      await sleep(100);
      const refused = await call(code);
      expect(refused.exitCode, `${by}: ${refused.error}`).toBe(3);
      // Killed, it was gone by the answer (the refusal waited for its end).
      expect(isRunning(spare), by).toBe(true);
      expect(denoProcessesRunning(serverPid, bootstrapPath), by).toEqual([spare]);
    }
    await sleep(100);
    expect(await call("println(6 * 7);\n")).toMatchObject({ exitCode: 0, stdout: "42\n" });
    // A one-shot call's sandbox is killed as the call ends (the answer need not wait for the process
    // to be gone): the spare served it, so it ends, where a spare no call took would wait on.
    for (let tries = 0; tries < 200 && isRunning(spare); tries++) await sleep(50);
    expect(isRunning(spare)).toBe(false);
  });
});
