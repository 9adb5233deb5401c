// Scopes a script keeps open: each live capability is an entry in the host's table until its
// block returns or its promise settles, and a block whose promise never settles holds its
// entry until the evaluation ends. A seventh security review opened scopes in a loop, each
// with a block that never settled: 1.7 million in 110 s (--exec-timeout-ms 120000), tacit's
// own memory at 676 MB and growing with the time limit, while the sandbox stayed well under
// its own. The host now keeps a bounded number open at once and refuses the next, saying why.

import { describe, expect, it } from "vitest";
import { LIVE_CAPABILITIES_LIMIT } from "../../runner/capabilities.js";
import { runScript, tempDir } from "../helpers.js";

/** The time limit of each run of the flood (tacit's --exec-timeout-ms). */
const RUN_LIMIT_MS = 120_000;

describe("a flood of scopes that never close", () => {
  it("is refused past the limit of live capabilities, for every kind; a scope that closes frees its place", async () => {
    const { dir, cleanup } = tempDir("tacit-capability-flood-");
    try {
      const script = `
const never = async (): Promise<void> => { await new Promise(() => {}); };
let opened = 0;
let refusal = "";
try {
  for (;;) {
    if (opened % 2 === 0) requestFileSystem(".", never);
    else requestNetwork(["example.com"], never);
    opened++;
  }
} catch (e) {
  refusal = String(e);
}
println(opened);
println(refusal);
let again = "";
try { requestExecPermission(["true"], never); } catch (e) { again = String(e); }
println(again.length > 0);
`;
      // Each scope is a round trip to the host, 10,000 and 10,500 of them in the two runs: some
      // 11 s each in a run of the tests on a loaded 2-core machine, where the default 30 s limits
      // did not always hold both. The limit tested is on a count, not on time.
      // The two runs go together: each is a round trip after another between its tacit and its
      // sandbox, one waiting while the other works, which leaves a core for the other run.
      const [r, closing] = await Promise.all([
        runScript(script, ["--no-check", "--exec-timeout-ms", String(RUN_LIMIT_MS), "--network-permissions", "example.com", "--command-permissions", "true"], {
          cwd: dir,
        }),
        // Blocks that return give their place back: any number of them, one after another.
        runScript(
          `let n = 0;\nfor (let i = 0; i < ${LIVE_CAPABILITIES_LIMIT + 500}; i++) requestFileSystem(".", () => { n++; });\nprintln(n);`,
          ["--no-check", "--exec-timeout-ms", String(RUN_LIMIT_MS)],
          { cwd: dir },
        ),
      ]);
      expect(r.code, r.stderr).toBe(0);
      const [opened, refusal, again] = r.stdout.trim().split("\n");
      expect(Number(opened)).toBe(LIVE_CAPABILITIES_LIMIT);
      expect(refusal).toContain(`${LIVE_CAPABILITIES_LIMIT} capabilities are open at once`);
      expect(again).toBe("true");
      expect(closing.code, closing.stderr).toBe(0);
      expect(closing.stdout).toBe(`${LIVE_CAPABILITIES_LIMIT + 500}\n`);
    } finally {
      cleanup();
    }
  }, 2 * RUN_LIMIT_MS + 30_000);
});
