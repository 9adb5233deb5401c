// A stop signal that comes once the script's own code has ended, while the values it printed are
// still being computed for the secure output: tacit run went on waiting for them, each up to its
// own limit and all up to the run's time limit (30 s by default, as long as it is configured),
// after Ctrl-C or SIGTERM, the maps computing all the while. The stop now ends that work as the
// time limit would: each value is noted unavailable, and tacit exits 143 at once.

import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { childEnv, tacitBin, tempDirWithHome } from "../helpers.js";

describe("tacit run stopped after its script ended, with printed values still being computed", () => {
  it("SIGTERM: the values are abandoned, noted in the secure output, and tacit exits 143", async () => {
    const { dir, env, cleanup } = tempDirWithHome("tacit-stop-after-end-");
    onTestFinished(cleanup);
    // Limits far beyond the test's own: tacit ending at all shows that it did not wait for them.
    const config = path.join(dir, "tacit.json");
    writeFileSync(config, JSON.stringify({ executionTimeoutMs: 600_000, pureJobTimeoutMs: 600_000 }));
    writeFileSync(
      path.join(dir, "slow.ts"),
      `const secret = classify("s3cret");
for (let k = 0; k < 3; k++) println("value", k, secret.map((v) => { for (;;) {} return v; }));
println("script done");
`,
    );
    const sink = path.join(dir, "secure.log");
    const child = spawn(process.execPath, [tacitBin, "run", "--no-check", "--config", config, "--secure-output", sink, "slow.ts"], {
      cwd: dir,
      env: childEnv(env),
      stdio: ["ignore", "pipe", "pipe"],
    });
    onTestFinished(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    await new Promise<void>((resolve) => {
      let shown = "";
      child.stdout.on("data", (chunk: Buffer) => {
        shown += chunk.toString("utf8");
        if (shown.includes("script done\n")) resolve();
      });
    });
    child.kill("SIGTERM");

    expect(await exited, stderr).toBe(143);
    const lines = readFileSync(sink, "utf8").split("\n");
    for (const k of [0, 1, 2]) expect(lines).toContain(`value ${k} <classified value unavailable: the evaluation ended before this value was computed>`);
    expect(lines).toContain("script done");
  });
});
