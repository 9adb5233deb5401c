// abortRace (runner/abort-race.ts): a request's work, or null once the evaluation is abandoned.

import { describe, expect, it } from "vitest";
import { abortRace } from "../../runner/abort-race.js";

describe("abortRace", () => {
  it("gives the work's value, or its error", async () => {
    const unless = abortRace(new AbortController().signal);
    await expect(unless(Promise.resolve(7))).resolves.toBe(7);
    await expect(unless(Promise.reject(new Error("no")))).rejects.toThrow("no");
  });

  it("gives null as soon as the signal is aborted, for every request still waiting, however the work ends later", async () => {
    const abandon = new AbortController();
    const unless = abortRace(abandon.signal);
    let finish: (value: string) => void = () => undefined;
    let fail: (error: Error) => void = () => undefined;
    const first = unless(new Promise<string>((resolve) => (finish = resolve)));
    const second = unless(new Promise<string>((_resolve, reject) => (fail = reject)));
    abandon.abort();
    finish("late");
    fail(new Error("late"));
    await expect(first).resolves.toBeNull();
    await expect(second).resolves.toBeNull();
  });

  it("gives null at once after the abort, without waiting for the work", async () => {
    const abandon = new AbortController();
    const unless = abortRace(abandon.signal);
    abandon.abort();
    await expect(unless(new Promise<number>(() => undefined))).resolves.toBeNull();
  });

  it("a request answered before the abort keeps its answer", async () => {
    const abandon = new AbortController();
    const unless = abortRace(abandon.signal);
    const answered = unless(Promise.resolve("done"));
    await expect(answered).resolves.toBe("done");
    abandon.abort();
    await expect(answered).resolves.toBe("done");
  });
});
