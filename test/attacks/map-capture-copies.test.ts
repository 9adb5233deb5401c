// A map function's captured Classified values reach the pure evaluator inside its job, one line
// of JSON the host writes. Captured under many names, one value was written once per name: 100
// names for a 4 Mi-character value made a job of 400 Mi characters, built in the host's heap,
// and a tacit with a 300 MB heap died of it (SIGABRT, "heap out of memory" on stderr) only when
// the function computing that value, told by the secret, made it large: the exit status and
// stderr told the script a bit of the secret. A job now carries each captured value once, and one
// longer than the evaluator reads is not made at all (JSON writes a control character as six).

import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { MAX_HOST_FRAME_CHARS } from "../../library/protocol.js";
import { jsonLengthWithin } from "../../runner/classified/json-length.js";
import { runCli, tempDirWithHome } from "../helpers.js";

const NAMES = 100;

/**
 * A secret beginning with "A" in a fresh directory (and `files`, name to content, beside it), and
 * `tacit run` of `script` there with a 300 MB heap and a secure output.
 */
async function runWithSmallHeap(
  script: string,
  files: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string; sink: string }> {
  const { dir, env, cleanup } = tempDirWithHome("tacit-capture-copies-");
  onTestFinished(cleanup);
  const work = path.join(dir, "work");
  const sink = path.join(dir, "sink.txt");
  mkdirSync(work);
  // The secret begins with "A": the functions in the scripts make their values large exactly then.
  writeFileSync(path.join(work, ".env"), "A-capture-canary-51f0");
  for (const [name, content] of Object.entries(files)) writeFileSync(path.join(work, name), content);
  // A time limit well past what making the values takes on a loaded machine.
  const r = await runCli(["run", "--no-check", "--exec-timeout-ms", "120000", "--secure-output", sink, "-"], {
    cwd: work,
    input: script,
    env: { ...env, NODE_OPTIONS: "--max-old-space-size=300" },
  });
  // A host that died before writing anything made no sink: its stderr and exit then say why.
  return { ...r, sink: existsSync(sink) ? readFileSync(sink, "utf8") : "" };
}

describe("a Classified value captured under many names", () => {
  it("is sent to the pure evaluator once: a host with a small heap lives whatever the secret, and the value is right", async () => {
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
    const r = await runWithSmallHeap(script);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("Classified(***) Classified(***)\ndone\n");
    expect(r.stdout).not.toContain("capture-canary");
    expect(r.sink).toBe(`${NAMES}:A-capture-canary-51f0 8000000\ndone\n`);
  }, 60_000);
});

describe("a job longer than the pure evaluator reads", () => {
  // The five values are read from classified files, not computed: the job is made from the
  // store's values whichever way they came, and a map computing 10 million characters is itself
  // a job under the evaluator's 5 s limit, which two loaded runs (load average 15-20 on 2 cores)
  // passed ("the function ran longer than 5000 ms"), so the map under test failed for that
  // instead of the job's size. Read values put no clock between the script and the refusal.
  it("is not made: five captured values of 10 million control characters (60 million in JSON each) fail the map out of sight", async () => {
    const names = Array.from({ length: 5 }, (_, i) => `b${i}`);
    const files = Object.fromEntries(names.map((name) => [`.env.${name}`, "\u0001".repeat(10_000_000)]));
    const script = `requestFileSystem(".", (fs) => {
  const s = fs.readClassified(".env");
  ${names.map((name) => `const ${name} = fs.readClassified(".env.${name}");`).join("\n  ")}
  const r = s.map((v) => [${names.join(", ")}].length + ":" + v);
  println(r);
});
println("done");
`;
    const r = await runWithSmallHeap(script, files);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("Classified(***)\ndone\n");
    expect(r.stdout).not.toContain("capture-canary");
    expect(r.sink).toContain("characters of JSON the host sends the pure evaluator in one");
    expect(r.sink).not.toContain("capture-canary");
  }, 60_000);

  it("is measured as JSON.stringify measures it, without making it (unit)", () => {
    const values: unknown[] = [
      "", "plain", 'quote " and \\ backslash', "\b\f\n\r\t\u0000\u001f\u007f", "pair \ud83d\ude00 lone \ud83d and \ude00 end \ud800",
      0, -0, 1.5e300, -12, true, false, null, [], {}, [1, "a", [null, { k: "v" }]], { "": 1, 'k"\n': ["\u0001"], __proto__x: { a: [] } },
      { skipped: undefined, kept: 1 }, [undefined, 2],
    ];
    for (const value of values) {
      const length = JSON.stringify(value).length;
      expect(jsonLengthWithin(value, length), JSON.stringify(value)).toBe(true);
      expect(jsonLengthWithin(value, length - 1), JSON.stringify(value)).toBe(false);
    }
    expect(jsonLengthWithin("\u0001".repeat(1000), MAX_HOST_FRAME_CHARS)).toBe(true);
  });
});
