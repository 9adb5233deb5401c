// Scopes that hold much each: LIVE_CAPABILITIES_LIMIT bounds how many capabilities are live at
// once, not what each holds. A network scope keeps every host pattern it names (1,000 of up to
// 1,024 characters each, the protocol's limits), and a block that never settles keeps them until
// the evaluation ends (in a session, for as long as it lives). A security review opened such
// scopes with "127.0.0.1" padded with spaces (the pattern keeps its source as given), 1,000 a
// scope, under --network-permissions 127.0.0.1: 300 scopes grew tacit by 487 MB (1.6 MB a
// scope, 17 ms of the host's main thread each); with --exec-timeout-ms 150000 tacit reached
// 4.3 GB (its heap limit here is 4.1 GB), thrashing until the time limit. A session keeps its
// scopes from snippet to snippet, and tacit serve holds every session in that one heap. The host now
// bounds what its live capabilities hold together, and refuses the scope that would pass it.

import { describe, expect, it } from "vitest";
import { LIVE_CAPABILITIES_HELD_BYTES } from "../../runner/capabilities.js";
import { runScript, tempDir } from "../helpers.js";

/** Scopes the script tries to keep open: some 64 MB in the host without the bound, 0.7 s of requests. */
const ATTEMPTS = 40;

describe("scopes that never close, each holding much", () => {
  it("are refused once what the live capabilities hold would pass the bound; a small scope still opens", async () => {
    const { dir, cleanup } = tempDir("tacit-capability-held-");
    try {
      const script = `
const hosts = Array.from({ length: 1000 }, () => " ".repeat(1000) + "127.0.0.1");
let opened = 0;
let refusal = "";
try {
  for (; opened < ${ATTEMPTS}; opened++) requestNetwork(hosts, () => new Promise<void>(() => {}));
} catch (e) {
  refusal = String(e);
}
println(opened);
println(refusal);
println(requestNetwork(["127.0.0.1"], () => "small scope opened"));
`;
      const r = await runScript(script, ["--no-check", "--network-permissions", "127.0.0.1"], { cwd: dir });
      expect(r.code, r.stderr).toBe(0);
      const [opened, refusal, small] = r.stdout.trim().split("\n");
      // Each such scope is counted at more than 2 MB: fewer than 4 fit the bound.
      expect(Number(opened)).toBeLessThan(Math.ceil(LIVE_CAPABILITIES_HELD_BYTES / 2_000_000));
      expect(refusal).toContain("requestNetwork(): refused");
      expect(refusal).toContain("MB it keeps for them");
      expect(small).toBe("small scope opened");
    } finally {
      cleanup();
    }
  }, 30_000);
});
