// --strict and man-db's -C (runner/exec/strict-denylist.ts, STRICT_DENIED_OPTIONS), tried for real
// through the CLI where the host has each program (skipped where it has none). manpath, whatis,
// apropos and mandb read the configuration file -C (--config-file) names, and quote the first line
// they cannot parse whole: `can't parse directory list \`<line>'`. A file outside the allowed roots
// whose first line is a secret (a token file, a `KEY=value` line, a shadow line) was printed to the script.

import path from "node:path";
import { describe, expect, it } from "vitest";
import { findOnPath } from "../../runner/exec/program-path.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, makeCanary, realTempDir, tacit, writeTree } from "./fixtures.js";

const PROGRAMS = ["manpath", "whatis", "apropos", "mandb"];

describe("--strict and man-db's -C", () => {
  it("refuses the option that reads a configuration from any file and quotes its first line", async (ctx) => {
    const present = PROGRAMS.filter((program) => findOnPath(program) !== null);
    ctx.skip(present.length === 0, "no man-db program is installed here");
    const { dir, cleanup } = realTempDir("tacit-strict-man-db-");
    ctx.onTestFinished(cleanup);
    const canary = makeCanary();
    writeTree(dir, { "project/readme.txt": "hello\n", "home/.keep": "", "outside/token": `API_TOKEN=${canary} rest\n` });
    const secret = path.join(dir, "outside", "token");
    const tries = present.flatMap((program) => {
      const extra = program === "manpath" ? [] : ["x"];
      return [
        { label: `${program} -C`, program, args: ["-C", secret, ...extra] },
        { label: `${program} --config-file=`, program, args: [`--config-file=${secret}`, ...extra] },
        { label: `${program} --conf`, program, args: ["--conf", secret, ...extra] },
      ];
    });
    const r = await tacit(path.join(dir, "project"), `${ATTEMPT_PRELUDE}
for (const { label, program, args } of ${JSON.stringify(tries)}) {
  attempt(label, () => requestExecPermission([program], (proc) => proc.exec(program, args, { timeoutMs: 10000 })));
}
`, ["--strict"], { HOME: path.join(dir, "home") });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(canary);
    const found = attempts(r.stdout);
    for (const { label, program } of tries) {
      const { status, value } = attemptOf(found, label);
      expect(status, `${label}: ${JSON.stringify(value)}`).toBe("SecurityError");
      expect(String(value)).toContain(`of "${program}" is refused under --strict`);
    }
  });
});
