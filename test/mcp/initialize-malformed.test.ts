// An initialize whose params are not MCP's (no protocolVersion, capabilities that are no object,
// no clientInfo): the SDK answered InternalError (-32603), as if the server had failed, with its
// validator's issues as a multi-line JSON dump for a message. It is now InvalidParams saying what
// is wrong and what initialize takes; nothing is set up by it, and a correct initialize after it
// is answered as ever.

import { describe, expect, it } from "vitest";
import { tempDirWithHome } from "../helpers.js";
import { rawClient } from "./raw-client.js";

interface Answer {
  id?: unknown;
  result?: { protocolVersion?: string; serverInfo?: { name: string } };
  error?: { code: number; message: string };
}

describe("tacit serve and a malformed initialize", () => {
  it("answers it with InvalidParams that names each problem and what initialize takes, then takes a correct one", async () => {
    const { dir, env, cleanup } = tempDirWithHome("tacit-initialize-malformed-");
    const client = rawClient<Answer>(["--no-check"], dir, env);
    try {
      client.send({ jsonrpc: "2.0", id: "bare", method: "initialize", params: {} });
      client.send({ jsonrpc: "2.0", id: "mistyped", method: "initialize", params: { protocolVersion: 2025, capabilities: "all", clientInfo: { name: "t", version: "0" } } });
      const bare = await client.answer("bare");
      expect(bare.error?.code).toBe(-32602);
      expect(bare.error?.message).toMatch(/^initialize: /);
      expect(bare.error?.message).toContain("protocolVersion");
      expect(bare.error?.message).toContain("clientInfo");
      expect(bare.error?.message).toContain('It takes {"protocolVersion": the MCP version the client speaks, such as "2025-06-18"');
      // One line of prose, no validator dump.
      expect(bare.error?.message).not.toContain("\n");
      const mistyped = await client.answer("mistyped");
      expect(mistyped.error?.code).toBe(-32602);
      expect(mistyped.error?.message).toMatch(/protocolVersion.*string/);
      expect(mistyped.error?.message).toMatch(/capabilities.*object/);
      // The server goes on: a correct initialize is answered.
      await client.initialize();
      expect(client.responses.find((r) => r.id === 1)?.result?.serverInfo?.name).toBe("tacit");
    } finally {
      client.close();
      cleanup();
    }
  });
});
