// The validator's refusals of attack scripts, through one real `tacit serve` for a whole test
// file or describe (each script its own execute_typescript call) rather than a `tacit run` each:
// a run cost a Node start (about 0.3 s of CPU) for a refusal that takes the validator
// milliseconds. The serve is started with an attack world of its own already made, so its
// environment holds that world's canary and points the npm and jsr registries at that world's
// listener, as each `tacit run` child's did; each check finds that world still untouched (its
// listener's count is of every call so far). Only the attack suites (suite.ts) use this. Not for
// a file that watches its own descendants (watchProcesses, expectNoneLeft): after each call the
// serve boots a warm spare sandbox, a descendant of the test process that such a watch would
// see start and stay. That a validator refusal makes `tacit run` exit 3 is
// test/cli/run.test.ts's ("3: a validation error").

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, expect } from "vitest";
import { connectServe, repoRoot, type ToolResult } from "../helpers.js";
import { type AttackWorld, createWorld, expectWorldUntouched } from "./fixtures.js";

export interface ServedValidator {
  /** The world the serve was started with: attack scripts checked through it name its paths and pids. */
  readonly world: AttackWorld;
  /** Sends `code` to the serve: it must be refused (exit 3) naming each of `rules`, and leave the world untouched. */
  expectRejected(code: string, rules: readonly string[]): Promise<void>;
}

/** Starts the serve (and its world) before the tests of the describe (or file) it is called in, and ends both after them. */
export function servedValidator(): ServedValidator {
  let world: AttackWorld | undefined;
  let client: Client | undefined;
  beforeAll(async () => {
    world = await createWorld();
    client = await connectServe([], repoRoot);
  });
  afterAll(async () => {
    await client?.close();
    await world?.cleanup();
  });
  const started = (): { world: AttackWorld; client: Client } => {
    if (world === undefined || client === undefined) throw new Error("the validator's tacit serve is not started (servedValidator() is called in a describe, used in its tests)");
    return { world, client };
  };
  return {
    get world() {
      return started().world;
    },
    async expectRejected(code, rules) {
      const { world, client } = started();
      const response = await client.callTool({ name: "execute_typescript", arguments: { code } });
      const result = response.structuredContent as unknown as ToolResult;
      expect(result.exitCode, result.error ?? "").toBe(3);
      expect(response.isError).toBe(true);
      for (const rule of rules) expect(result.error).toContain(`[${rule}]`);
      // Everything the client was given, its text items and its structured result alike.
      await expectWorldUntouched(world, { stdout: JSON.stringify(response.content) + result.stdout, stderr: result.error ?? "" });
    },
  };
}
