// readClassified of a classified file that is not UTF-8 (a .p12 key store) is refused in a
// tacit serve session as in a run, while a classified write an earlier snippet left pending
// is still under way: a decoded copy held other bytes (each invalid sequence as U+FFFD). A
// file that write fills is still read once it has landed, across snippets.

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { connectServe, createSession, fileOnce, runInSession, tempDir } from "../helpers.js";
import { makeCanary } from "../files/fixtures.js";

const canary = makeCanary();
const keyStore = Buffer.concat([Buffer.from([0x30, 0x82, 0x0a, 0x51, 0xff, 0xfe, 0x80]), Buffer.from(canary, "latin1"), Buffer.from([0xc3, 0x28, 0xf0, 0x90])]);
let dir: string;
let client: Client;
let cleanup: () => void;

beforeAll(async () => {
  const temp = tempDir("tacit-mcp-classified-binary-");
  cleanup = temp.cleanup;
  dir = path.join(temp.dir, "work");
  mkdirSync(dir);
  writeFileSync(path.join(dir, "store.p12"), keyStore);
  writeFileSync(path.join(dir, ".env"), `TOKEN=${canary}`);
  client = await connectServe(["--no-check", "--exec-timeout-ms", "10000"], dir);
}, 60_000);
afterAll(async () => {
  await client.close();
  cleanup();
});

describe("a session's readClassified of a key store", () => {
  it("is refused, naming the path, behind a classified write an earlier snippet left pending; that write's file is read once it landed", async () => {
    const session = await createSession(client);
    const first = await runInSession(
      client,
      session,
      `requestFileSystem(".", (fs) => {
  fs.writeClassified(".env.slow", fs.readClassified(".env").map((v) => { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1500); return v + "!"; }));
  println("first");
});`,
    );
    expect(first).toMatchObject({ exitCode: 0, stdout: "first\n" });
    const second = await runInSession(
      client,
      session,
      `requestFileSystem(".", (fs) => {
  try {
    fs.writeClassified("copy.p12", fs.readClassified("store.p12"));
    println("copied");
  } catch (e) {
    println("refused:", e instanceof SecurityError ? "SecurityError" : (e as Error).name, (e as Error).message);
  }
  fs.writeClassified(".env.copy", fs.readClassified(".env.slow"));
  println("second");
});`,
    );
    expect(second.exitCode, second.error ?? "").toBe(0);
    expect(second.stdout).toBe(
      `refused: Error ${path.join(dir, "store.p12")}: is not UTF-8 text (a binary file, such as a key store?); readClassified() reads a classified ` +
        "file as text and would have changed its bytes, so nothing was read. tacit cannot carry a binary classified file's bytes as a Classified " +
        "value: copy or move it with a command outside tacit.\nsecond\n",
    );
    expect(first.stdout + second.stdout + (second.error ?? "")).not.toContain(canary);
    expect(await fileOnce(path.join(dir, ".env.copy"), (text) => text !== "")).toBe(`TOKEN=${canary}!`);
    expect(readFileSync(path.join(dir, "store.p12")).equals(keyStore)).toBe(true);
    expect(() => readFileSync(path.join(dir, "copy.p12"))).toThrow(/ENOENT/);
  }, 60_000);
});
