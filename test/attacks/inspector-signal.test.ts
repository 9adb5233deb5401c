// Node answers SIGUSR1 by starting its inspector on 127.0.0.1:9229, through which any local
// process can run code in the host that decides every effect, and read what it holds. Any process
// of the person's may send it, a command a script runs outside a PID namespace included. tacit
// takes SIGUSR1 itself and does nothing with it: no inspector starts, and the run goes on.

import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { childEnv, collectedRun, tacitBin, tempDirWithHome } from "../helpers.js";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe("SIGUSR1 sent to tacit while its script runs", () => {
  it("starts no inspector; the run ends as it would have, exit 0", async () => {
    const { dir, env, cleanup } = tempDirWithHome("tacit-inspector-signal-");
    cleanups.push(cleanup);
    // Says it is running, then waits (in the host's answers, not a timer) for the test to have sent the signal.
    writeFileSync(
      path.join(dir, "waits.ts"),
      `println("ready");
const seen = requestFileSystem(".", (fs) => {
  for (let i = 0; i < 10_000_000; i++) if (fs.access("signalled").exists) return true;
  return false;
});
println("signal seen:", seen);
`,
    );
    const child = spawn(process.execPath, [tacitBin, "run", "--no-check", "waits.ts"], { cwd: dir, env: childEnv(env), stdio: ["pipe", "pipe", "pipe"] });
    const ran = collectedRun(child, "");
    await new Promise<void>((resolve) => {
      let shown = "";
      const onData = (chunk: Buffer): void => {
        shown += chunk.toString("utf8");
        if (!shown.includes("ready\n")) return;
        child.stdout.off("data", onData);
        resolve();
      };
      child.stdout.on("data", onData);
    });
    process.kill(child.pid!, "SIGUSR1");
    writeFileSync(path.join(dir, "signalled"), "");
    const { code, stdout, stderr } = await ran;

    expect(stderr).not.toMatch(/Debugger listening|inspector|ws:\/\//i);
    expect(stdout).toBe("ready\nsignal seen: true\n");
    expect(code, stderr).toBe(0);
  });
});
