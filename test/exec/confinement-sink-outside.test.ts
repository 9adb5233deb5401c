// The secure output outside the allowed roots, not made yet when a confined command starts. A
// confined command may read what lies outside the roots; tacit covers its own files there, but a
// cover is a mount on a file that exists, and the secure output is made at the first classified
// print. A script printed a classified value whose map was still being computed, then ran a
// confined `sh` that waited for the file and printed what tacit appended there: the plaintext,
// which the script got in the command's output. tacit now makes the secure output (empty, owner-
// only, as the first print would) before a confined command wherever it is, not only in a root.

import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { probeNamespaceWrapper } from "../../runner/exec/pid-namespace.js";
import { lit, makeCanary, realTempDir, tacit } from "./fixtures.js";

const ownProc = probeNamespaceWrapper(["/usr/bin/unshare", "/bin/unshare"], () => undefined)?.ownProc === true;

describe("a confined command and the secure output outside the roots", () => {
  it("cannot read the plaintext tacit appends there after the command started", async (ctx) => {
    ctx.skip(!ownProc, "this host gives commands no /proc of their own, which confinement needs");
    // Not under /tmp: a confined command's /tmp is its own.
    const { dir, cleanup } = realTempDir("tacit-exec-sink-outside-", "/var/tmp");
    try {
      const project = path.join(dir, "project");
      mkdirSync(project);
      const sink = path.join(dir, "kept", "sink.txt");
      const canary = makeCanary();
      // Up to 2 s for the value to reach the file (its map takes a fraction of that), then what the command sees of it.
      const wait = `for i in $(seq 1 40); do [ -s "$0" ] && break; sleep 0.05; done; cat "$0"; echo; echo read=$?`;
      const script = `
const secret = classify(${lit(canary)});
println(secret.map((s) => { let n = 0; for (let i = 0; i < 5e7; i++) n += i % 2; return s + ":" + n; }));
requestExecPermission(["sh"], (p) => println(JSON.stringify(p.exec("sh", ["-c", ${lit(wait)}, ${lit(sink)}], { timeoutMs: 30000 }))));
`;
      const r = await tacit(project, script, ["--confine-commands", "--command-permissions", "sh", "--secure-output", sink], {
        TACIT_HOME: path.join(dir, "tacit-home"),
      });
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      const result = JSON.parse(r.stdout.split("\n")[1]!) as { exitCode: number; stdout: string };
      // The command ran and read the file it saw (an empty cover)...
      expect(result.exitCode).toBe(0);
      expect(result.stdout).toContain("read=0");
      // ...and none of the plaintext, which did reach the secure output.
      expect(r.stdout).not.toContain(canary);
      expect(existsSync(sink)).toBe(true);
      expect(readFileSync(sink, "utf8")).toContain(canary);
    } finally {
      cleanup();
    }
  });
});
