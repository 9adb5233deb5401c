// A request that reuses the id of a request still under way. The MCP SDK keys a request's abort
// controller by its id, so the second replaced the first's: the client's cancellation of the id
// stopped only the second, and the first ran on and wrote its file though the client had cancelled
// the id. The second is now answered with InvalidRequest and never runs; the cancellation reaches
// the first; once cancelled (or answered) the id may be used again.

import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { tempDirWithHome } from "../helpers.js";
import { rawClient } from "./raw-client.js";

interface Answer {
  id?: unknown;
  method?: string;
  params?: { data?: unknown };
  result?: { structuredContent?: { stdout: string; exitCode: number } };
  error?: { code: number; message: string };
}

describe("tacit serve and a request id already in use", () => {
  it("refuses the second request with InvalidRequest; a cancellation of the id stops the first; the id is free after", async () => {
    const { dir, env, cleanup } = tempDirWithHome("tacit-request-id-");
    const client = rawClient<Answer>(["--no-check", "--exec-timeout-ms", "50000"], dir, env);
    try {
      await client.initialize();
      const call = (id: unknown, code: string) => client.line({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "execute_typescript", arguments: { code } } });
      // The first waits (without using the CPU) before it writes; the second, sent with it, would print at once.
      const waits = 'Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 45_000);\nrequestFileSystem(".", (fs) => fs.access("first-ran").write("ran"));';
      client.send(call(7, waits) + call(7, 'requestFileSystem(".", (fs) => fs.access("second-ran").write("ran"));\nprint("second");'));
      const refused = await client.answer(7);
      expect(refused.error?.code).toBe(-32600);
      expect(refused.error?.message).toContain('request "tools/call" has the id 7, which a request of this client\'s still under way has, and nothing in it ran');
      expect(refused.error?.message).toContain("Send it again with an id not in use");
      client.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 7, reason: "the person stopped it" } });
      const logged = (): string[] => client.responses.filter((r) => r.method === "notifications/message").map((r) => String(r.params?.data));
      while (!logged().some((line) => line.startsWith("execute_typescript: ")) && client.child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(logged().find((line) => line.startsWith("execute_typescript: "))).toMatch(/^execute_typescript: cancelled \(exit 1\)/);
      expect(existsSync(path.join(dir, "first-ran"))).toBe(false);
      expect(existsSync(path.join(dir, "second-ran"))).toBe(false);
      // Cancelled, the id is free again (a string id "7" is another id all along).
      client.send(call(7, 'print("again")') + call("7", 'print("a string")'));
      while (client.responses.filter((r) => r.id === 7).length < 2 && client.child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(client.responses.filter((r) => r.id === 7)[1]?.result?.structuredContent?.stdout).toBe("again");
      expect((await client.answer("7")).result?.structuredContent?.stdout).toBe("a string");
    } finally {
      client.close();
      cleanup();
    }
  });
});

// tacit answers some requests itself, before the SDK or the check above sees them: a message longer
// than it reads, one the SDK cannot read ("params": null). Their answer went out by the request's id
// and freed it, though another request with that id was still under way: a third request with the id
// was taken, the SDK gave it the first's place, and the client's cancellation of the id stopped only
// that one; the first ran on and wrote its file.
describe("tacit serve and a request it answers itself, whose id is that of a request under way", () => {
  const refusedFirst: Record<string, (id: number) => string> = {
    "a message longer than tacit serve reads": (id) =>
      `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"execute_typescript","arguments":{"code":"${"x".repeat(11 * 1024 * 1024)}"}}}\n`,
    "a request the SDK cannot read": (id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":null}\n`,
  };
  for (const [how, refused] of Object.entries(refusedFirst)) {
    it(`${how}: the id stays under way, so a later request with it is refused and the cancellation stops the first`, async () => {
      const { dir, env, cleanup } = tempDirWithHome("tacit-request-id-answered-");
      const client = rawClient<Answer>(["--no-check", "--exec-timeout-ms", "50000"], dir, env);
      try {
        await client.initialize();
        const call = (id: unknown, code: string) => client.line({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "execute_typescript", arguments: { code } } });
        // It waits 10 s (without using the CPU), then writes: ample time to be cancelled.
        client.send(call(7, 'Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10_000);\nrequestFileSystem(".", (fs) => fs.access("first-ran").write("ran"));'));
        client.send(refused(7));
        expect((await client.answer(7)).error?.code).toBe(-32600);
        client.responses.splice(0);
        client.send(call(7, 'print("third")'));
        const third = await client.answer(7);
        expect(third.error?.message).toContain("which a request of this client's still under way has, and nothing in it ran");
        client.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 7, reason: "the person stopped it" } });
        // The first call's end, as the server logs it: cancelled, not run on to its write.
        const logged = (): string[] => client.responses.filter((r) => r.method === "notifications/message").map((r) => String(r.params?.data));
        const cancelled = (): boolean => logged().some((line) => line.startsWith("execute_typescript: cancelled (exit 1)"));
        const until = Date.now() + 20_000;
        while (!cancelled() && !existsSync(path.join(dir, "first-ran")) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
        expect(existsSync(path.join(dir, "first-ran"))).toBe(false);
        expect(cancelled()).toBe(true);
      } finally {
        client.close();
        cleanup();
      }
    }, 60_000);
  }
});
