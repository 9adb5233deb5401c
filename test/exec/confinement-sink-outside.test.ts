// The secure output outside the allowed roots, not made yet when a confined command starts. A
// confined command may read what lies outside the roots; tacit covers its own files there, but a
// cover is a mount on a file that exists, and the secure output is made at the first classified
// print. A script printed a classified value whose map was still being computed, then ran a
// confined `sh` that waited for the file and printed what tacit appended there: the plaintext,
// which the script got in the command's output. tacit now makes the secure output (empty, owner-
// only, as the first print would) before a confined command wherever it is, not only in a root.

import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { probeNamespaceWrapper } from "../../runner/exec/pid-namespace.js";
import { fileOnce } from "../helpers.js";
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
      // The command says it has started, waits until the test has seen the plaintext reach the
      // secure output (from outside), then reads what it sees there. Ordering, not time: it
      // waited a fixed 2 s before, and the exec's 30 s limit ends it if it is never released.
      const started = path.join(project, "started");
      const release = path.join(project, "release");
      const wait = `touch started; until [ -e release ]; do sleep 0.02; done; cat "$0"; echo; echo read=$?`;
      // The map's value comes 1.5 s after the evaluator starts it, waiting without a core. It was a
      // loop of a fraction of a second, which a loaded machine could finish before the command
      // started, and the secure output, made by then, was covered without the fix too.
      const script = `
const secret = classify(${lit(canary)});
println(secret.map((s) => { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1500); return s + ":computed"; }));
requestExecPermission(["sh"], (p) => println(JSON.stringify(p.exec("sh", ["-c", ${lit(wait)}, ${lit(sink)}], { timeoutMs: 30000 }))));
`;
      const run = tacit(project, script, ["--confine-commands", "--command-permissions", "sh", "--secure-output", sink], {
        TACIT_HOME: path.join(dir, "tacit-home"),
      });
      // The premise: the command started before the plaintext reached the secure output, and it is there while the command runs.
      await fileOnce(started, () => existsSync(started), 20_000);
      expect(existsSync(started), "the command did not start").toBe(true);
      const atStart = existsSync(sink) ? readFileSync(sink, "utf8") : "";
      expect(atStart, "the value was in the secure output before the command started").not.toContain(canary);
      const whileRunning = await fileOnce(sink, (text) => text.includes(canary), 20_000);
      writeFileSync(release, "");
      const r = await run;
      expect(whileRunning, "the plaintext did not reach the secure output while the command ran").toContain(canary);
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
