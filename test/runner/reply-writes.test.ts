// Replies up to 16 K characters are written into the sandbox's input socket by the host itself,
// where the stream holds nothing; the rest, and whatever the socket does not take, go through the
// stream as before (runner/sandbox-input.ts, SocketInput.writtenAtOnce). Whichever way a reply
// goes, the sandbox must get every byte of it, in order: a reply the socket has no room for must
// go to the stream whole, not be dropped or overtaken.

import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import type { Socket } from "node:net";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sandboxInput } from "../../runner/sandbox-input.js";
import { runCli, tempDirWithHome } from "../helpers.js";

/** Characters of text around the 16 K direct-write bound, as the reply frame counts them (with its JSON around them). */
const SIZES = [1, 100, 16_000, 16_300, 16_384, 16_500, 40_000];

/** A text of `chars` characters, mixing one-, two-, three- and four-byte UTF-8 (a four-byte one is two characters). */
function textOf(chars: number, seed: number): string {
  const alphabet = ["a", "é", "€", "😀", "z", "ß", "\\", '"', "\u2028"];
  let text = "";
  for (let i = 0; text.length < chars; i++) text += alphabet[(i * 7 + seed) % alphabet.length]!;
  return text.slice(0, chars).replace(/[\ud800-\udbff]$/, "x");
}

describe("replies written into the sandbox's input", () => {
  const { dir, env, cleanup } = tempDirWithHome("tacit-reply-writes-");
  afterAll(cleanup);

  it("every reply reaches the script whole and in order, below, at and above the direct-write bound, in any encoding's width", async () => {
    const expected: string[] = [];
    for (let round = 0; round < 3; round++) {
      for (const [k, size] of SIZES.entries()) {
        const name = `r${round}-${k}.txt`;
        const text = textOf(size, round * 31 + k);
        writeFileSync(path.join(dir, name), text);
        expected.push(`${name} ${text.length} ${[...text].reduce((sum, c) => (sum * 31 + c.codePointAt(0)!) % 1_000_003, 7)}`);
      }
    }
    const names = expected.map((line) => line.split(" ")[0]!);
    writeFileSync(
      path.join(dir, "reads.ts"),
      `requestFileSystem(".", (fs) => {\n` +
        `  for (const name of ${JSON.stringify(names)}) {\n` +
        `    const text = fs.access(name).read();\n` +
        `    let sum = 7;\n` +
        `    for (const c of text) sum = (sum * 31 + c.codePointAt(0)) % 1000003;\n` +
        `    println(name + " " + text.length + " " + sum);\n` +
        `  }\n` +
        `});\n`,
    );
    const r = await runCli(["run", "--no-check", "reads.ts"], { cwd: dir, env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(expected.map((line) => `${line}\n`).join(""));
  });
});

describe("replies the sandbox has not read yet", () => {
  it("a reply the socket has no room for reaches the sandbox's end whole, after those before it and before those after", async () => {
    // The sandbox's end is not read until every reply is written: the socket fills, and the reply
    // that finds it full (Linux takes a message this small whole or not at all) is left to the
    // stream, with each reply after it. Read at last, the bytes must be every reply's, in order.
    // With such a reply dropped instead of left to the stream, the bytes differ.
    const input = sandboxInput();
    const child = spawn("sleep", ["30"], { stdio: "ignore" });
    let failure: string | null = null;
    input.attach(child, (detail) => (failure = detail));
    try {
      const replies = Array.from({ length: 24 }, (_, i) => `{"id":${i},"value":"${textOf(15_000 + i * 37, i).replace(/[\\"\u2028]/g, "x")}"}\n`);
      // The host's end is accepted a moment after the pair is made; writes before then are queued.
      const first = '{"id":-1}\n';
      await new Promise<void>((resolve) => input.write(first, resolve));
      const expected = Buffer.from(first + replies.join(""), "utf8");
      let done = 0;
      let heldByTheStream = false;
      for (const reply of replies) {
        input.write(reply, () => done++);
        // Once the socket is full the stream holds the rest: what this test is for.
        if (!input.allWritten) heldByTheStream = true;
      }
      expect(heldByTheStream).toBe(true);
      const sandboxEnd = input.stdio as Socket;
      const received: Buffer[] = [];
      let length = 0;
      await new Promise<void>((resolve, reject) => {
        sandboxEnd.on("data", (chunk: Buffer) => {
          received.push(chunk);
          length += chunk.length;
          if (length >= expected.length) resolve();
        });
        sandboxEnd.on("error", reject);
        sandboxEnd.resume();
      });
      expect(Buffer.concat(received).equals(expected)).toBe(true);
      await new Promise((resolve) => setImmediate(resolve));
      expect(done).toBe(replies.length);
      expect(input.allWritten).toBe(true);
      expect(failure).toBeNull();
    } finally {
      input.close();
      child.kill("SIGKILL");
    }
  });
});
