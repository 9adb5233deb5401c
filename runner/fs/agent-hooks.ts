// The programs an AI coding client runs on its own, named by its settings: Claude Code runs the
// `command` of each hook in its settings' `hooks` (PreToolUse and PostToolUse around every tool
// call, an MCP tool's included, SessionStart, Stop, …) with bash, its `statusLine` command at
// every status update and its `apiKeyHelper` when it needs a key, all with the user's authority
// and without asking; Gemini CLI the hooks of its settings the same way (BeforeTool, AfterTool, …,
// `$GEMINI_PROJECT_DIR/.gemini/hooks/x.sh`). Its settings files are tacit's launch files (launch-files.ts), which a
// script may read but not change; but the scripts those commands name are ordinary project files
// (`"$CLAUDE_PROJECT_DIR"/.claude/hooks/format.sh` is the usual way to write a hook), and a write
// keeps an executable file's mode. Shown through the real CLI with the project's
// .claude/settings.json holding a PostToolUse hook `"$CLAUDE_PROJECT_DIR"/.claude/hooks/format.sh`
// (matcher `mcp__.*`): a script with requestFileSystem(".") alone rewrote format.sh, and the hook,
// run as Claude Code runs it right after the tacit tool call returned, ran the script's `touch PWNED`.
// So a script may not change, create or delete a file such a command names by its path: the
// settings of the project tacit was started in (.claude/settings.json, .claude/settings.local.json,
// .gemini/settings.json), the user's (~/.claude/settings.json, ~/.gemini/settings.json) and the
// system's, each command read as bash reads it, `$CLAUDE_PROJECT_DIR` and `$GEMINI_PROJECT_DIR` as
// the project, a relative path from it; a settings file read as JSON with comments (Gemini CLI
// allows them). Read again only when a settings file changed. Not covered: what those scripts run
// in turn, a path given through another variable, other clients' hooks (Cursor's
// .cursor/hooks.json, Codex's notify).

import os from "node:os";
import path from "node:path";
import { ParsedFiles } from "../bounded-file.js";
import { parseJsonc } from "../client-settings.js";
import { shellWords } from "../shell-word.js";
import { isWithin } from "./containment.js";
import { pathWords } from "./hook-managers.js";
import { OperationMemo } from "./operation-memo.js";
import type { ProtectedPath } from "./protected-paths.js";

/** Settings are a few KiB; a larger file is judged by its first MiB (a file that does not parse names nothing Claude Code runs). */
const SETTINGS_LIMIT_BYTES = 1024 * 1024;

/** Keys whose value is a command Claude Code runs: `statusLine.command`, and each `command` under `hooks`. */
const HELPER_KEYS = ["apiKeyHelper", "awsAuthRefresh", "awsCredentialExport", "otelHeadersHelper"];

/** The settings files Claude Code and Gemini CLI read for the project `project`. */
function settingsFiles(project: string): string[] {
  const home = os.homedir();
  return [
    path.join(project, ".claude", "settings.json"),
    path.join(project, ".claude", "settings.local.json"),
    path.join(home, ".claude", "settings.json"),
    "/etc/claude-code/managed-settings.json",
    path.join(project, ".gemini", "settings.json"),
    path.join(home, ".gemini", "settings.json"),
    "/etc/gemini-cli/settings.json",
    "/etc/gemini-cli/system-defaults.json",
  ];
}

/** Every string `command` under `value` (hooks nest them in lists of matchers), at most `limit`. */
function commandsUnder(value: unknown, found: string[], depth = 0): void {
  if (depth > 8 || found.length >= 1000 || typeof value !== "object" || value === null) return;
  for (const [key, item] of Object.entries(value)) {
    if (key === "command" && typeof item === "string") found.push(item);
    else commandsUnder(item, found, depth + 1);
  }
}

/** The commands a settings file's text makes the client run on its own. */
const commandsIn = new ParsedFiles<readonly string[]>(SETTINGS_LIMIT_BYTES, (text) => {
  const settings = parseJsonc(text);
  if (typeof settings !== "object" || settings === null) return [];
  const record = settings as Record<string, unknown>;
  const commands: string[] = [];
  commandsUnder(record.hooks, commands);
  commandsUnder(record.statusLine, commands);
  for (const key of HELPER_KEYS) if (typeof record[key] === "string") commands.push(record[key]);
  return commands;
});

/** The files each command names by its path, with the command and its settings file, remembered for one operation. */
const namedMemo = new OperationMemo<ReadonlyArray<{ file: string; by: string; settings: string }>>();

function namedFiles(): ReadonlyArray<{ file: string; by: string; settings: string }> {
  return namedMemo.get("", () => {
    const project = process.cwd();
    const named: Array<{ file: string; by: string; settings: string }> = [];
    for (const settings of settingsFiles(project)) {
      for (const command of commandsIn.get(settings) ?? []) {
        // As bash reads it when the client runs it: quotes off, the project's variable the project, from the project's directory.
        const known = { CLAUDE_PROJECT_DIR: project, GEMINI_PROJECT_DIR: project };
        const words = shellWords(command, { known, home: os.homedir() }).filter((word) => !word.expands);
        for (const file of pathWords(words.map((word) => word.text), project)) named.push({ file, by: command, settings });
      }
    }
    return named;
  });
}

/** The file `changed` (a path a script would change) is, or lies in, that a command of an AI client's settings names; or null. */
export function agentHookChangeOf(changed: string): ProtectedPath | null {
  const hit = namedFiles().find(({ file }) => isWithin(changed, file));
  if (!hit) return null;
  return {
    path: hit.file,
    what: `a file a command in an AI client's settings (${hit.settings}) names: ${JSON.stringify(hit.by)}`,
    readable: true,
    refusal:
      "scripts may read it but not change it (nor create or delete it): the client (Claude Code, Gemini CLI) runs that command on its own " +
      "(a hook around the next tool call, tacit's included, its status line, its key helper) with the user's full authority, outside the sandbox. " +
      "Ask the user to change it",
  };
}
