// The programs an AI coding client runs on its own, named by its settings. Claude Code runs the
// `command` of each hook in its settings' `hooks` (PreToolUse and PostToolUse around every tool
// call, an MCP tool's included, SessionStart, Stop, …) with bash, its `statusLine` command at
// every status update and its `apiKeyHelper` when it needs a key, all with the user's authority
// and without asking; Gemini CLI runs its settings' hooks the same way (BeforeTool, AfterTool, …),
// and Cursor (1.7 and later) the hooks of its hooks.json (beforeShellExecution, beforeMCPExecution
// before every MCP tool call, afterFileEdit, stop, …).
// Claude Code's and Gemini CLI's settings files are tacit's launch files (launch-files.ts), which a
// script may read but not change; but the scripts their commands name are ordinary project files
// (`"$CLAUDE_PROJECT_DIR"/.claude/hooks/format.sh` is the usual way to write a hook), and a write
// keeps an executable file's mode. Shown through the real CLI with the project's
// .claude/settings.json holding a PostToolUse hook `"$CLAUDE_PROJECT_DIR"/.claude/hooks/format.sh`
// (matcher `mcp__.*`): a script with requestFileSystem(".") alone rewrote format.sh, and the hook,
// run as Claude Code runs it right after the tacit tool call returned, ran the script's `touch PWNED`.
// So a script may not change, create or delete a file such a command names by its path: in the
// settings of the project tacit was started in (.claude/settings.json, .claude/settings.local.json,
// .gemini/settings.json, .cursor/hooks.json), the user's and the system's, each command read as
// bash reads it, `$CLAUDE_PROJECT_DIR` and `$GEMINI_PROJECT_DIR` as the project, a relative path
// from it (and for Cursor from its hooks file's directory); a settings file read as JSON with
// comments (Gemini CLI allows them). Read again only when a settings file changed.
// And Cursor's hooks files themselves, which no launch file covers: a script could write the
// project's .cursor/hooks.json, and Cursor would run its command before the agent's next MCP tool
// call (Cursor is not installable here: this follows its documentation, and the test runs each
// hook's command as Cursor would).
// Confined commands (--confine-commands) find the same files read-only, and one they make where
// there was none is removed after them (exec/confinement.ts).
// Not covered: what those scripts run in turn, a path given through another variable, other
// clients' hooks (Codex's notify, Windsurf's, Cline's, Kiro's).

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

/**
 * The settings files Claude Code, Gemini CLI and Cursor read for the project `project`, each with
 * the directories a relative path in its commands is taken from (Cursor's from the hooks file's
 * directory, some say, or the project's: both count).
 */
function settingsFiles(project: string): ReadonlyArray<{ file: string; bases: string[] }> {
  const home = os.homedir();
  // Strings alone decide them: made again only when the project or the home differs (each write asks).
  if (lastSettings?.project === project && lastSettings.home === home) return lastSettings.files;
  const files = settingsFilesOf(project, home);
  lastSettings = { project, home, files };
  return files;
}

/** The last settingsFiles() made, and for which project and home. */
let lastSettings: { project: string; home: string; files: ReadonlyArray<{ file: string; bases: string[] }> } | undefined;

function settingsFilesOf(project: string, home: string): ReadonlyArray<{ file: string; bases: string[] }> {
  const fromProject = (file: string): { file: string; bases: string[] } => ({ file, bases: [project] });
  return [
    fromProject(path.join(project, ".claude", "settings.json")),
    fromProject(path.join(project, ".claude", "settings.local.json")),
    fromProject(path.join(home, ".claude", "settings.json")),
    fromProject("/etc/claude-code/managed-settings.json"),
    fromProject(path.join(project, ".gemini", "settings.json")),
    fromProject(path.join(home, ".gemini", "settings.json")),
    fromProject("/etc/gemini-cli/settings.json"),
    fromProject("/etc/gemini-cli/system-defaults.json"),
    ...cursorHookFiles(project, home).map((file) => ({ file, bases: [project, path.dirname(file)] })),
  ];
}

/** Cursor's hooks files: the project's, the user's and the system's. Unlike the others, no launch file covers them. */
function cursorHookFiles(project: string, home: string = os.homedir()): string[] {
  return [path.join(project, ".cursor", "hooks.json"), path.join(home, ".cursor", "hooks.json"), "/etc/cursor/hooks.json"];
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
    for (const { file: settings, bases } of settingsFiles(project)) {
      for (const command of commandsIn.get(settings) ?? []) {
        // As bash reads it when the client runs it: quotes off, the project's variable the project, from the project's directory.
        const known = { CLAUDE_PROJECT_DIR: project, GEMINI_PROJECT_DIR: project };
        const words = shellWords(command, { known, home: os.homedir() })
          .filter((word) => !word.expands)
          .map((word) => word.text);
        for (const base of bases) for (const file of pathWords(words, base)) named.push({ file, by: command, settings });
      }
    }
    return named;
  });
}

/**
 * The files an AI client runs on its own, for the project tacit was started in: Cursor's hooks
 * files, and each file a command of a client's settings names by its path (some may not exist).
 */
export function agentHookFiles(): string[] {
  return [...new Set([...cursorHookFiles(process.cwd()), ...namedFiles().map(({ file }) => file)])];
}

/** The file `changed` (a path a script would change) is, or lies in, that a command of an AI client's settings names; or null. */
export function agentHookChangeOf(changed: string): ProtectedPath | null {
  // In lower case: on a case-insensitive file system `.Cursor/Hooks.json` is Cursor's file.
  const hooksFile = cursorHookFiles(process.cwd()).find((file) => file.toLowerCase() === changed.toLowerCase());
  if (hooksFile !== undefined) {
    return {
      path: hooksFile,
      what: "Cursor's hooks file, whose commands Cursor runs around its agent's steps",
      readable: true,
      refusal:
        "scripts may read it but not change it (nor create or delete it): Cursor runs the commands its hooks name on its own (before " +
        "every shell command and MCP tool call, tacit's included, after every file edit, …) with the user's full authority, outside the " +
        "sandbox. Ask the user to change it",
    };
  }
  const hit = namedFiles().find(({ file }) => isWithin(changed, file));
  if (!hit) return null;
  return {
    path: hit.file,
    what: `a file a command in an AI client's settings (${hit.settings}) names: ${JSON.stringify(hit.by)}`,
    readable: true,
    refusal:
      "scripts may read it but not change it (nor create or delete it): the client (Claude Code, Gemini CLI, Cursor) runs that command on its own " +
      "(a hook around the next tool call, tacit's included, its status line, its key helper) with the user's full authority, outside the sandbox. " +
      "Ask the user to change it",
  };
}
