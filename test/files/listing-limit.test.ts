// What a listing holds is bounded: children(), walk() and find() built every path of what they
// listed, in the host, before anything was sent, whatever their number or length. Unbounded,
// walk() of a directory holding 30,000 files whose paths are 3,800 characters long made a
// tacit serve with a 250 MB heap die, and every session with it (at the default heap, a larger
// tree, or a few sessions listing at once, do the same). The files can be the script's own
// writes, left between snippets; here the test makes them, for speed.

import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createSession, runInSession, type SmallHeapServe, smallHeapServe } from "../helpers.js";

let server: SmallHeapServe;
let deep: string;

beforeAll(async () => {
  server = await smallHeapServe("tacit-listing-limit-", ["--no-check"], (dir) => {
    // 15 directories of 250 characters: each file's path is about 3,800 characters.
    deep = path.join(dir, "tree", ...Array.from({ length: 15 }, () => "d".repeat(250)));
    mkdirSync(deep, { recursive: true });
    for (let i = 0; i < 30_000; i++) writeFileSync(path.join(deep, `${String(i).padStart(5, "0")}${"x".repeat(60)}`), "");
    mkdirSync(path.join(dir, "small"));
    writeFileSync(path.join(dir, "small", "a.txt"), "a");
  });
});

afterAll(async () => {
  await server?.close();
});

it("a listing past the limit is refused before its paths fill the host; the server and its other sessions go on", async () => {
  const { client, dir } = server;
  const other = await createSession(client);
  expect(await runInSession(client, other, `const kept = "still here";`, 60_000)).toMatchObject({ exitCode: 0 });
  const flood = await createSession(client);
  const walked = await runInSession(client, flood, `requestFileSystem(".", (fs) => fs.access("tree").walk().length)`, 60_000);
  expect(walked.exitCode, server.stderr()).toBe(1);
  expect(walked.error).toContain("more than 16777216 characters of paths");
  expect(walked.error).toContain("list a smaller directory");
  const relative = path.relative(dir, deep);
  const children = await runInSession(client, flood, `requestFileSystem(".", (fs) => fs.access(${JSON.stringify(relative)}).children().length)`, 60_000);
  expect(children.exitCode, server.stderr()).toBe(1);
  expect(children.error).toContain("more than 16777216 characters of paths");
  const found = await runInSession(client, flood, `requestFileSystem(".", (fs) => fs.find("tree", "*").length)`, 60_000);
  expect(found.exitCode, server.stderr()).toBe(1);
  expect(found.error).toContain("more than 16777216 characters of paths");
  // Only names are held on the way down: a narrow find in the same tree still answers.
  expect(await runInSession(client, flood, `requestFileSystem(".", (fs) => fs.find("tree", "0000*").length)`, 60_000)).toMatchObject({
    exitCode: 0,
    stdout: "10\n",
  });
  // The server is alive, the other session kept its state, and small listings work.
  expect(await runInSession(client, other, `println(kept)`, 60_000)).toMatchObject({ exitCode: 0, stdout: "still here\n" });
  expect(await runInSession(client, other, `requestFileSystem(".", (fs) => fs.access("small").walk().map((e) => e.name))`, 60_000)).toMatchObject({
    exitCode: 0,
    stdout: '[ "a.txt" ]\n',
  });
}, 60_000);
