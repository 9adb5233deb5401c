// A session whose snippet times out is rebuilt by replaying its successful snippets, their
// effects answered from a recording (runner/session.ts). Under a policy, some of those effects
// were asked about: the replay must neither ask again (a question the person already answered,
// shown again out of nowhere) nor do again what the yes allowed, and a yes it replays must not
// stand for the actions of later snippets, which an always-ask rule asks about every time.

import { readFileSync } from "node:fs";
import { afterEach, expect, it } from "vitest";
import { realTempDir } from "../files/fixtures.js";
import { makeWorld, serveAsking } from "./fixtures.js";

let close: (() => Promise<void>) | null = null;
afterEach(async () => {
  await close?.();
  close = null;
});

it("a rebuilt session replays an approved append without asking or appending again; a later append is asked about again", async () => {
  const temp = realTempDir("tacit-session-replay-");
  const world = makeWorld(temp.dir);
  world.file("log.txt", "");
  const config = world.config([{ action: "fs.write", path: "**/log.txt", tier: "always-ask" }]);
  // The person approves every append of a line starting "ok"; "bad" lines they refuse.
  const { client, questions } = await serveAsking(world, ["--config", config, "--exec-timeout-ms", "4000"], (message) => !message.includes("bad"));
  close = async () => {
    await client.close();
    temp.cleanup();
  };
  const created = await client.callTool({ name: "create_repl_session", arguments: {} });
  const session_id = (created.structuredContent as { session_id: string }).session_id;
  const run = async (code: string) => {
    const response = await client.callTool({ name: "execute_in_session", arguments: { session_id, code } });
    return { isError: response.isError === true, text: (response.content as Array<{ text: string }>).map((c) => c.text).join("") };
  };
  const append = (line: string) => `requestFileSystem(".", (fs) => fs.access("log.txt").append(${JSON.stringify(`${line}\n`)}))`;

  const first = await run(`const appended = ${append("ok one")} === undefined ? 1 : 0;\nappended`);
  expect(first.isError, first.text).toBe(false);
  // Refused: the session keeps nothing of it, and the rebuild must not replay its question either.
  const refused = await run(`let tried = 0;\ntry { ${append("bad")}; } catch (error) { tried = 1; println(String(error).split(":")[0]); }\ntried`);
  expect(refused.isError, refused.text).toBe(false);
  expect(refused.text).toContain("SecurityError");
  expect(questions).toHaveLength(2);
  expect(readFileSync(world.at("log.txt"), "utf8")).toBe("ok one\n");

  // Ends the sandbox: the next call finds it rebuilt from the two snippets above. It waits out
  // the time limit (Atomics.wait, for ever) rather than spinning a core through its 4 s.
  const timedOut = await run("Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);");
  expect(timedOut.isError).toBe(true);
  expect(timedOut.text).toContain("timed out");
  const after = await run("appended + tried");
  expect(after.isError, after.text).toBe(false);
  expect(after.text).toContain("2");
  // The replay asked nobody, and appended nothing.
  expect(questions).toHaveLength(2);
  expect(readFileSync(world.at("log.txt"), "utf8")).toBe("ok one\n");

  // A later append is asked about like the first one was: the replayed yes stands for nothing.
  const again = await run(append("ok two"));
  expect(again.isError, again.text).toBe(false);
  expect(questions).toHaveLength(3);
  expect(questions[2]).toContain('"ok two\\n"');
  expect(readFileSync(world.at("log.txt"), "utf8")).toBe("ok one\nok two\n");
});
