// A descriptor whoever started tacit left open without close-on-exec (a shell's `30>file`, a
// harness's pipe) must not reach the commands tacit runs: a permitted `bash` could otherwise
// write to it or read from it (`>&30`, `<&30`) whatever the policy said. Node marks only the
// first descriptors close-on-exec at start-up (up to the first gap after 15), so one at 30
// was passed on before tacit closed the inherited ones itself.

import { spawn } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { tacitBin } from "../helpers.js";
import { makeCanary, realTempDir } from "./fixtures.js";

const INHERITED_FD = 30;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** What arrived on the parent's end of the inherited descriptor. */
  leaked: string;
}

/** `tacit run -` with one more pipe open at INHERITED_FD (the gap before it stays closed). */
function runWithInheritedPipe(cwd: string, script: string, args: string[], feed: string): Promise<Run> {
  const stdio: Array<"pipe" | "ignore"> = ["pipe", "pipe", "pipe", ...Array<"ignore">(INHERITED_FD - 3).fill("ignore"), "pipe"];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [tacitBin, "run", ...args, "-"], { cwd, stdio });
    const extra = (child.stdio as unknown as Array<Readable & Writable>)[INHERITED_FD]!;
    let stdout = "";
    let stderr = "";
    let leaked = "";
    child.stdout!.on("data", (c: Buffer) => (stdout += c.toString("utf8")));
    child.stderr!.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
    extra.on("data", (c: Buffer) => (leaked += c.toString("utf8")));
    extra.on("error", () => undefined);
    // A canary waiting to be read on the descriptor, for a command that reads it.
    extra.write(feed);
    child.on("error", reject);
    // Not "close": that waits for the extra pipe too, which anything that inherited it holds open.
    let open = 3;
    let code: number | null = null;
    const settle = (): void => {
      if (--open > 0) return;
      extra.destroy();
      resolve({ code, stdout, stderr, leaked });
    };
    child.on("exit", (status) => {
      code = status;
      settle();
    });
    child.stdout!.on("end", settle);
    child.stderr!.on("end", settle);
    child.stdin!.end(script);
  });
}

describe("descriptors tacit inherited", () => {
  it("do not reach a permitted command, to write to or to read from", async () => {
    const { dir, cleanup } = realTempDir("tacit-exec-fds-");
    try {
      const written = makeCanary();
      const waiting = makeCanary();
      const script = `
requestExecPermission(["bash"], (proc) => {
  const write = proc.exec("bash", ["-c", "echo ${written} >&${INHERITED_FD}"]);
  println("write:", write.exitCode, write.stderr.trim());
  const read = proc.exec("bash", ["-c", "head -n 1 <&${INHERITED_FD}"]);
  println("read:", read.exitCode, JSON.stringify(read.stdout), read.stderr.trim());
});
`;
      const r = await runWithInheritedPipe(dir, script, ["--command-permissions", "bash"], `${waiting}\n`);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      // Both commands ran, and found no such descriptor.
      expect(r.stdout).toMatch(new RegExp(`^write: [1-9]\\d* .*${INHERITED_FD}: Bad file descriptor$`, "m"));
      expect(r.stdout).toMatch(new RegExp(`^read: [1-9]\\d* "" .*${INHERITED_FD}: Bad file descriptor$`, "m"));
      expect(r.leaked).not.toContain(written);
      expect(r.stdout).not.toContain(waiting);
    } finally {
      cleanup();
    }
  });
});
