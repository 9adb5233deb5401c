// A session's snippet that names no module but tacit is type-checked while it is validated (see
// checkInStages). A snippet the validator refused was answered at once (exit 3), but its check went
// on in the server's one checker, up to the time limit, for a snippet that was gone: the client
// could not cancel it (its call had been answered), and every later check, any session's and any
// execute_typescript call's, waited behind it. A client sending such snippets one after another
// queued a check a call, each up to the limit: measured with a 10 s limit, three refused snippets,
// each answered within 30 ms, held the next one-shot call (println) for 30.7 s; now 77 ms. The
// validator's refusal stops the check as a cancellation does: one not begun is never sent, and the
// checker working on one is killed.
// Measured without timing: the checker's CPU time, read from /proc from the refusal until the next
// snippet's check is answered (as test/mcp/cancelled-check.test.ts measures a cancellation).

import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { createSession, runInSession, slowToCheck } from "../helpers.js";
import { cpuMsOf } from "../processes.js";
import { serveWatchingCheckers } from "./checker-server.js";

/** CPU the checker may still use after the refusal while it is being killed: a fraction of what the slow check needs. */
const CPU_AFTER_REFUSAL_LIMIT_MS = 3000;

const server = serveWatchingCheckers("tacit-refused-snippet-check-");

describe("a session's snippet the validator refuses while its type check runs", () => {
  it("is answered at once, and its check stops: the next snippet's check does not wait behind it", async () => {
    const session = await createSession(server.client);
    // The first check starts the checker; the second snippet is checked beside the validation only after one has passed.
    expect(await runInSession(server.client, session, "let kept = 1;")).toMatchObject({ exitCode: 0 });
    const [checker, ...others] = server.checkers();
    expect(checker, "the server's type checker process").toBeDefined();
    expect(others).toEqual([]);
    const idle = cpuMsOf(checker!)!;

    // Slow to check (about 40 s), and refused by the validator (globalThis).
    const refused = await runInSession(server.client, session, `${slowToCheck(40)}println(globalThis);\n`);
    expect(refused.exitCode).toBe(3);
    expect(refused.error).toContain("[ambient-authority]");

    // The next snippet is checked (a type error is still found) without waiting for the refused
    // one's check: the checker, which had that check posted before the validator ran, uses little
    // CPU until the answer (the slow check needs far more). Killed mid-check, its process is gone.
    const atAnswer = cpuMsOf(checker!);
    expect(atAnswer, "the checker's process").not.toBeNull();
    let answered = false;
    const next = runInSession(server.client, session, "const text: string = kept;\nprintln(text);", 900_000).finally(() => (answered = true));
    while (!answered) {
      const used = cpuMsOf(checker!);
      if (used !== null) expect(used - atAnswer!, `CPU ms the checker used after the snippet was refused (${atAnswer! - idle} ms before)`).toBeLessThan(CPU_AFTER_REFUSAL_LIMIT_MS);
      await sleep(50);
    }
    const wrong = await next;
    expect(wrong.exitCode).toBe(3);
    expect(wrong.error).toContain("TS2322");
    // The session goes on, with one checker.
    expect(await runInSession(server.client, session, "println(kept + 1);")).toMatchObject({ stdout: "2\n", exitCode: 0 });
    expect(server.checkers()).toHaveLength(1);
  }, 120_000);
});
