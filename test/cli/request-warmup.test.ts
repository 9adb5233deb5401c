// Once a run has made REQUESTS_BEFORE_LOWERING requests, the host lowers V8's interrupt budget
// (runner/jit-warmup.ts). V8 keys its code cache by a hash of its flags: were that hash taken
// again after the change, every long run would find its cache rejected, compile its bundle
// afresh and rewrite the cache. This runs a copy of this build installed in a temp project, so
// the repository's own cache is not touched.

import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REQUESTS_BEFORE_LOWERING } from "../../runner/jit-warmup.js";
import { installTacitIn, runCli, tempDirWithHome } from "../helpers.js";

const { dir, env, cleanup } = tempDirWithHome("tacit-request-warmup-");
afterAll(cleanup);

const READS = REQUESTS_BEFORE_LOWERING + 100;
let bin = "";
let runCache = "";
let expected = 0;

beforeAll(() => {
  const installed = installTacitIn(dir);
  bin = path.join(installed, "bin", "tacit.js");
  runCache = path.join(installed, "dist", "bundle", ".v8-cache", "run");
  for (let i = 0; i < READS; i++) {
    const text = `file ${i}\n`;
    expected += text.length;
    writeFileSync(path.join(dir, `f${i}.txt`), text);
  }
  writeFileSync(
    path.join(dir, "reads.ts"),
    `requestFileSystem(".", (fs) => {\n  let n = 0;\n  for (let i = 0; i < ${READS}; i++) n += fs.access("f" + i + ".txt").read().length;\n  println(n);\n});\n`,
  );
});

/** Each cache file of `tacit run`, with its bytes and when it was last written. */
function cacheFiles(): Map<string, { bytes: Buffer; mtimeNs: bigint }> {
  const files = new Map<string, { bytes: Buffer; mtimeNs: bigint }>();
  for (const name of readdirSync(runCache)) {
    const file = path.join(runCache, name);
    files.set(name, { bytes: readFileSync(file), mtimeNs: statSync(file, { bigint: true }).mtimeNs });
  }
  return files;
}

describe("the host's interrupt budget lowered during a run", () => {
  it("a run past the threshold reads every file right and leaves the code cache as it found it", async () => {
    const reads = () => runCli(["run", "--no-check", "reads.ts"], { bin, cwd: dir, env });
    // The first run writes the cache (and crosses the threshold too).
    const first = await reads();
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toBe(`${expected}\n`);
    const before = cacheFiles();
    expect(before.size).toBeGreaterThan(0);

    const second = await reads();
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toBe(`${expected}\n`);
    // Every file was accepted: none was rewritten, none added.
    const after = cacheFiles();
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    for (const [name, { bytes, mtimeNs }] of before) {
      expect(after.get(name)!.mtimeNs, name).toBe(mtimeNs);
      expect(after.get(name)!.bytes.equals(bytes), name).toBe(true);
    }
  });
});
