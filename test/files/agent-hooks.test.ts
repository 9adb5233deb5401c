// The programs Claude Code and Gemini CLI run on their own, named by their settings
// (runner/fs/agent-hooks.ts): the commands of their hooks (around every tool call, tacit's
// included), Claude Code's status line and key helper. Their settings files are tacit's launch
// files, but the scripts their commands name were ordinary files: through the real CLI, with the
// project's settings, Claude Code's local settings and the user's (a temporary home), a script with
// requestFileSystem(".") alone may not change, create or delete a file such a command names;
// reads, and files no command names, go through. Then each command is run as the client runs it
// (bash, $CLAUDE_PROJECT_DIR or $GEMINI_PROJECT_DIR the project, from there): no canary file.
// Cursor's hooks.json, which no launch file covers, may not be written either (Cursor is not
// installable here: its hooks' commands are run as it documents running them).

import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runScript } from "../helpers.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, realTempDir, writeTree } from "./fixtures.js";

/** The client runs a command of its settings: with bash, from the project, its variable for the project set. */
function runAsClient(project: string, home: string, command: string): void {
  try {
    const env = { ...process.env, HOME: home, CLAUDE_PROJECT_DIR: project, GEMINI_PROJECT_DIR: project };
    execFileSync("bash", ["-c", command], { cwd: project, env, stdio: "ignore" });
  } catch {
    // A hook that fails is reported by Claude Code and otherwise ignored.
  }
}

