// A session's snippet, or a one-shot execute_typescript call, cancelled while tacit serve type-checks it. The check went on to its end
// (up to the time limit, here ten minutes), a core busy for a snippet that was gone, and every
// later check, any session's, waited behind it. Cancelling the snippet now kills the checker's
// process; the next check starts a new checker, which checks as before.
// Measured without timing: the old checker's CPU time, read from /proc after the cancellation,
// until its process is gone.

import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { createSession, runInSession, slowToCheck } from "../helpers.js";
import { cpuMsOf, isRunning } from "../processes.js";
import { serveWatchingCheckers } from "./checker-server.js";

/** CPU the old checker may still use after the cancellation while it is being killed: a fraction of what the slow check needs. */
const CPU_AFTER_CANCEL_LIMIT_MS = 3000;

const server = serveWatchingCheckers("tacit-cancelled-check-");

/**
 * Calls `tool`, whose script is slow to check, cancels the call once `checker` is seen working on
 * it, and waits for the checker's process to end, asserting it used little CPU since the cancel.
 */
async function cancelDuringCheck(checker: number, tool: { name: string; arguments: Record<string, unknown> }): Promise<void> {
  const abort = new AbortController();
  const call = server.client.callTool(tool, undefined, { signal: abort.signal, timeout: 900_000 }).then(
    () => "answered",
    () => "cancelled",
  );
  // Cancelled once the checker is seen working on the script.
  const idle = cpuMsOf(checker)!;
  while ((cpuMsOf(checker) ?? Infinity) < idle + 300) await sleep(20);
  abort.abort("the test cancels it");
  expect(await call).toBe("cancelled");

  // The checker stops: its process ends, having used little CPU since (the check needs far more).
  const atCancel = cpuMsOf(checker);
  for (;;) {
    const used = cpuMsOf(checker);
    if (used === null || !isRunning(checker)) break;
    expect(used - atCancel!, "CPU ms the checker used after its script was cancelled").toBeLessThan(CPU_AFTER_CANCEL_LIMIT_MS);
    await sleep(50);
  }
}

describe("a call cancelled during its type check", () => {
  it("a session's snippet: stops the check (the checker's process ends), and the next snippet is checked by a new checker", async () => {
    const session = await createSession(server.client);
    // The first check starts the checker.
    expect(await runInSession(server.client, session, "let kept = 1;")).toMatchObject({ exitCode: 0 });
    const [checker, ...others] = server.checkers();
    expect(checker, "the server's type checker process").toBeDefined();
    expect(others).toEqual([]);

    await cancelDuringCheck(checker!, { name: "execute_in_session", arguments: { session_id: session, code: `${slowToCheck(40)}kept = 2;` } });

    // The next snippet is checked (a type error is still found) and runs, by a new checker.
    const wrong = await runInSession(server.client, session, 'const text: string = kept;\nprintln(text);');
    expect(wrong.exitCode).toBe(3);
    expect(wrong.error).toContain("TS2322");
    expect(await runInSession(server.client, session, "println(kept + 1);")).toMatchObject({ stdout: "2\n", exitCode: 0 });
    const now = server.checkers();
    expect(now).toHaveLength(1);
    expect(now[0]).not.toBe(checker);
  }, 120_000);
  it("a one-shot execute_typescript: stops the check, and the next call is checked by a new checker", async () => {
    const oneShot = async (code: string): Promise<{ stdout: string; exitCode: number; error?: string }> =>
      (await server.client.callTool({ name: "execute_typescript", arguments: { code } })).structuredContent as { stdout: string; exitCode: number; error?: string };
    expect(await oneShot("println(1);")).toMatchObject({ stdout: "1\n", exitCode: 0 });
    const [checker, ...others] = server.checkers();
    expect(checker, "the server's type checker process").toBeDefined();
    expect(others).toEqual([]);
    await cancelDuringCheck(checker!, { name: "execute_typescript", arguments: { code: `${slowToCheck(40)}println(2);` } });
    const wrong = await oneShot('const text: string = 1;\nprintln(text);');
    expect(wrong.exitCode).toBe(3);
    expect(wrong.error).toContain("TS2322");
    const now = server.checkers();
    expect(now).toHaveLength(1);
    expect(now[0]).not.toBe(checker);
  }, 120_000);
});
