// A map function's captured Classified values reach the pure evaluator inside its job, one line
// of JSON the host writes. Captured under many names, one value was written once per name: 100
// names for a 4 Mi-character value made a job of 400 Mi characters, built in the host's heap,
// and a tacit with a 300 MB heap died of it (SIGABRT, "heap out of memory" on stderr) only when
// the function computing that value, told by the secret, made it large: the exit status and
// stderr told the script a bit of the secret. A job now carries each captured value once.

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { runCli, tempDirWithHome } from "../helpers.js";

const NAMES = 100;

describe("a Classified value captured under many names", () => {
  it("is sent to the pure evaluator once: a host with a small heap lives whatever the secret, and the value is right", async () => {
    const { dir, env, cleanup } = tempDirWithHome("tacit-capture-copies-");
    onTestFinished(cleanup);
    const work = path.join(dir, "work");
    const sink = path.join(dir, "sink.txt");
    mkdirSync(work);
    // The secret begins with "A": the function below makes its value large exactly then.
    writeFileSync(path.join(work, ".env"), "A-capture-canary-51f0");
    const names = Array.from({ length: NAMES }, (_, i) => `b${i}`);
    const script = `requestFileSystem(".", (fs) => {
  const s = fs.readClassified(".env");
  const big = s.map((v) => (v.startsWith("A") ? "x".repeat(4_000_000) : ""));
  const ${names.map((name) => `${name} = big`).join(", ")};
  const r = s.map((v) => [${names.join(", ")}].length + ":" + v);
  const length = big.flatMap((x) => b7.map((y) => x.length + y.length));
  println(r, length);
});
println("done");
`;
    const r = await runCli(["run", "--no-check", "--secure-output", sink, "-"], {
      cwd: work,
      input: script,
      env: { ...env, NODE_OPTIONS: "--max-old-space-size=300" },
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("Classified(***) Classified(***)\ndone\n");
    expect(r.stdout).not.toContain("capture-canary");
    expect(readFileSync(sink, "utf8")).toBe(`${NAMES}:A-capture-canary-51f0 8000000\ndone\n`);
  }, 60_000);
});
