// A long call through the real MCP client that asks for progress, then is cancelled: shared
// by the one-shot and the session tests.

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { expect } from "vitest";

/**
 * Calls `name` with code that never ends, waits 1.6 s, cancels; asserts progress came and the call ended.
 * The code blocks (Atomics.wait, for ever) rather than spins: to the host a call that never ends all the
 * same (its progress comes from the host's own timer, and a cancellation kills the sandbox, which cannot
 * answer either way), without a core spun through the 1.6 s.
 */
export async function expectProgressThenCancel(client: Client, name: string, args: Record<string, unknown>): Promise<void> {
  const progress: number[] = [];
  const controller = new AbortController();
  const call = client.callTool({ name, arguments: { ...args, code: "Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);" } }, undefined, {
    signal: controller.signal,
    onprogress: (p) => progress.push(p.progress),
    timeout: 10_000,
  });
  await new Promise((resolve) => setTimeout(resolve, 1600));
  controller.abort("enough");
  await expect(call).rejects.toThrow();
  expect(progress.length).toBeGreaterThanOrEqual(1);
}
