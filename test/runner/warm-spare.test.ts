// tacit serve's warm spare (runner/warm-spare.ts): a spare still booting is stopped while a
// session's snippet runs, goes on after, and is handed over running when a call takes it.

import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { WarmSpare } from "../../runner/warm-spare.js";

/**
 * The Deno processes this process started, with their states (R, S, T for stopped…): its children,
 * or theirs where the sandbox has a PID namespace (the unshare spawned forks Deno in it, see
 * runner/namespaced-program.ts).
 */
function denoChildren(): Map<number, string> {
  const children = new Map<number, string>();
  const stats = new Map<number, { comm: string; state: string; parent: number }>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const [, comm, rest] = /^\d+ \((.*)\) (.*)$/s.exec(readFileSync(`/proc/${entry}/stat`, "utf8"))!;
      const [state, parent] = rest!.split(" ");
      stats.set(Number(entry), { comm: comm!, state: state!, parent: Number(parent) });
    } catch {
      // Gone while we looked.
    }
  }
  for (const [pid, { comm, state, parent }] of stats) {
    if (comm.startsWith("deno") && (parent === process.pid || stats.get(parent)?.parent === process.pid)) children.set(pid, state);
  }
  return children;
}

/** Waits (up to 5 s) until `pid`'s state is, or is not, "T" (a signal's stop is not immediate); returns the last state seen. */
async function stateWhen(pid: number, stopped: boolean): Promise<string | undefined> {
  const until = Date.now() + 5000;
  for (;;) {
    const state = denoChildren().get(pid);
    if ((state === "T") === stopped || Date.now() > until) return state;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe.skipIf(process.platform !== "linux")("the warm spare", () => {
  it("is stopped while a snippet runs if it may still be booting, goes on after, and is handed over running", async () => {
    const before = new Set(denoChildren().keys());
    const spares = new WarmSpare(256);
    try {
      let pid: number | undefined;
      for (const until = Date.now() + 5000; pid === undefined && Date.now() < until; await new Promise((resolve) => setTimeout(resolve, 10))) {
        pid = [...denoChildren().keys()].find((child) => !before.has(child));
      }
      expect(pid).toBeDefined();
      let during: string | undefined;
      await spares.inForeground(async () => {
        // Two at once: the spare goes on only once neither runs.
        await spares.inForeground(async () => undefined);
        during = await stateWhen(pid!, true);
      });
      expect(during).toBe("T");
      expect(await stateWhen(pid!, false)).not.toBe("T");
      // Taken by a call while a snippet runs: it goes on at once.
      await spares.inForeground(async () => {
        expect(await stateWhen(pid!, true)).toBe("T");
        const taken = spares.take();
        expect(await stateWhen(pid!, false)).not.toBe("T");
        taken?.kill("cancelled", "the test is over");
        await taken?.ended;
      });
    } finally {
      spares.close();
    }
  });
});
