// The model's base URL in plain http:// to another machine: the key (a Bearer header) and every
// question, classified ones too, cross the network in clear. tacit said nothing of it. Through
// the real CLI; no chat is asked, so no server is needed.

import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, tempDirWithHome, unchecked } from "../helpers.js";

const { dir, env, cleanup } = tempDirWithHome("tacit-llm-plain-http-");
writeFileSync(path.join(dir, "one.ts"), "println(1);\n");
afterAll(cleanup);

const warning =
  "tacit: warning: llm baseUrl is plain http:// to a host other than this machine: the API key and every question chat() asks, " +
  "classified ones too, cross the network unencrypted, for anyone on the way to read; use https://\n";

describe.concurrent("a plain http:// model", () => {
  it.each([
    ["a name", "http://models.example.invalid/v1", warning],
    ["a LAN address", "http://10.1.2.3:11434/v1", warning],
    ["this machine, by name", "http://localhost:11434/v1", ""],
    ["another machine over https", "https://models.example.invalid/v1", ""],
  ])("at %s: warned of exactly when what is sent crosses the network in clear", async (_where, baseUrl, expected) => {
    const r = await runCli(unchecked(["run", "--llm-base-url", baseUrl, "--llm-api-key", "sk-test-plain-http-0000", "--llm-model", "m", "one.ts"]), { cwd: dir, env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("1\n");
    expect(r.stderr).toBe(expected);
  });
});
