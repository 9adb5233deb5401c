// A person's answer is a decision the audit log must hold: an approve-once yes is also kept in
// tacit's home (approvals.json), where the next run finds it and acts unasked. Before, a person
// was asked while the log could no longer take the answer (the log moved away since the server
// opened it, or while the question was open): the client's user was asked, said yes, and the yes
// was remembered; then the log was found replaced, the write refused, and the server failed
// closed. The grant outlived the failure, recorded in no log: the next tacit, with a log of its
// own, wrote the file unasked ("allow via remembered"), and no log said who granted it. Now the
// log's file is checked before a person is asked and again before a yes is kept.

import { existsSync, renameSync } from "node:fs";
import path from "node:path";
import type { ElicitRequest, ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { realTempDir } from "../files/fixtures.js";
import { makeWorld, serveWorld, storedApprovals } from "../approval/fixtures.js";

/** A tacit serve whose policy asks about writes, its log moved away before the call (`before`) or while its question is open; its user says yes. */
async function askedWithLogMoved(when: "before the call" | "while asked"): Promise<void> {
  const temp = realTempDir("tacit-audit-asked-");
  const world = makeWorld(temp.dir);
  const log = path.join(world.root, "logs", "audit.jsonl");
  const moveLog = (): void => renameSync(log, `${log}.1`);
  const config = world.config([{ action: "fs.write", tier: "approve-once" }], { auditLog: log });
  const asked: ElicitRequest[] = [];
  let stderr = "";
  const client = await serveWorld(world, ["--config", config], {
    onStderr: (text) => (stderr += text),
    onElicit: (request: ElicitRequest): ElicitResult => {
      asked.push(request);
      if (when === "while asked") moveLog();
      return { action: "accept", content: { approve: true } };
    },
  });
  try {
    // The server opened its log as it started.
    expect(existsSync(log)).toBe(true);
    if (when === "before the call") moveLog();
    const response = await client.callTool({
      name: "execute_typescript",
      arguments: { code: `requestFileSystem(".", (fs) => fs.access("granted.txt").write("v"));\nprintln("wrote");\n` },
    });
    const result = response.structuredContent as { stdout: string; exitCode: number; error: string | null };
    expect(result.exitCode).toBe(2);
    expect(result.error).toContain("tacit could not write its audit log");
    expect(asked).toHaveLength(when === "before the call" ? 0 : 1);
    expect(storedApprovals(world)).toBeNull();
    expect(world.exists("granted.txt")).toBe(false);
  } finally {
    await client.close();
    temp.cleanup();
  }
  expect(stderr).toContain(`the audit log ${log} was replaced while this tacit was writing it`);
}

describe.concurrent("a person's yes to an action while the audit log cannot take it", () => {
  it("log moved away before the call: nobody is asked, nothing is remembered or written, and the call says the log failed", async () => {
    await askedWithLogMoved("before the call");
  }, 30_000);
  it("log moved away while the question was open: the yes is not remembered, nothing written", async () => {
    await askedWithLogMoved("while asked");
  }, 30_000);
});
