// tacit run stopped by SIGTERM while its script ran a command logged the evaluation's end as
// outcome "threw", exit 1, as if the script had thrown, while tacit exited 143: a reader of the
// log could not tell a stop from a failure. The log, --json and the exit now agree: "cancelled", 143.

import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { childEnv, runCli, tacitBin, tempDirWithHome } from "../helpers.js";
import { commandRunsBelow } from "./ended-steps.js";

describe("tacit run stopped by SIGTERM: its audit log says the evaluation was cancelled", () => {
  it("evaluation-ended is outcome cancelled with exit 143, as --json says and tacit exits", async () => {
    const { dir, env, cleanup } = tempDirWithHome("tacit-stop-outcome-");
    try {
      const work = path.join(dir, "work");
      mkdirSync(work);
      const log = path.join(dir, "audit.jsonl");
      const child = spawn(process.execPath, [tacitBin, "run", "--json", "--no-check", "--command-permissions", "sleep", "--audit-log", log, "-"], {
        cwd: work,
        env: childEnv(env),
        stdio: ["pipe", "pipe", "ignore"],
      });
      let stdout = "";
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
      const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
      child.stdin.end('requestExecPermission(["sleep"], (proc) => proc.exec("sleep", ["30"]));\n');
      await commandRunsBelow(child.pid!, "sleep 30", () => child.exitCode !== null);
      child.kill("SIGTERM");
      expect(await closed).toBe(143);
      const printed = JSON.parse(stdout) as { outcome: string; exitCode: number; error: string };
      expect(printed).toMatchObject({ outcome: "cancelled", exitCode: 143, error: "cancelled: tacit was stopped by SIGTERM" });

      const shown = await runCli(["audit", "show", "--json", log], { env });
      expect(shown.code).toBe(0);
      const lines = JSON.parse(shown.stdout) as Array<{ event: { type: string; outcome?: string; exitCode?: number } }>;
      const ended = lines.filter((line) => line.event.type === "evaluation-ended").map((line) => line.event);
      expect(ended).toEqual([expect.objectContaining({ outcome: "cancelled", exitCode: 143 })]);
    } finally {
      cleanup();
    }
  });
});
