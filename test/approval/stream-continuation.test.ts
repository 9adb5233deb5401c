// A streamed read (forEachLine) is asked about at its first piece, and its later pieces go on
// without a question while its path leads where it did. Code with the raw protocol channel
// chooses the offsets it asks for: a later piece of an approved stream must be the next one,
// not a new read of the file started past its first byte, unasked, after a person said no.

import { readFileSync, realpathSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { defaultConfig } from "../../runner/config.js";
import type { Answer, ApprovalQuestion } from "../../runner/approval/askers.js";
import { createOversight } from "../../runner/approval/oversight.js";
import { runBypassed, tempDir } from "../helpers.js";
import { lit } from "./fixtures.js";

const CANARY = "CANARY-6d1f0b-the-log-after-the-person-said-no";

it("a piece past the first of a streamed read a person approved is not a new read: restarted at offset 1 after a no, it is asked about again", async () => {
  const { dir: temp, cleanup } = tempDir("tacit-stream-continuation-");
  try {
    const dir = realpathSync.native(temp);
    const log = path.join(dir, "log.txt");
    const out = path.join(dir, "out.txt");
    writeFileSync(log, "public line\n");
    const config = {
      ...defaultConfig,
      typeCheck: false,
      executionTimeoutMs: 20_000,
      library: { ...defaultConfig.library, allowedRoots: [dir] },
      policy: { rules: [{ action: "fs.read" as const, path: log, tier: "always-ask" as const }] },
    };
    // The person: yes to the first read; by the second question the log holds something else, and they say no.
    const questions: ApprovalQuestion[] = [];
    const oversight = await createOversight(config, dir, {
      ask: async (question): Promise<Answer> => {
        questions.push(question);
        if (questions.length === 1) return { answer: "yes", via: "test person", fromPerson: true };
        writeFileSync(log, `${CANARY}\n`);
        return { answer: "no", via: "test person", fromPerson: true };
      },
    });
    const code = `
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const buffer = new Uint8Array(65536);
let pending = "";
let id = 0;
const request = (action: unknown): any => {
  Deno.stdout.writeSync(encoder.encode(JSON.stringify({ type: "request", id: ++id, action }) + "\\n"));
  while (!pending.includes("\\n")) {
    const n = Deno.stdin.readSync(buffer);
    if (n === null) throw new Error("channel closed");
    pending += decoder.decode(buffer.subarray(0, n));
  }
  const line = pending.slice(0, pending.indexOf("\\n"));
  pending = pending.slice(pending.indexOf("\\n") + 1);
  return JSON.parse(line);
};
const scope = request({ kind: "FsOpenScope", root: ${lit(dir)} }).value.scope;
const first = request({ kind: "FsReadChunk", scope, path: ${lit(log)}, offset: 0 });
const again = request({ kind: "FsReadChunk", scope, path: ${lit(log)}, offset: 0 });
const restarted = request({ kind: "FsReadChunk", scope, path: ${lit(log)}, offset: 1 });
request({ kind: "FsWrite", scope, path: ${lit(out)}, content: JSON.stringify({ first, again, restarted }), append: false });
`;
    await runBypassed(code, { config, keepRuntime: true, oversight });
    const replies = JSON.parse(readFileSync(out, "utf8")) as Record<string, { value?: { base64: string } }>;
    const shown = Object.values(replies).map((reply) => (reply.value ? Buffer.from(reply.value.base64, "base64").toString("utf8") : JSON.stringify(reply)));
    // The approved read got the public line; the bad thing: a read started at offset 1 got the log as it is now, unasked.
    expect(shown[0]).toBe("public line\n");
    for (const text of shown) expect(text).not.toContain(CANARY.slice(1));
    expect(questions.map((question) => question.pattern)).toEqual([`fs.read ${log}`, `fs.read ${log}`, `fs.read ${log}`]);
  } finally {
    cleanup();
  }
}, 60_000);
