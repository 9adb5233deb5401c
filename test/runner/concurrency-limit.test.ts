// ConcurrencyLimit: tasks past the limit wait in order; those waiting under a signal that aborts
// leave the queue (never run), and the others keep their places.

import { describe, expect, it } from "vitest";
import { getEventListeners } from "node:events";
import { ConcurrencyLimit } from "../../runner/concurrency-limit.js";

describe("ConcurrencyLimit", () => {
  it("runs waiting tasks in order; an aborted signal's tasks never run, with one listener for all of them", async () => {
    const limit = new ConcurrencyLimit(1);
    const ran: string[] = [];
    let release: () => void = () => undefined;
    const holder = limit.run(() => new Promise<void>((resolve) => (release = resolve)), undefined, () => new Error("cancelled"));
    const cancelled = new AbortController();
    const task = (name: string) => async () => void ran.push(name);
    const waiting = [
      limit.run(task("a"), undefined, () => new Error("cancelled")),
      ...Array.from({ length: 20 }, (_, i) => limit.run(task(`x${i}`), cancelled.signal, () => new Error(`x${i} cancelled`))),
      limit.run(task("b"), undefined, () => new Error("cancelled")),
    ];
    expect(limit.queued).toBe(22);
    expect(getEventListeners(cancelled.signal, "abort")).toHaveLength(1);
    cancelled.abort();
    expect(limit.queued).toBe(2);
    release();
    const settled = await Promise.allSettled([holder, ...waiting]);
    expect(ran).toEqual(["a", "b"]);
    expect(settled.filter((s) => s.status === "rejected").map((s) => String((s as PromiseRejectedResult).reason))).toEqual(
      Array.from({ length: 20 }, (_, i) => `Error: x${i} cancelled`),
    );
  });
});
