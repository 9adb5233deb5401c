// What a permitted command holds of tacit's open files: its standard input, output and error
// alone. tacit has open, while it runs, the audit log (and its lock), the secure output (plaintext
// of classified values), the sandbox's channel and the command's lifeline; any of them passed on
// (a descriptor opened without close-on-exec, a slot added to spawn's stdio) would let the command
// read the plaintext, forge audit lines or answer for tacit. inherited-descriptors.test.ts covers
// what tacit itself was handed, lifeline.test.ts the lifeline; this lists the command's own
// descriptors with all of those open, each way this host starts commands.

import { mkdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { probeNamespaceWrapper } from "../../runner/exec/pid-namespace.js";
import { realTempDir, tacit } from "./fixtures.js";

const namespace = probeNamespaceWrapper(["/usr/bin/unshare", "/bin/unshare"], () => undefined);
const ways: Array<{ name: string; flags: string[] }> = [
  { name: "unconfined", flags: [] },
  ...(namespace?.ownProc === true ? [{ name: "confined (--confine-commands)", flags: ["--confine-commands"] }] : []),
];

// The shell's own descriptors, listed by ls from outside it (`; true` keeps sh from running ls in
// its place; no pipe, whose ends the shell would hold while ls looks).
const SCRIPT = `
println(classify("written to the secure output first"));
requestExecPermission(["sh"], (p) => println(p.exec("sh", ["-c", "ls /proc/$$/fd; true"], { input: "some input" }).stdout));
`;

describe.concurrent("a permitted command's open descriptors", () => {
  for (const way of ways) {
    it(`${way.name}: its stdin, stdout and stderr alone, with the audit log and the secure output open in tacit`, async () => {
      // Not under /tmp: a confined command's /tmp is its own.
      const { dir, cleanup } = realTempDir("tacit-exec-fds-", "/var/tmp");
      try {
        const project = path.join(dir, "project");
        const kept = path.join(dir, "kept");
        mkdirSync(project);
        mkdirSync(kept);
        const flags = [...way.flags, "--command-permissions", "sh", "--audit-log", path.join(kept, "audit.jsonl"), "--secure-output", path.join(kept, "sink.txt")];
        // A tacit home of its own: one shared with the other case remembers its audit log and secure output, and covers
        // them in a confined view (runner/remembered-files.ts), where the other case's cleanup may remove them mid-setup.
        const r = await tacit(project, SCRIPT, flags, { TACIT_HOME: path.join(dir, "tacit-home") });
        expect(r.stderr).toBe("");
        expect(r.code).toBe(0);
        expect(r.stdout.split("\n")).toEqual(["Classified(***)", "0", "1", "2", "", ""]);
      } finally {
        cleanup();
      }
    });
  }
});
