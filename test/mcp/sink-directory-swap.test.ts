// tacit serve makes a secure output sink for each session and one-shot call, each opening the file
// at its first print. A directory on the way to it swapped for a link between two calls: the
// second call's sink opened the file by its path, followed the link, and created it with the
// plaintext in the directory the link's maker chose. The directory is now the one the server first
// found (runner/secure-sink.ts, sinkDirectories), for every later sink too.

import { mkdirSync, renameSync, symlinkSync } from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterEach, beforeEach, expect, it } from "vitest";
import { connectServe, fileOnce } from "../helpers.js";
import { filesUnder, makeCanary, realTempDir } from "../files/fixtures.js";

let base: string;
let cleanup: () => void;
let client: Client | undefined;

beforeEach(() => {
  ({ dir: base, cleanup } = realTempDir("tacit-serve-sink-swap-"));
});
afterEach(async () => {
  await client?.close();
  cleanup();
});

it("a later call's sink is not opened where a link, put on the way since the first, leads", async () => {
  const work = path.join(base, "work");
  const a = path.join(base, "a");
  const out = path.join(a, "out");
  const elsewhere = path.join(base, "elsewhere");
  mkdirSync(work);
  mkdirSync(out, { recursive: true, mode: 0o700 });
  mkdirSync(path.join(elsewhere, "out"), { recursive: true });
  const sink = path.join(out, "secure.log");
  let stderr = "";
  let refused: () => void = () => undefined;
  const refusal = new Promise<void>((resolve) => (refused = resolve));
  client = await connectServe(["--no-check", "--secure-output", sink], work, {
    onStderr: (text) => {
      stderr += text;
      if (stderr.includes("is no longer where tacit first found its directory")) refused();
    },
  });
  const canary = makeCanary();
  const call = (code: string) => client!.callTool({ name: "execute_typescript", arguments: { code } }, undefined, { timeout: 60_000 });
  await call('println("first", classify("first-value"));');
  await fileOnce(sink, (text) => text.includes("first-value"));
  renameSync(a, `${a}-old`);
  symlinkSync(elsewhere, a);
  await call(`println("second", classify(${JSON.stringify(canary)}));`);
  // The sink says so on the server's stderr when it refuses; then nothing more is coming for that
  // call. Or it writes where the link leads (as it did), which fails below.
  await Promise.race([refusal, fileOnce(path.join(elsewhere, "out", "secure.log"), (text) => text !== "")]);
  expect(filesUnder(elsewhere), "files where the link leads").toEqual({});
  expect(filesUnder(`${a}-old`)).toEqual({ "out/secure.log": "first first-value\n" });
  expect(stderr).toContain(
    `tacit: the secure output ${sink} is no longer where tacit first found its directory: ${out} now leads to ${path.join(elsewhere, "out")}.`,
  );
  expect(stderr).not.toContain(canary);
}, 120_000);
