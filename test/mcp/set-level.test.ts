// logging/setLevel with a level that is none of MCP's: the SDK answered InternalError (-32603),
// as if the server had failed, with its validator's issues as raw JSON. It is now InvalidParams
// naming the level given and the levels there are, and the server goes on.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { EmptyResultSchema, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectServe } from "../helpers.js";

let dir: string;
let client: Client;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "tacit-set-level-"));
  client = await connectServe(["--no-check"], dir, { env: { TACIT_HOME: path.join(dir, "home") } });
});
afterAll(async () => {
  await client.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("logging/setLevel", () => {
  it("refuses an unknown level with InvalidParams naming it and the levels there are; a known one is taken", async () => {
    const refused = await client.setLoggingLevel("loud" as never).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(McpError);
    expect((refused as McpError).code).toBe(ErrorCode.InvalidParams);
    expect((refused as McpError).message).toContain('logging/setLevel: the level is "loud"; it takes one of debug, info, notice, warning, error, critical, alert, emergency');
    const missing = await client.request({ method: "logging/setLevel", params: {} } as never, EmptyResultSchema).then(
      () => null,
      (error: unknown) => error,
    );
    expect((missing as McpError).code).toBe(ErrorCode.InvalidParams);
    expect((missing as McpError).message).toContain("the level is missing");
    await expect(client.setLoggingLevel("warning")).resolves.toBeDefined();
  }, 60_000);
});
