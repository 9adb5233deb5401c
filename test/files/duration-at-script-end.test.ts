// The duration tacit reports (`tacit run --json`'s durationMs, MCP's structuredContent) is the
// script's own, counted to its end, not to the end of the classified work it leaves behind (the
// values it wrote with writeClassified and printed to the secure output). How long that work
// takes depends on the map functions computing it, so a duration counted to it told the agent
// how long a function ran on a secret: a map that looped for some plaintexts showed as 1.7 s
// against 0.2 s.
//
// Judged without a clock: a map that never ends for one secret and answers at once for another,
// under a time limit. Counted to the end of the classified work, the looping run's duration was
// the whole limit (the work waits that long before it is stopped); counted to the script's end,
// it is below it for both secrets, as any script that was not killed takes less than its limit.

import path from "node:path";
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { makeCanary, realTempDir, tacit, writeTree } from "./fixtures.js";

// Long enough for the script itself (a read, a map that answers at once, a write, a print) on a
// loaded machine; every millisecond of it is a core spent spinning in the looping map.
const LIMIT_MS = 2500;

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** `.env` holds `prefix` and a canary; the script writes and prints a map of it that never ends on "loop". */
async function run(prefix: string): Promise<{ code: number | null; json: { stdout: string; exitCode: number; durationMs: number }; stderr: string; written: string; sink: string; canary: string }> {
  const { dir: base, cleanup } = realTempDir("tacit-duration-end-");
  cleanups.push(cleanup);
  const dir = path.join(base, "work");
  const sink = path.join(base, "sink.log");
  const canary = makeCanary();
  writeTree(dir, { ".env": `${prefix}${canary}` });
  const result = await tacit(
    dir,
    `requestFileSystem(".", (fs) => {
  const value = fs.readClassified(".env").map((t) => {
    if (t.startsWith("loop")) for (;;) {}
    return t + "!";
  });
  fs.writeClassified(".env.out", value);
  println("wrote", value);
});
`,
    ["--json", "--no-check", "--exec-timeout-ms", String(LIMIT_MS), "--secure-output", sink],
  );
  const json = JSON.parse(result.stdout) as { stdout: string; exitCode: number; durationMs: number };
  return { code: result.code, json, stderr: result.stderr, written: readFileSync(path.join(dir, ".env.out"), "utf8"), sink: readFileSync(sink, "utf8"), canary };
}

describe("the duration tacit reports", () => {
  it("ends with the script, not with the classified work it left: the same for a function that never ends", async () => {
    // Side by side: the quick run takes its time while the looping one waits out its limit.
    const [quick, looping] = await Promise.all([run("fast-"), run("loop-")]);
    // The figure durationMs is compared with is not a guess at the machine's speed: it is the
    // length, by construction, of the looping run's classified work, which is stopped at the
    // run's limit and not before (the 2.5 s the product itself applies). Counted to the end of
    // that work, durationMs reaches it; counted to the script's end, it stays below it, as any
    // script that was not killed (exit 0) ran for less than its limit.
    const loopingWorkAtLeastMs = LIMIT_MS;
    for (const one of [quick, looping]) {
      expect(one.code, one.stderr).toBe(0);
      expect(one.json).toMatchObject({ exitCode: 0, stdout: "wrote Classified(***)\n" });
      expect(one.json.stdout + one.stderr).not.toContain(one.canary);
      // Not killed, so it ended within its limit; the work it left does not count.
      expect(one.json.durationMs).toBeLessThan(loopingWorkAtLeastMs);
    }
    // The values still landed: the quick one written and printed, the looping one stopped at the limit.
    expect(quick.written).toBe(`fast-${quick.canary}!`);
    expect(quick.sink).toContain(`wrote fast-${quick.canary}!`);
    expect(looping.written).toBe("");
    expect(looping.sink).toContain("wrote <classified value unavailable:");
  }, 60_000);
});
