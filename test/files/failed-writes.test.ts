// A write that fails part way (a full disk, ENOSPC; the file size limit, EFBIG) leaves nothing of
// what it wrote. The script was told "no space left on device" while the file held the head of its
// content: an append it would retry landed twice, and the head of a content tacit had judged whole
// stood alone. A package.json whose whole was no JSON (so it declared nothing) but whose first
// 4096 bytes were a manifest declaring a `tacit` bin was left as those 4096 bytes by a script that
// had filled its tmpfs root with files and deleted one: `npx tacit` ran the script's program. Here
// the limit is the file size limit (`ulimit -f`), which cuts a write at the byte, as a full disk
// cuts it at its block.

import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, unchecked } from "../helpers.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, lit, realTempDir, writeTree } from "./fixtures.js";

let root: string;
let cleanup: () => void;
/** The file size limit tacit runs under, in bytes (ulimit -f counts 512-byte blocks). */
const LIMIT_BYTES = 64 * 512;
/** A Node that runs under that limit. */
let limitedNode: string;

beforeAll(() => {
  ({ dir: root, cleanup } = realTempDir("tacit-files-failed-writes-"));
  limitedNode = path.join(root, "node-with-file-size-limit");
  writeFileSync(limitedNode, `#!/bin/sh\nulimit -f ${LIMIT_BYTES / 512}\nexec ${JSON.stringify(process.execPath)} "$@"\n`, { mode: 0o755 });
  writeTree(root, { "project/package.json": '{"name":"project"}\n', "project/log.txt": "first\n", "project/notes.txt": "ORIGINAL\n" });
});
afterAll(() => cleanup());

const file = (name: string): string => readFileSync(path.join(root, "project", name), "utf8");

describe("a write cut short by the file size limit", () => {
  it("leaves nothing of itself: a whole write's file empty, an append taken back, and says so", async () => {
    const lead = '{"name":"project","bin":{"tacit":"payload.js"},"pad":"';
    const head = lead + "p".repeat(LIMIT_BYTES - lead.length - 2) + '"}';
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  const head = ${lit(head)};
  // Judged whole, this is no JSON and declares nothing; its head, alone, declares a tacit bin.
  attempt("manifest", () => fs.access("package.json").write(head + "} not JSON"));
  attempt("append", () => fs.access("log.txt").append("x".repeat(${LIMIT_BYTES + 100})));
  attempt("write", () => fs.access("notes.txt").write("y".repeat(${LIMIT_BYTES + 100})));
});
`;
    const r = await runCli(unchecked(["run", "-"]), { cwd: path.join(root, "project"), input: script, node: limitedNode });
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    for (const label of ["manifest", "write"]) {
      const { status, value } = attemptOf(found, label);
      expect(status, label).toBe("Error");
      expect(String(value), label).toMatch(/file too large \(EFBIG\); the file was left empty \(a write empties it first, so what it held before is gone\), with nothing of this write in it$/);
    }
    expect(String(attemptOf(found, "append").value)).toMatch(/file too large \(EFBIG\); nothing was appended \(the part written was taken back\)$/);
    expect(file("package.json")).toBe("");
    expect(file("notes.txt")).toBe("");
    expect(file("log.txt")).toBe("first\n");
  }, 30_000);
});
