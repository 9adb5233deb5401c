// A tools/list whose cursor is no string (an object, a number): the SDK answered InternalError
// (-32603), as if the server had failed, with its validator's issues as a multi-line JSON dump for
// a message. It is now InvalidParams, one line saying what is wrong and what to send; a correct
// tools/list after it is answered as ever.

import { describe, expect, it } from "vitest";
import { tempDirWithHome } from "../helpers.js";
import { rawClient } from "./raw-client.js";

interface Answer {
  id?: unknown;
  result?: { tools?: { name: string }[] };
  error?: { code: number; message: string };
}

describe("tacit serve and a malformed tools/list", () => {
  it("answers a cursor that is no string with one line of InvalidParams saying what to send, then lists the tools", async () => {
    const { dir, env, cleanup } = tempDirWithHome("tacit-list-tools-malformed-");
    const client = rawClient<Answer>(["--no-check"], dir, env);
    try {
      await client.initialize();
      client.send({ jsonrpc: "2.0", id: "object", method: "tools/list", params: { cursor: { page: 2 } } });
      client.send({ jsonrpc: "2.0", id: "number", method: "tools/list", params: { cursor: 7 } });
      for (const id of ["object", "number"]) {
        const answer = await client.answer(id);
        expect(answer.error?.code, id).toBe(-32602);
        expect(answer.error?.message, id).toMatch(/^tools\/list: /);
        expect(answer.error?.message, id).toContain("cursor");
        expect(answer.error?.message, id).toContain("no params, or a cursor string");
        // One line of prose, no validator dump.
        expect(answer.error?.message, id).not.toContain("\n");
      }
      client.send({ jsonrpc: "2.0", id: "plain", method: "tools/list", params: {} });
      client.send({ jsonrpc: "2.0", id: "bare", method: "tools/list" });
      for (const id of ["plain", "bare"]) expect((await client.answer(id)).result?.tools?.map((tool) => tool.name), id).toContain("execute_typescript");
    } finally {
      client.close();
      cleanup();
    }
  }, 30_000);
});
