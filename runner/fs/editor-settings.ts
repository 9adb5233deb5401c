// VS Code's settings that name a program VS Code or an extension starts on its own: the shell of
// the integrated terminal (`terminal.integrated.profiles.linux` with `defaultProfile`, `shellArgs`,
// `env` such as PROMPT_COMMAND) at the next terminal the user opens, a language server, linter or
// interpreter an extension starts when the folder is opened (`python.defaultInterpreterPath`,
// `eslint.runtime` with `eslint.execArgv`, `rust-analyzer.server.path`, `clangd.path`,
// `rust-analyzer.check.overrideCommand`, `jest.jestCommandLine`, …), and the MCP servers of the
// `mcp` key. In a trusted folder (one's own project is) they apply without asking. The start
// directory's .vscode/settings.json is a launch file (launch-files.ts), which a script may not
// change at all; but a subfolder's .vscode/settings.json (the settings of that folder, opened on
// its own or as a folder of a multi-root workspace) and the `settings` of a `.code-workspace` file
// (opened as the workspace, which VS Code offers on opening the folder) were ordinary files.
// Shown through the real CLI: a script with requestFileSystem(".") alone wrote
// `"terminal.integrated.profiles.linux": { "p": { "path": "/bin/sh", "args": ["evil.sh"] } }` with
// `defaultProfile` into sub/.vscode/settings.json and project.code-workspace, and evil.sh beside
// them; the terminal VS Code starts from those settings ran evil.sh (VS Code is not installable
// here: the test starts the default profile as VS Code does).
// So a write may not change what such a file's program settings are: each key (nested objects
// flattened to dotted keys, as VS Code reads them) whose last word names a program, its arguments
// or its environment (`…path`, `…executable`, `…runtime`, `…execArgv`, `…command`, `…args`,
// `…env`, `…interpreter`, `…wrapper`, `…pluginPaths`, …), the integrated terminal's shell settings, and `mcp`, with
// their values, must be the same before and after. Every other setting (formatting, search,
// linting rules, …) goes through. A file that does not parse as JSON with comments (VS Code's
// parser recovers from errors and may read it anyway) is judged by its strings: none may be such a
// key. Judged by the key's words: an extension's setting that names a program by another word is
// not covered.

import path from "node:path";
import { parseJsonc, stringsIn } from "../client-settings.js";
import { LAUNCH_MANIFEST_LIMIT_BYTES, type ManifestText, TOO_LONG } from "../launch-files.js";

/** Whether one of `files` (a path as named and where it leads) is VS Code's folder settings or a workspace file. */
export function isEditorSettingsAt(files: readonly string[]): boolean {
  return files.some((file) => {
    // In lower case: on a case-insensitive file system `.VSCode/Settings.json` is the same file.
    const name = path.basename(file).toLowerCase();
    return (name === "settings.json" && path.basename(path.dirname(file)).toLowerCase() === ".vscode") || name.endsWith(".code-workspace");
  });
}

/** The last word of a setting's key that says it names a program, its arguments or its environment. */
const PROGRAM_WORD = /(?:path|executable|runtime|execargv|command|commands|commandline|args|arguments|env|envvars|envfile|interpreter|wrapper|tools|home|binary|plugins|pluginpaths)$/;

/** Whether a setting's key (dotted, in lower case) names a program VS Code or an extension starts. */
function isProgramKey(key: string): boolean {
  const words = key.split(".");
  if (words.includes("mcp")) return true;
  if (/(?:^|\.)terminal\.integrated\.(?:profiles|defaultprofile|shell|shellargs|env|automationprofile|automationshell)(?:\.|$)/.test(key)) return true;
  return words.some((word) => PROGRAM_WORD.test(word));
}

/** Every program setting of `value` (nested objects flattened to dotted keys), with its value as JSON, sorted. */
function programSettingsOf(value: unknown, prefix: string, found: string[], depth = 0): void {
  if (depth > 16 || typeof value !== "object" || value === null || Array.isArray(value)) return;
  for (const [name, item] of Object.entries(value)) {
    const key = prefix === "" ? name.toLowerCase() : `${prefix}.${name.toLowerCase()}`;
    if (isProgramKey(key)) found.push(`${key}=${JSON.stringify(item)}`);
    else programSettingsOf(item, key, found, depth + 1);
  }
}

/** What `text` makes VS Code run, as one comparable string; null when it does not parse (then it is judged by its strings). */
function programSettings(text: string | null): string | null {
  if (text === null) return "";
  const parsed = parseJsonc(text.replace(/^\uFEFF/, ""));
  if (parsed === undefined) return null;
  const found: string[] = [];
  programSettingsOf(parsed, "", found);
  return found.sort().join("\n");
}

/**
 * Why a write leaving `after` over `before` in VS Code's settings or a workspace file (see
 * isEditorSettingsAt) is refused, or null. Past LAUNCH_MANIFEST_LIMIT_BYTES it is refused: it is read whole to judge it.
 */
export function editorProgramChange(before: ManifestText, after: string | typeof TOO_LONG): string | null {
  if (after === TOO_LONG || before === TOO_LONG || Buffer.byteLength(after) > LAUNCH_MANIFEST_LIMIT_BYTES) {
    return `it would leave (or change) VS Code settings larger than ${LAUNCH_MANIFEST_LIMIT_BYTES} bytes, and tacit reads all of them to check that they start no program of the script's`;
  }
  const now = programSettings(after);
  const was = programSettings(before);
  if (now === null ? !stringsIn(after).some((text) => isProgramKey(text.toLowerCase())) : now === was) return null;
  return (
    "it would change a VS Code setting that names a program VS Code or an extension starts on its own (the integrated terminal's shell, " +
    "profiles or env, an interpreter, language server, linter or runtime by its path, command, arguments or environment, or an MCP server " +
    "under mcp), which in a trusted folder runs with the user's full authority, outside the sandbox, when the user next opens the folder " +
    "or a terminal there. Change other settings (they may be written), or ask the user to change that one"
  );
}