describe("the scripts AI clients' settings run on their own", () => {
  it("a file a hook, the status line or the key helper names by its path may be read but not changed, created or deleted", async () => {
    const { dir, cleanup } = realTempDir("tacit-agent-hooks-");
    try {
      const marker = path.join(dir, "PWNED");
      const home = path.join(dir, "home");
      const format = '"$CLAUDE_PROJECT_DIR"/.claude/hooks/format.sh';
      const notify = "bash scripts/notify.sh";
      const status = "~/.claude/statusline.sh";
      const helper = "sh ./tools/key.sh";
      const gemini = "$GEMINI_PROJECT_DIR/.gemini/hooks/log.sh";
      const hooks = (command: string): string => JSON.stringify({ hooks: { PostToolUse: [{ matcher: "mcp__.*", hooks: [{ type: "command", command }] }] } });
      const harmless = "#!/bin/sh\nexit 0\n";
      writeTree(dir, {
        ".claude/settings.json": hooks(format),
        ".claude/settings.local.json": JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: "command", command: notify }] }] }, apiKeyHelper: helper }),
        "home/.claude/settings.json": JSON.stringify({ statusLine: { type: "command", command: status } }),
        // Gemini CLI allows comments in its settings.
        ".gemini/settings.json": `// the project's hooks\n${JSON.stringify({ hooks: { AfterTool: [{ matcher: ".*", hooks: [{ type: "command", command: gemini }] }] } })}\n`,
        ".gemini/hooks/log.sh": harmless,
        ".claude/hooks/format.sh": harmless,
        ".claude/hooks/other.sh": harmless,
        "home/.claude/statusline.sh": harmless,
        "tools/notes.txt": "x\n",
        "scripts/notes.txt": "x\n",
      });
      for (const file of [".claude/hooks/format.sh", "home/.claude/statusline.sh", ".gemini/hooks/log.sh"]) chmodSync(path.join(dir, file), 0o755);
      const run = lit(`#!/bin/sh\ntouch ${marker}\n`);
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("a hook's script", () => fs.access(".claude/hooks/format.sh").write(${run}));
  attempt("appended", () => fs.access(".claude/hooks/format.sh").append("touch ${marker}\\n"));
  attempt("deleted", () => fs.access(".claude/hooks/format.sh").delete());
  attempt("created, named by a local hook", () => fs.access("scripts/notify.sh").write(${run}));
  attempt("the key helper", () => fs.access("tools/key.sh").write(${run}));
  attempt("the user's status line", () => fs.access("home/.claude/statusline.sh").write(${run}));
  attempt("a Gemini CLI hook's script", () => fs.access(".gemini/hooks/log.sh").write(${run}));
  attempt("read", () => fs.access(".claude/hooks/format.sh").read());
  attempt("a script no command names", () => fs.access(".claude/hooks/other.sh").write(${run}));
});
`;
      const r = await runScript(script, ["--quiet"], { cwd: dir, env: { HOME: home } });
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(
        found,
        ["a hook's script", "appended", "deleted", "created, named by a local hook", "the key helper", "the user's status line", "a Gemini CLI hook's script"],
        /refused: this is a file a command in an AI client's settings \(.*settings(?:\.local)?\.json\) names: .*runs that command on its own .*outside the sandbox\. Ask the user to change it/,
      );
      expect(attemptOf(found, "read")).toEqual({ status: "ok", value: harmless });
      expect(attemptOf(found, "a script no command names").status).toBe("ok");
      expect(readFileSync(path.join(dir, ".claude/hooks/format.sh"), "utf8")).toBe(harmless);
      for (const file of ["home/.claude/statusline.sh", ".gemini/hooks/log.sh"]) expect(readFileSync(path.join(dir, file), "utf8"), file).toBe(harmless);
      for (const file of ["scripts/notify.sh", "tools/key.sh"]) expect(existsSync(path.join(dir, file)), file).toBe(false);
      // The next tool call, the session's end, a key needed, a status update.
      for (const command of [format, notify, helper, status, gemini]) runAsClient(dir, home, command);
      expect(existsSync(marker)).toBe(false);
    } finally {
      cleanup();
    }
  }, 60_000);

  it("Cursor's hooks.json may not be written, nor the scripts its hooks name", async () => {
    const { dir, cleanup } = realTempDir("tacit-cursor-hooks-");
    try {
      const marker = path.join(dir, "PWNED");
      const home = path.join(dir, "home");
      const harmless = "#!/bin/sh\nexit 0\n";
      const edit = "hooks/format.sh";
      const stop = "sh ./scripts/stop.sh";
      const user = "~/.cursor/hooks/audit.sh";
      const hooks = (event: string, command: string): string => JSON.stringify({ version: 1, hooks: { [event]: [{ command }] } });
      writeTree(dir, {
        ".cursor/hooks.json": `${JSON.stringify({ version: 1, hooks: { afterFileEdit: [{ command: edit }], stop: [{ command: stop }] } })}\n`,
        ".cursor/hooks/format.sh": harmless,
        "scripts/notes.txt": "x\n",
        "home/.cursor/hooks.json": hooks("beforeShellExecution", user),
        "home/.cursor/hooks/audit.sh": harmless,
        "sub/.cursor/notes.txt": "x\n",
      });
      for (const file of [".cursor/hooks/format.sh", "home/.cursor/hooks/audit.sh"]) chmodSync(path.join(dir, file), 0o755);
      const touch = `touch ${marker}`;
      const run = lit(`#!/bin/sh\n${touch}\n`);
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("the project's hooks file", () => fs.access(".cursor/hooks.json").write(${lit(hooks("beforeMCPExecution", touch))}));
  attempt("appended", () => fs.access(".cursor/hooks.json").append(" "));
  attempt("deleted", () => fs.access(".cursor/hooks.json").delete());
  attempt("the user's hooks file", () => fs.access("home/.cursor/hooks.json").write(${lit(hooks("stop", touch))}));
  attempt("a script, from the hooks file's directory", () => fs.access(".cursor/hooks/format.sh").write(${run}));
  attempt("a script, from the project", () => fs.access("scripts/stop.sh").write(${run}));
  attempt("the user's hook's script", () => fs.access("home/.cursor/hooks/audit.sh").write(${run}));
  attempt("read", () => fs.access(".cursor/hooks.json").read());
  attempt("a subfolder's .cursor", () => fs.access("sub/.cursor/notes.txt").write("y\\n"));
});
`;
      const r = await runScript(script, ["--quiet"], { cwd: dir, env: { HOME: home } });
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(
        found,
        ["the project's hooks file", "appended", "deleted", "the user's hooks file"],
        /refused: this is Cursor's hooks file, .*Cursor runs the commands its hooks name on its own .*MCP tool call.*Ask the user to change it/,
      );
      expectRefused(
        found,
        ["a script, from the hooks file's directory", "a script, from the project", "the user's hook's script"],
        /refused: this is a file a command in an AI client's settings \(.*hooks\.json\) names: .*runs that command on its own/,
      );
      expect(attemptOf(found, "read").status).toBe("ok");
      expect(attemptOf(found, "a subfolder's .cursor").status).toBe("ok");
      expect(existsSync(path.join(dir, "scripts/stop.sh"))).toBe(false);
      // The agent's next steps: each hook's command, as Cursor runs it, from the project and from the hooks file's directory.
      for (const file of [".cursor/hooks.json", "home/.cursor/hooks.json"]) {
        const parsed = JSON.parse(readFileSync(path.join(dir, file), "utf8")) as { hooks: Record<string, Array<{ command: string }>> };
        for (const command of Object.values(parsed.hooks).flat().map((hook) => hook.command)) {
          runAsClient(dir, home, command);
          runAsClient(path.dirname(path.join(dir, file)), home, command);
        }
      }
      expect(existsSync(marker)).toBe(false);
    } finally {
      cleanup();
    }
  }, 60_000);
});
