// What the person behind an MCP client is shown when tacit asks (elicitation): the question is
// built from strings the script chose, and must say what will really happen. Driven by the real
// SDK Client against `tacit serve`.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { type ElicitRequest, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { realTempDir } from "../files/fixtures.js";
import { tacitBin } from "../helpers.js";
import { makeWorld, type World } from "./fixtures.js";

let world: World;
let cleanup: () => void;
let client: Client;
let asked: ElicitRequest[] = [];

beforeAll(async () => {
  const temp = realTempDir("tacit-question-");
  cleanup = temp.cleanup;
  world = makeWorld(temp.dir);
  const config = world.config([{ action: "net", tier: "always-ask" }], {
    libraryConfig: { networkPermissions: ["*.pages.example"] },
  });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [tacitBin, "serve", "--config", config, "--exec-timeout-ms", "10000"],
    cwd: world.work,
    env: { ...(process.env as Record<string, string>), TACIT_HOME: world.home },
    stderr: "pipe",
  });
  client = new Client({ name: "tacit-question-test", version: "0.0.0" }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request);
    return { action: "decline" };
  });
  await client.connect(transport);
});

afterAll(async () => {
  await client?.close();
  cleanup?.();
});

beforeEach(() => {
  asked = [];
});

async function questionFor(url: string): Promise<string> {
  const code = `requestNetwork(["*.pages.example"], (net) => net.httpPost(${JSON.stringify(url)}, "report"));\n`;
  const response = await client.callTool({ name: "execute_typescript", arguments: { code } });
  expect(response.isError).toBe(true);
  expect(asked, JSON.stringify(response.content)).toHaveLength(1);
  return (asked[0]!.params as { message: string }).message;
}

describe("a URL in an approval question", () => {
  // The operator allows a multi-tenant domain (anyone can have a name under it: pages, buckets,
  // tunnels) and asks a person about every request; the script spells the URL so that the
  // question reads as the team's own site while the request goes to another name.
  it("a host in another script (a homoglyph) is shown in the form the request uses", async () => {
    // Cyrillic "а" (U+0430) in place of the Latin "a": the request goes to xn--mytem-7ve.pages.example.
    const message = await questionFor("https://myte\u0430m.pages.example/upload");
    expect(message.split("\n")[1]).toBe("  POST https://xn--mytem-7ve.pages.example/upload");
    expect(message).not.toContain("\u0430");
  });

  it("a division slash cannot make part of the host read as the path", async () => {
    // "∕" (U+2215) reads as "/": the script's spelling reads as a POST to a host "docs"; the URL
    // parser keeps it in the host, which becomes xn--docsevil-1f7d.pages.example.
    const message = await questionFor("https://docs\u2215evil.pages.example/upload");
    expect(message.split("\n")[1]).toBe("  POST https://xn--docsevil-1f7d.pages.example/upload");
    expect(message).not.toContain("\u2215");
  });
});
