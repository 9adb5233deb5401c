// The secure output sink: created owner-only (0600) with its parents, appended to, and an
// existing file keeps its own permissions and content.

import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeCanary, realTempDir, tacit, writeTree } from "./fixtures.js";

let base: string;
let root: string;
let cleanup: () => void;
const canary = makeCanary();

const SCRIPT = `
requestFileSystem(".", (fs) => {
  const secret = fs.readClassified(".env");
  println("plain line");
  println("secret:", secret);
});
`;

beforeAll(() => {
  ({ dir: base, cleanup } = realTempDir("tacit-files-sink-"));
  root = path.join(base, "tree");
  writeTree(root, { ".env": canary });
});
afterAll(() => cleanup());

describe("the secure sink", () => {
  it("is created 0600, with its missing parents, and receives plain and classified output", async () => {
    const sink = path.join(base, "new", "nested", "secure.log");
    const r = await tacit(root, SCRIPT, ["--secure-output", sink]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("plain line\nsecret: Classified(***)\n");
    expect(statSync(sink).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(sink)).isDirectory()).toBe(true);
    expect(readFileSync(sink, "utf8")).toBe(`plain line\nsecret: ${canary}\n`);

  });

  it("keeps an existing file's mode (0644) and content, and appends", async () => {
    const sink = path.join(base, "existing.log");
    writeFileSync(sink, "previous content\n");
    chmodSync(sink, 0o644);
    // Relative to the working directory.
    const r = await tacit(root, SCRIPT, ["--secure-output", "../existing.log"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(statSync(sink).mode & 0o777).toBe(0o644);
    expect(readFileSync(sink, "utf8")).toBe(`previous content\nplain line\nsecret: ${canary}\n`);
  });

  it("takes at most what the script may print from one evaluation, even behind a slow value", async () => {
    // Printed behind a value still being computed, each append waited, text and all: a
    // security review's script printed 1.8 GB into the sink in a 30 s run while the host grew
    // to 1.9 GB resident. Here a map of about 2 s, then 60 MiB of plain text.
    const sink = path.join(base, "flood.log");
    const script = `
requestFileSystem(".", (fs) => {
  const slow = fs.readClassified(".env").map((v) => { const end = Date.now() + 2000; while (Date.now() < end) {} return v; });
  println("first:", slow);
  const chunk = "y".repeat(512 * 1024);
  for (let i = 0; i < 120; i++) print(chunk);
});
`;
    const r = await tacit(root, script, ["--secure-output", sink]);
    expect(r.code, r.stderr).toBe(0);
    const written = readFileSync(sink, "utf8");
    expect(written.startsWith(`first: ${canary}\n`)).toBe(true);
    expect(written).toContain("[tacit: secure output cut:");
    expect(Buffer.byteLength(written)).toBeLessThan(11 * 1024 * 1024);
  }, 60_000);
});
