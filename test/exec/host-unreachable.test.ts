// A permitted command against tacit's own process, which holds the LLM key, classified plaintext
// and secret headers in its memory (and, here, a canary in its environment). With its own PID
// namespace and /proc a command sees none of tacit's processes (proc-isolation.test.ts tries `ps`
// and /proc/*/environ); this tries to take that /proc away: `umount /proc` (or lazily), also
// from a user namespace of the command's own, to show the host's /proc mounted beneath, then reads
// every environment there and counts tacit's processes. Where a command could (run as root
// without --confine-commands, which the README calls your full authority), it read tacit's memory
// too; confined, or as a user who is not root, the mount is locked or needs a capability the
// command lacks. Without its own /proc, tacit warns that commands can read its memory.

import { describe, expect, it } from "vitest";
import { probeNamespaceWrapper } from "../../runner/exec/pid-namespace.js";
import { type CliResult, lit, makeCanary, nobodyCanRunTacit, nobodysProject, realTempDir, tacit, tacitAsNobody } from "./fixtures.js";

const ATTACK = [
  "umount /proc 2>/dev/null || umount -l /proc 2>/dev/null",
  "unshare --map-root-user --mount sh -c 'umount /proc 2>/dev/null || umount -l /proc 2>/dev/null; cat /proc/[0-9]*/environ' 2>/dev/null | tr '\\0' '\\n'",
  "cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n'",
  // tacit's own command line, by a pattern that does not match this text.
  "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done | grep -c 'bin/tacit[.]js run' | sed 's/^/tacit-processes=/'",
  "echo ran",
].join("\n");
const SCRIPT = `requestExecPermission(["sh"], (p) => { const r = p.exec("sh", ["-c", ${lit(ATTACK)}]); println(r.stdout); });\n`;

function expectUnreached(r: CliResult, canary: string): void {
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  const lines = r.stdout.split("\n");
  expect(lines).toContain("ran");
  expect(lines).toContain("tacit-processes=0");
  expect(r.stdout).not.toContain(canary);
}

const ownProc = probeNamespaceWrapper(["/usr/bin/unshare", "/bin/unshare"], () => undefined)?.ownProc === true;

describe.concurrent("a command that takes its /proc away to reach tacit's process", () => {
  // The control: where the README says a command can (root, unconfined), this attack finds tacit, so the others' "nothing" means something.
  it("as root, unconfined (the README's full authority): reaches it", async (ctx) => {
    ctx.skip(process.getuid?.() !== 0 || !ownProc, "only as root, with a /proc of the command's own to unmount");
    const { dir, cleanup } = realTempDir("tacit-exec-host-root-", "/var/tmp");
    try {
      const canary = makeCanary();
      const r = await tacit(dir, SCRIPT, ["--command-permissions", "sh"], { TACIT_TEST_HOST_SECRET: canary });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(canary);
      expect(r.stdout).not.toContain("tacit-processes=0");
    } finally {
      cleanup();
    }
  });

  it("confined (--confine-commands): finds the mount locked, and no process of tacit's", async (ctx) => {
    ctx.skip(!ownProc, "this host gives commands no /proc of their own, which confinement needs");
    const { dir, cleanup } = realTempDir("tacit-exec-host-", "/var/tmp");
    try {
      const canary = makeCanary();
      const r = await tacit(dir, SCRIPT, ["--confine-commands", "--command-permissions", "sh"], { TACIT_TEST_HOST_SECRET: canary });
      expectUnreached(r, canary);
    } finally {
      cleanup();
    }
  });

  it("as a user who is not root, unconfined: may not unmount it, and finds no process of tacit's", async (ctx) => {
    const support = nobodyCanRunTacit();
    ctx.skip(!support.ok || !ownProc, support.ok ? "this host gives commands no /proc of their own" : support.reason);
    const { dir, cleanup } = realTempDir("tacit-exec-host-nobody-");
    try {
      const canary = makeCanary();
      const r = await tacitAsNobody(nobodysProject(dir), SCRIPT, ["--command-permissions", "sh"], { TACIT_TEST_HOST_SECRET: canary });
      expectUnreached(r, canary);
    } finally {
      cleanup();
    }
  });
});
