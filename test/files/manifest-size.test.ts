// A write to the project's package.json is judged by parsing what it leaves there, whole, on
// the host's main thread (it may not come to declare a program `npx tacit` runs). Unbounded,
// appends of "{}," a million times each made the file 12 MB in four steps, each parsed before
// and after (millions of objects, far more heap than file): the host was held for seconds at
// each, and a tacit serve with a 250 MB heap died at the fourth, every session with it (at the
// default heap, a file of some 200 MB does the same). Such writes are now refused before
// anything is read or parsed.

import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createSession, runInSession, type SmallHeapServe, smallHeapServe } from "../helpers.js";

let server: SmallHeapServe;
const START = '{"name":"x","x":[';

beforeAll(async () => {
  server = await smallHeapServe("tacit-manifest-size-", ["--no-check"]);
});

afterAll(async () => {
  await server?.close();
});

it("a write that would leave package.json past 1 MiB is refused before it is parsed; the server and its other sessions go on", async () => {
  const { client, dir } = server;
  const other = await createSession(client);
  expect(await runInSession(client, other, `const kept = "still here";`, 60_000)).toMatchObject({ exitCode: 0 });
  const flood = await createSession(client);
  const flooded = await runInSession(
    client,
    flood,
    `requestFileSystem(".", (fs) => {
  const manifest = fs.access("package.json");
  manifest.write(${JSON.stringify(START)});
  const chunk = "{},".repeat(1_000_000);
  for (let i = 0; i < 14; i++) manifest.append(chunk);
})`,
    60_000,
  );
  expect(flooded.exitCode, server.stderr()).toBe(1);
  expect(flooded.error).toContain("append refused: it would leave this project's package.json larger than 1048576 bytes");
  expect(flooded.error).toContain("Keep package.json small");
  expect(readFileSync(path.join(dir, "package.json"), "utf8")).toBe(START);
  expect(await runInSession(client, other, `println(kept)`, 60_000)).toMatchObject({ exitCode: 0, stdout: "still here\n" });

  // A package.json already past the limit (not the script's doing) is not read: a write that
  // declares no tacit program replaces it; one that declares one, or an append, is refused.
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "big", data: "d".repeat(2 * 1024 * 1024) }));
  const attempts = await runInSession(
    client,
    other,
    `requestFileSystem(".", (fs) => {
  const manifest = fs.access("package.json");
  for (const [label, run] of [
    ["append", () => manifest.append(" ")],
    ["a bin", () => manifest.write(${JSON.stringify(JSON.stringify({ name: "p", bin: { tacit: "payload.sh" } }))})],
    ["ordinary", () => manifest.write(${JSON.stringify(JSON.stringify({ name: "p", version: "1.0.0" }))})],
  ] as const) {
    try { run(); println(label, "ok"); } catch (e) { println(label, "refused:", (e as Error).message); }
  }
})`,
    60_000,
  );
  expect(attempts.stdout).toContain("append refused: ");
  expect(attempts.stdout).toContain("a bin refused: ");
  expect(attempts.stdout).toContain("so whether it already declares a program named tacit (in bin, or through directories.bin) is unknown");
  expect(attempts.stdout).toContain("ordinary ok");
  expect(JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"))).toEqual({ name: "p", version: "1.0.0" });
}, 60_000);
