// An action's result is digested in the audit log as the script saw it (the README's word): a
// reply holding the LLM key reaches the sandbox with the key masked (host-secrets.ts), and its
// digest in the log is of that masked reply, not of the text with the key in it. Through the real
// CLI: a script reads a file that holds the key and prints what it got, as JSON; the log's
// action-result for that read carries the digest of exactly that JSON.

import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { runCli, unchecked } from "../helpers.js";
import { auditHome, readLines } from "./fixtures.js";

const KEY = "sk-test-7c1d2e3f4a5b6c7d8e9f0a1b";
const LLM_FLAGS = ["--llm-base-url", "http://127.0.0.1:9/v1", "--llm-model", "m"];

it("a read of a file holding the LLM key is digested as the sandbox received it: masked", async () => {
  const ctx = auditHome();
  try {
    writeFileSync(path.join(ctx.dir, "data.txt"), `key=${KEY}\n`);
    writeFileSync(path.join(ctx.dir, "script.ts"), `requestFileSystem(".", (fs) => println(JSON.stringify(fs.access("data.txt").read())));\n`);
    const log = path.join(ctx.dir, "audit.jsonl");
    const run = await runCli(unchecked(["run", "--quiet", "--audit-log", log, ...LLM_FLAGS, "script.ts"]), { cwd: ctx.dir, env: { ...ctx.env, TACIT_LLM_API_KEY: KEY } });
    expect(run.code, run.stderr).toBe(0);
    const seen = run.stdout.trim();
    // The script got the text with the key masked.
    expect(seen).not.toContain(KEY);
    expect(JSON.parse(seen) as string).toBe("key=[redacted]\n");
    const lines = readLines(log);
    const read = lines.find((line) => line.event.type === "action-requested" && line.event.kind === "FsRead");
    expect(read).toBeDefined();
    const result = lines.find((line) => line.event.type === "action-result" && line.event.action === read!.event.action);
    expect(result?.event).toMatchObject({ ok: true, digest: `sha256:${createHash("sha256").update(seen).digest("hex")}`, size: Buffer.byteLength(seen) });
  } finally {
    ctx.cleanup();
  }
}, 60_000);
