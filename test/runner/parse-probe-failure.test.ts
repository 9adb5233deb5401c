// A long or bracket-heavy script is parsed in a child process first (runner/nesting.ts), so that
// one that crashes the native parser crashes that child, not tacit. Every way that child could
// fail was reported as "the script nests too deeply", which sent the agent to rewrite a script
// that was fine. Here the child is SIGKILLed (as the out-of-memory killer or another process
// would) while it parses a script that nests nothing: tacit says so, and what to do.

import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childEnv, tacitBin } from "../helpers.js";
import { commandLineOf } from "../processes.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "tacit-probe-failure-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The children of `pid` running the parse probe. */
function probesOf(pid: number): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid && commandLineOf(Number(entry)).includes("parse-probe.cjs");
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe("a parse probe that is killed", () => {
  it("is reported as killed, not as a script that nests too deeply, and the script is refused", async () => {
    // 3 MiB of `0;`: nothing nested, but long enough to be probed, for seconds.
    writeFileSync(path.join(dir, "long.ts"), "0;\n".repeat(1024 * 1024));
    const child = spawn(process.execPath, [tacitBin, "check", "long.ts"], { cwd: dir, env: childEnv({ TACIT_HOME: path.join(dir, "home") }), stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    let killed: number | undefined;
    while (killed === undefined && child.exitCode === null) {
      [killed] = probesOf(child.pid!);
      if (killed === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(killed, `tacit check ended before its probe was seen: ${stderr}`).toBeDefined();
    process.kill(killed!, "SIGKILL");
    const code = await exited;
    expect(code, stderr).toBe(3);
    expect(stderr).toContain("[parse-probe-failed]");
    expect(stderr).toContain("tacit parses a script this long or bracket-heavy in a separate process first, and that process was ended by SIGKILL");
    expect(stderr).toContain("Run it again: the probe failed for a reason of the host's, not of the script's");
    expect(stderr).not.toContain("nests too deeply");
  }, 60_000);
});
