// A path that changes while a person is asked about it: the script waits for the answer, but
// other agents need not. Here the MCP client's own concurrent call (an agent's parallel tool
// call) replaces docs/ with a link into deploy/ while the "person" reads the question about
// docs/prod.conf; the yes must not write deploy/prod.conf, which a rule always asks about.

import { mkdirSync, readFileSync } from "node:fs";
import { afterEach, expect, it } from "vitest";
import { realTempDir } from "../files/fixtures.js";
import { makeWorld, serveSwappingWhileAsked, serveAsking, serveWorld } from "./fixtures.js";

let close: (() => Promise<void>) | null = null;
afterEach(async () => {
  await close?.();
  close = null;
});

it("a path swapped for a link while a person is asked is refused after the yes, and nothing is written through it", async () => {
  const temp = realTempDir("tacit-link-swap-");
  const world = makeWorld(temp.dir);
  mkdirSync(world.at("docs"));
  world.file("deploy/prod.conf", "original\n");
  const config = world.config(
    [
      { action: "fs.write", tier: "approve-once" },
      { action: "fs.write", path: `${world.work}/deploy/**`, tier: "always-ask" },
    ],
    { libraryConfig: { commandPermissions: ["ln", "rm"] } },
  );
  // While the person reads the question, the agent's other call swaps the directory.
  const { client, questions, swapOutput } = await serveSwappingWhileAsked(
    world,
    config,
    `requestExecPermission(["rm", "ln"], (p) => { print(p.exec("rm", ["-r", "docs"]).exitCode, p.exec("ln", ["-s", "deploy", "docs"]).exitCode); });\n`,
  );
  close = async () => {
    await client.close();
    temp.cleanup();
  };

  const response = await client.callTool({
    name: "execute_typescript",
    arguments: { code: `requestFileSystem(".", (fs) => fs.access("docs/prod.conf").write("attacker\\n"));\nprintln("wrote");\n` },
  });
  expect(swapOutput()).toContain("0 0");
  expect(questions).toHaveLength(1);
  expect(questions[0]).toContain(`pattern: fs.write ${world.at("docs/prod.conf")}\n`);
  // The bad thing: the person's yes to docs/prod.conf wrote deploy/prod.conf.
  expect(readFileSync(world.at("deploy/prod.conf"), "utf8")).toBe("original\n");
  expect(response.isError).toBe(true);
  const text = (response.content as Array<{ text: string }>).map((c) => c.text).join("");
  expect(text).toContain(`the path changed while a person was asked (it now leads elsewhere inside this file system scope, to ${world.at("deploy/prod.conf")})`);
});

// A streamed read (forEachLine) is asked about once, at its first piece; later pieces of the
// same read are not asked about again. A security review swapped the path for a link between
// pieces: the person approved reading docs/notes.txt, the script then replaced docs/ with a link
// to deploy/ (ln, in the callback that received the first piece), and the next pieces came from
// deploy/notes.txt, which a rule always asks about, with no question (a raw request could name
// offset 1 and read all of the other file but its first byte). A piece whose path leads elsewhere
// than when the person was asked is refused.
it("a streamed read whose path is swapped for a link between pieces is refused, and nothing of the other file is read", async () => {
  const temp = realTempDir("tacit-stream-swap-");
  const world = makeWorld(temp.dir);
  const canary = `canary-${crypto.randomUUID()}`;
  const filler = "harmless line\n".repeat(Math.ceil((1.5 * 1024 * 1024) / 14));
  world.file("docs/notes.txt", filler);
  // Past the first piece (1 MiB), so that only a later piece could read it.
  world.file("deploy/notes.txt", `${filler}SECRET ${canary}\n`);
  const config = world.config(
    [
      { action: "fs.read", tier: "always-ask" },
      { action: "fs.read", path: `${world.work}/deploy/**`, tier: "always-ask" },
    ],
    { libraryConfig: { commandPermissions: ["ln", "rm"] } },
  );
  // The person approves reading docs/notes.txt, and nothing else.
  const { client, questions } = await serveAsking(world, ["--config", config, "--exec-timeout-ms", "20000"], (message) => `${message}\n`.includes(`pattern: fs.read ${world.at("docs/notes.txt")}\n`));
  close = async () => {
    await client.close();
    temp.cleanup();
  };

  const response = await client.callTool({
    name: "execute_typescript",
    arguments: {
      code: `requestFileSystem(".", (fs) => requestExecPermission(["rm", "ln"], (p) => {
  let swapped = false;
  const found: string[] = [];
  try {
    fs.access("docs/notes.txt").forEachLine((line) => {
      if (!swapped) {
        swapped = true;
        println("swap", p.exec("rm", ["-r", "docs"]).exitCode, p.exec("ln", ["-s", "deploy", "docs"]).exitCode);
      }
      if (line.startsWith("SECRET")) found.push(line);
    });
  } catch (error) {
    println("refused:", (error as Error).message);
  }
  println("found:", found.join(" | "));
}));
`,
    },
  });
  const text = (response.content as Array<{ text: string }>).map((c) => c.text).join("");
  expect(text, text).toContain("swap 0 0");
  expect(questions.length, questions.join("\n---\n")).toBeGreaterThanOrEqual(1);
  expect(`${questions[0]}\n`).toContain(`pattern: fs.read ${world.at("docs/notes.txt")}\n`);
  // The bad thing: the rest of the stream came from deploy/notes.txt, asked about by no one.
  expect(text).not.toContain(canary);
  expect(text).toContain(`the path changed since a person approved reading it (it now leads elsewhere inside this file system scope, to ${world.at("deploy/notes.txt")})`);
});

it("a streamed read a person approved, its path unchanged, goes on to its end with one question", async () => {
  const temp = realTempDir("tacit-stream-kept-");
  const world = makeWorld(temp.dir);
  const lines = Math.ceil((2.5 * 1024 * 1024) / 14);
  world.file("docs/notes.txt", "harmless line\n".repeat(lines));
  const config = world.config([{ action: "fs.read", tier: "always-ask" }]);
  let questions = 0;
  const client = await serveWorld(world, ["--config", config], {
    onElicit: () => {
      questions++;
      return { action: "accept", content: { approve: true } };
    },
  });
  close = async () => {
    await client.close();
    temp.cleanup();
  };
  const response = await client.callTool({
    name: "execute_typescript",
    arguments: { code: `requestFileSystem(".", (fs) => { let n = 0; fs.access("docs/notes.txt").forEachLine(() => n++); println(n); });\n` },
  });
  const text = (response.content as Array<{ text: string }>).map((c) => c.text).join("");
  expect(response.isError, text).toBeFalsy();
  expect(text).toContain(`${lines}\n`);
  expect(questions).toBe(1);
});
