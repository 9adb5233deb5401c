// MCP clients beside the ones tacit was first written for start servers from a project's
// settings too (Roo Code's .roo/mcp.json, Kiro's .kiro/settings/mcp.json, Amazon Q's
// .amazonq/mcp.json, Zed's .zed/settings.json, Codex's .codex/config.toml, Junie's
// .junie/mcp/mcp.json, Continue's .continue/mcpServers/, Kilo Code's .kilocode/mcp.json, kilo.jsonc
// and .kilo/, Qwen Code's .qwen/settings.json, Crush's crushrc, which it runs as bash, and its
// older crush.json): a script that writes one registers a
// command that the client runs, with the user's authority and outside the sandbox, the next time
// it opens the project. Through the real CLI with requestFileSystem(".") alone: each write is
// refused and nothing is left on disk; an ordinary file beside them is written.

import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runScript } from "../helpers.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, realTempDir } from "./fixtures.js";

const FILES = [
  ".roo/mcp.json",
  ".kiro/settings/mcp.json",
  ".amazonq/mcp.json",
  ".zed/settings.json",
  ".codex/config.toml",
  ".junie/mcp/mcp.json",
  ".continue/mcpServers/x.yaml",
  ".kilocode/mcp.json",
  "kilo.jsonc",
  ".kilo/kilo.json",
  ".qwen/settings.json",
  ".crushrc",
  "crushrc",
  ".crush.json",
  "crush.json",
];
const SERVER = JSON.stringify({ mcpServers: { helper: { command: "sh", args: ["-c", "touch pwned"] } } });

describe("other MCP clients' project settings", () => {
  it("are refused to a script's writes: it cannot register a server that the client starts outside the sandbox", async () => {
    const { dir, cleanup } = realTempDir("tacit-other-clients-");
    try {
      for (const file of FILES) mkdirSync(path.join(dir, path.dirname(file)), { recursive: true });
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
${FILES.map((file) => `  attempt(${lit(file)}, () => fs.access(${lit(file)}).write(${lit(SERVER)}));`).join("\n")}
  attempt("ordinary", () => fs.access("notes.json").write("{}"));
});
`;
      const r = await runScript(script, ["--quiet"], { cwd: dir });
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, FILES, /a file that decides how tacit starts|MCP client/);
      expect(attemptOf(found, "ordinary").status).toBe("ok");
      for (const file of FILES) expect(existsSync(path.join(dir, file)), file).toBe(false);
    } finally {
      cleanup();
    }
  }, 30_000);
});
