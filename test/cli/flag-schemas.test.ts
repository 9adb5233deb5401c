// Flags are validated with the config file's schema of each key they give (runner/config.ts
// parseFlagConfig builds only those), and a config file with its whole schema, the policy's
// rules among it (made on first use). Both still refuse what they refused, with the same words,
// before anything runs.

import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, tempDir } from "../helpers.js";

const { dir, cleanup } = tempDir("tacit-flag-schemas-");
afterAll(cleanup);

function configFile(name: string, content: unknown): string {
  const file = path.join(dir, name);
  writeFileSync(file, JSON.stringify(content));
  return file;
}

describe("flags and config files checked by the same schemas", () => {
  it("2: a flag's value out of the schema's range is refused as the file's is, and nothing runs", async () => {
    const byFlag = await runCli(["run", "--no-check", "--memory-limit-mb", "70000", "examples/hello.ts"]);
    expect(byFlag.code).toBe(2);
    expect(byFlag.stdout).toBe("");
    const flagMessage = /^tacit: flags: (memoryLimitMb: .*)$/m.exec(byFlag.stderr);
    expect(flagMessage, byFlag.stderr).not.toBeNull();
    expect(flagMessage![1]).toContain("65536");

    const config = configFile("too-much-memory.json", { memoryLimitMb: 70000 });
    const byFile = await runCli(["run", "--no-check", "--config", config, "examples/hello.ts"]);
    expect(byFile.code).toBe(2);
    expect(byFile.stdout).toBe("");
    expect(byFile.stderr).toContain(`tacit: ${config}: ${flagMessage![1]}`);
  });

  it("2: a config file's policy is checked whole (its schema is made when a file has one), and nothing runs", async () => {
    const config = configFile("policy-command-line.json", { policy: { rules: [{ action: "exec", tier: "always-ask", command: "git push" }] } });
    const r = await runCli(["run", "--no-check", "--config", config, "examples/hello.ts"]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("policy.rules.0.command");
    expect(r.stderr).toContain("holds a space");
  });
});
