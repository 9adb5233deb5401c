// `tacit serve --config policy.json` asks the client's user through MCP elicitation, driven
// here by the real SDK Client: a client that declares elicitation is asked (the question names
// the pattern) and its answer decides; a client that does not is refused, saying why.

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { ElicitRequest, ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { realTempDir } from "../files/fixtures.js";
import { printable } from "../../runner/printable.js";
import { approvals, makeWorld, serveWorld, storedApprovals, type World } from "./fixtures.js";

interface Connection {
  client: Client;
  stderr: () => string;
}

let world: World;
let cleanup: () => void;
/** What the eliciting client's "person" answers next, and every question it was asked. */
let answer: (request: ElicitRequest) => ElicitResult | Promise<ElicitResult>;
let asked: ElicitRequest[] = [];
let eliciting: Connection;
let plain: Connection;

async function connect(config: string, elicitation: boolean): Promise<Connection> {
  let stderr = "";
  const client = await serveWorld(world, ["--config", config, "--exec-timeout-ms", "10000"], {
    onStderr: (text) => (stderr += text),
    ...(elicitation
      ? {
          onElicit: (request: ElicitRequest) => {
            asked.push(request);
            return answer(request);
          },
        }
      : {}),
  });
  return { client, stderr: () => stderr };
}

beforeAll(async () => {
  const temp = realTempDir("tacit-mcp-approval-");
  cleanup = temp.cleanup;
  world = makeWorld(temp.dir);
  const config = world.config(
    [
      { action: "fs.delete", tier: "always-ask" },
      { action: "fs.write", tier: "approve-once" },
    ],
    { sessionEnabled: true },
  );
  [eliciting, plain] = await Promise.all([connect(config, true), connect(config, false)]);
});

afterAll(async () => {
  await Promise.all([eliciting?.client.close(), plain?.client.close()]);
  cleanup?.();
});

beforeEach(() => {
  asked = [];
  answer = () => ({ action: "decline" });
});

interface RunResult {
  stdout: string;
  error: string | null;
  exitCode: number;
}

async function execute(connection: Connection, code: string): Promise<{ isError: boolean; text: string; result: RunResult }> {
  const response = await connection.client.callTool({ name: "execute_typescript", arguments: { code } });
  const content = response.content as Array<{ type: string; text: string }>;
  return { isError: response.isError === true, text: content.map((c) => c.text).join("\n"), result: response.structuredContent as unknown as RunResult };
}

const deleting = (name: string): string => `requestFileSystem(".", (fs) => fs.access(${JSON.stringify(name)}).delete());\nprintln("deleted");\n`;

describe("a client that declares elicitation", () => {
  it("accept with approve: true → the action runs; the question names the pattern and the tier", async () => {
    const target = world.file("yes.txt");
    answer = () => ({ action: "accept", content: { approve: true } });
    const { isError, result } = await execute(eliciting, deleting("yes.txt"));
    expect(isError).toBe(false);
    expect(result.stdout).toBe("deleted\n");
    expect(world.exists("yes.txt")).toBe(false);
    expect(asked).toHaveLength(1);
    const params = asked[0]!.params as { message: string; requestedSchema: { properties: Record<string, unknown> } };
    expect(params.message).toContain(`pattern: fs.delete ${target}`);
    expect(params.message).toContain("(always-ask)");
    expect(params.requestedSchema.properties).toHaveProperty("approve");
  });

  it("accept with approve: false → an isError result with the refusal; the file stays", async () => {
    const target = world.file("no.txt");
    answer = () => ({ action: "accept", content: { approve: false } });
    const { isError, result, text } = await execute(eliciting, deleting("no.txt"));
    expect(isError).toBe(true);
    expect(result.exitCode).toBe(1);
    expect(result.error).toContain(`fs.delete ${target}: refused: a person was asked (elicitation (accept)) and did not approve it`);
    expect(text).toContain("refused");
    expect(result.stdout).toBe("");
    expect(asked).toHaveLength(1);
    expect(world.exists("no.txt")).toBe(true);
  });

  it("decline, and cancel → refused; the file stays", async () => {
    world.file("declined.txt");
    answer = () => ({ action: "decline" });
    const declined = await execute(eliciting, deleting("declined.txt"));
    expect(declined.isError).toBe(true);
    expect(declined.result.error).toContain("elicitation (decline)");
    expect(world.exists("declined.txt")).toBe(true);

    answer = () => ({ action: "cancel" });
    const cancelled = await execute(eliciting, deleting("declined.txt"));
    expect(cancelled.isError).toBe(true);
    expect(cancelled.result.error).toContain("elicitation (cancel)");
    expect(world.exists("declined.txt")).toBe(true);
  });

  it("a client whose handler fails → refused, saying asking failed; the file stays", async () => {
    world.file("broken.txt");
    answer = () => {
      throw new Error("the person's window crashed");
    };
    const { isError, result } = await execute(eliciting, deleting("broken.txt"));
    expect(isError).toBe(true);
    expect(result.error).toContain("asking the user through the MCP client failed (the client answered the question with an error instead of the user's answer: ");
    expect(result.error).not.toContain("where it can ask");
    expect(world.exists("broken.txt")).toBe(true);
  });

  it("approve-once: an accepted yes is remembered (via elicitation) and not asked again", async () => {
    const target = world.at("written.txt");
    answer = () => ({ action: "accept", content: { approve: true } });
    const write = `requestFileSystem(".", (fs) => fs.access("written.txt").write("v"));\nprintln("wrote");\n`;
    const first = await execute(eliciting, write);
    expect(first.isError).toBe(false);
    expect(asked).toHaveLength(1);
    expect((asked[0]!.params as { message: string }).message).toContain(`pattern: fs.write ${target}`);
    expect(storedApprovals(world)).toContainEqual(expect.objectContaining({ pattern: `fs.write ${target}`, via: "elicitation (accept)" }));

    answer = () => ({ action: "decline" });
    const second = await execute(eliciting, write);
    expect(second.isError).toBe(false);
    expect(second.result.stdout).toBe("wrote\n");
    expect(asked).toHaveLength(1);
  });

  it("a remembered pattern holding control characters is listed escaped, and revoked as listed", async () => {
    // The script chooses the file name: it wipes its own line and fakes another.
    const name = "notes\u001b[2K\rexec git push *\tin elsewhere\texpired.txt";
    answer = () => ({ action: "accept", content: { approve: true } });
    const written = await execute(eliciting, `requestFileSystem(".", (fs) => fs.access(${JSON.stringify(name)}).write("v"));\n`);
    expect(written.isError, written.text).toBe(false);
    const pattern = `fs.write ${world.at(name)}`;
    expect(storedApprovals(world)).toContainEqual(expect.objectContaining({ pattern }));

    const list = await approvals(world, ["list"]);
    expect(list.code, list.all).toBe(0);
    expect(list.stdout).not.toMatch(/[\u001b\r]/);
    const shown = printable(pattern);
    expect(list.stdout.split("\n")).toContainEqual(expect.stringMatching(new RegExp(`^${shown.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\tin `)));

    const revoked = await approvals(world, ["revoke", shown]);
    expect(revoked.code, revoked.all).toBe(0);
    expect(revoked.stderr).not.toMatch(/[\u001b\r]/);
    expect(storedApprovals(world)?.map((a) => a.pattern)).not.toContain(pattern);
  });

  it("a REPL session asks the same way", async () => {
    world.file("session.txt");
    const created = await eliciting.client.callTool({ name: "create_repl_session", arguments: {} });
    const sessionId = (created.structuredContent as { session_id: string }).session_id;
    try {
      answer = () => ({ action: "accept", content: { approve: false } });
      const refused = await eliciting.client.callTool({ name: "execute_in_session", arguments: { session_id: sessionId, code: deleting("session.txt") } });
      expect(refused.isError).toBe(true);
      expect(world.exists("session.txt")).toBe(true);
      answer = () => ({ action: "accept", content: { approve: true } });
      const allowed = await eliciting.client.callTool({ name: "execute_in_session", arguments: { session_id: sessionId, code: deleting("session.txt") } });
      expect(allowed.isError).toBeFalsy();
      expect(world.exists("session.txt")).toBe(false);
      expect(asked).toHaveLength(2);
    } finally {
      await eliciting.client.callTool({ name: "delete_repl_session", arguments: { session_id: sessionId } });
    }
  });
});

describe("a client without elicitation", () => {
  it("is refused: the message says the client does not support elicitation, and how to pre-approve", async () => {
    const target = world.file("plain.txt");
    const { isError, result } = await execute(plain, deleting("plain.txt"));
    expect(isError).toBe(true);
    expect(result.error).toContain(`fs.delete ${target}: refused`);
    expect(result.error).toContain("the MCP client does not support elicitation");
    expect(world.exists("plain.txt")).toBe(true);
    // The other client's handler was never involved.
    expect(asked).toHaveLength(0);

    const write = await execute(plain, `requestFileSystem(".", (fs) => fs.access("plain-new.txt").write("v"));\n`);
    expect(write.isError).toBe(true);
    expect(write.result.error).toContain(`tacit approvals grant 'fs.write ${world.at("plain-new.txt")}'`);
    expect(world.exists("plain-new.txt")).toBe(false);
    expect(plain.stderr()).not.toContain("Error:");
  });
});
