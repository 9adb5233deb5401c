// A path that changes while a person is asked about it: the script waits for the answer, but
// other agents need not. Here the MCP client's own concurrent call (an agent's parallel tool
// call) replaces docs/ with a link into deploy/ while the "person" reads the question about
// docs/prod.conf; the yes must not write deploy/prod.conf, which a rule always asks about.

import { mkdirSync, readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, expect, it } from "vitest";
import { realTempDir } from "../files/fixtures.js";
import { tacitBin } from "../helpers.js";
import { makeWorld } from "./fixtures.js";

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
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [tacitBin, "serve", "--config", config, "--exec-timeout-ms", "10000"],
    cwd: world.work,
    env: { ...(process.env as Record<string, string>), TACIT_HOME: world.home },
    stderr: "pipe",
  });
  const client = new Client({ name: "tacit-link-swap-test", version: "0.0.0" }, { capabilities: { elicitation: {} } });
  close = async () => {
    await client.close();
    temp.cleanup();
  };
  const questions: string[] = [];
  let swap = "";
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    questions.push((request.params as { message: string }).message);
    // While the person reads the question, the agent's other call swaps the directory.
    const other = await client.callTool({
      name: "execute_typescript",
      arguments: { code: `requestExecPermission(["rm", "ln"], (p) => { print(p.exec("rm", ["-r", "docs"]).exitCode, p.exec("ln", ["-s", "deploy", "docs"]).exitCode); });\n` },
    });
    swap = (other.content as Array<{ text: string }>).map((c) => c.text).join("");
    return { action: "accept", content: { approve: true } };
  });
  await client.connect(transport);

  const response = await client.callTool({
    name: "execute_typescript",
    arguments: { code: `requestFileSystem(".", (fs) => fs.access("docs/prod.conf").write("attacker\\n"));\nprintln("wrote");\n` },
  });
  expect(swap).toContain("0 0");
  expect(questions).toHaveLength(1);
  expect(questions[0]).toContain(`pattern: fs.write ${world.at("docs/prod.conf")}\n`);
  // The bad thing: the person's yes to docs/prod.conf wrote deploy/prod.conf.
  expect(readFileSync(world.at("deploy/prod.conf"), "utf8")).toBe("original\n");
  expect(response.isError).toBe(true);
  const text = (response.content as Array<{ text: string }>).map((c) => c.text).join("");
  expect(text).toContain(`the path changed while a person was asked (it now leads to ${world.at("deploy/prod.conf")})`);
});
