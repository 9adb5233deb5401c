// exec at the edges of what an argument can be, through the real CLI with real processes. A NUL
// cannot be passed in an argument (the system ends the string there): such a call is an error
// the script catches, naming the script's own argument, with nothing run (Node's words counted
// the arguments of tacit's wrappers: "args[15]" for the first).

import { readdirSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, realTempDir, tacit } from "./fixtures.js";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe("arguments with NUL", () => {
  it("are an error the script catches, naming its argument, and nothing runs; data with NUL goes on stdin", async () => {
    const { dir: root, cleanup } = realTempDir("tacit-exec-args-");
    cleanups.push(cleanup);
    const result = await tacit(
      root,
      `${ATTEMPT_PRELUDE}
requestExecPermission(["touch", "cat"], (proc) => {
  attempt("first", () => proc.exec("touch", ["MARK_FIRST\\0.txt"]));
  attempt("third", () => proc.exec("touch", ["MARK_A", "MARK_B", "MARK_C\\0"]));
  attempt("input", () => proc.exec("cat", [], { input: "a\\0b" }));
});
println("after");
`,
      ["--command-permissions", "touch,cat"],
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("after\n");
    const found = attempts(result.stdout);
    expect(attemptOf(found, "first")).toEqual({
      status: "Error",
      value:
        'exec("touch"): args[0] holds a NUL character, which no argument of a program can carry (the system ends it there); nothing was run. ' +
        "Pass data with NUL characters on standard input (the input option) or in a file",
    });
    expect(String(attemptOf(found, "third").value)).toMatch(/^exec\("touch"\): args\[2\] holds a NUL character/);
    expect(attemptOf(found, "input")).toEqual({ status: "ok", value: { exitCode: 0, stdout: "a\0b", stderr: "" } });
    // Nothing ran: touch made none of its files, not even the arguments before the one with NUL.
    expect(readdirSync(root)).toEqual([]);
  });
});
