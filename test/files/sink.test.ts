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
});
