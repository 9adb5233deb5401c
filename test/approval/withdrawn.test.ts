// A question whose evaluation has ended is withdrawn: the person is asked about an action a
// script is waiting for, and once its call is gone (the session deleted, the call cancelled)
// nothing waits for the answer. An eleventh security review deleted a session while its
// snippet's question was open: the question stayed in front of the person for up to five
// minutes, and their yes to it, for an action that could no longer run, was remembered for 30
// days (approve-once), so the agent's next session did it unasked.

import { readFileSync } from "node:fs";
import { afterEach, expect, it } from "vitest";
import { realTempDir } from "../files/fixtures.js";
import { createSession, runInSession } from "../helpers.js";
import { makeWorld, serveWorld, storedApprovals } from "./fixtures.js";

let close: (() => Promise<void>) | null = null;
afterEach(async () => {
  await close?.();
  close = null;
});

async function withdrawnWhenDeleted(answerOneFirst: boolean): Promise<void> {
  const temp = realTempDir("tacit-withdrawn-");
  const world = makeWorld(temp.dir);
  const config = world.config([{ action: "fs.write", tier: "approve-once" }]);
  let session = "";
  let withdrawn = false;
  let answered: () => void = () => undefined;
  const firstAnswered = new Promise<void>((resolve) => (answered = resolve));
  const questions: string[] = [];
  const client = await serveWorld(world, ["--config", config], {
    onElicit: async (request, extra) => {
      const message = (request.params as { message: string }).message;
      questions.push(message);
      if (!message.includes("late.txt") || questions.filter((q) => q.includes("late.txt")).length > 1) return { action: "accept", content: { approve: true } };
      // While the person reads, the agent deletes the session the question came from.
      await client.callTool({ name: "delete_repl_session", arguments: { session_id: session } });
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 2000);
        const gone = (): void => {
          withdrawn = true;
          clearTimeout(timer);
          resolve();
        };
        if (extra.signal.aborted) gone();
        else extra.signal.addEventListener("abort", gone);
      });
      setTimeout(answered, 300);
      return { action: "accept", content: { approve: true } };
    },
  });
  close = async () => {
    await client.close();
    temp.cleanup();
  };
  if (answerOneFirst) {
    const first = await client.callTool({ name: "execute_typescript", arguments: { code: `requestFileSystem(".", (fs) => fs.access("first.txt").write("1"));\n` } });
    expect(first.isError).toBeFalsy();
  }
  const asked = answerOneFirst ? 1 : 0;
  session = await createSession(client);
  const write = `requestFileSystem(".", (fs) => fs.access("late.txt").write("written"));\n`;
  const result = await runInSession(client, session, write);
  expect(questions).toHaveLength(asked + 1);
  expect(result.exitCode).not.toBe(0);
  // The bad things: the question stayed open after its session was gone, and the yes to it was
  // remembered, so a later call writes late.txt unasked.
  await firstAnswered;
  expect(withdrawn).toBe(true);
  expect(storedApprovals(world)?.map((a) => a.pattern) ?? []).not.toContain(`fs.write ${world.at("late.txt")}`);
  expect(world.exists("late.txt")).toBe(false);
  // A new session is asked again, and the yes then writes.
  const again = await runInSession(client, await createSession(client), write);
  expect(again.exitCode, again.error ?? "").toBe(0);
  expect(questions).toHaveLength(asked + 2);
  expect(readFileSync(world.at("late.txt"), "utf8")).toBe("written");
}

it("deleting a session withdraws its snippet's open question, and a yes given after is not remembered", () => withdrawnWhenDeleted(true));

// The SDK's client drops a cancellation of request id 0: the server's first request is a ping,
// so that the first question of a server's life can be withdrawn too.
it("the very first question a server asks is withdrawn the same way", () => withdrawnWhenDeleted(false));
