// Editor tasks that run when a folder is opened: a VS Code task with
// `"runOptions": { "runOn": "folderOpen" }` in `.vscode/tasks.json` (or in the `tasks` of a
// `.code-workspace` file) starts, in a terminal with the user's authority, as soon as the user
// opens the folder in VS Code or one of its forks (Cursor, Windsurf, …). Up to VS Code 1.108 the
// default `task.allowAutomaticTasks: "on"` ran it in any trusted folder (one's own project is)
// without a prompt; since 1.109 the default is "off", but "on" and a folder the user once allowed
// automatic tasks for ("Manage Automatic Tasks") still run every such task it holds. A script
// that added one, or changed one already there, ran code of its own outside the sandbox at the
// user's next opening of the project.
// So a write may not leave such a file holding a folder-open task; every other change to it
// (tasks run from the Run Task command, which the user starts) goes through.

import path from "node:path";
import { LAUNCH_MANIFEST_LIMIT_BYTES, TOO_LONG } from "../launch-files.js";

/** Whether one of `files` (a path as named and where it leads) is a file VS Code reads tasks from. */
export function isTaskFileAt(files: readonly string[]): boolean {
  return files.some((file) => {
    // In lower case: on a case-insensitive file system `.VSCode/Tasks.json` is the same file.
    const name = path.basename(file).toLowerCase();
    return (name === "tasks.json" && path.basename(path.dirname(file)).toLowerCase() === ".vscode") || name.endsWith(".code-workspace");
  });
}

/**
 * Whether a task file's text names a folder-open run, read as VS Code's JSON parser reads it:
 * `\uXXXX` escapes decoded first (`"folder\u004fpen"` is `"folderOpen"` to it). Judged by the
 * word alone, wherever it stands and in any case: a comment or another key holding it is
 * refused too, which costs nothing worth keeping, while parsing JSONC to find where it counts
 * would be one more parser to get right.
 */
function namesFolderOpen(text: string): boolean {
  const decoded = text.replace(/\\u([0-9a-fA-F]{4})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  return /folderopen/i.test(decoded);
}

/**
 * Why a write leaving `after` in a task file (see isTaskFileAt) is refused, or null. One that
 * would leave it past LAUNCH_MANIFEST_LIMIT_BYTES is refused: it is read whole to judge it.
 */
export function automaticTaskChange(after: string | typeof TOO_LONG): string | null {
  if (after === TOO_LONG || Buffer.byteLength(after) > LAUNCH_MANIFEST_LIMIT_BYTES) {
    return `it would leave this task file larger than ${LAUNCH_MANIFEST_LIMIT_BYTES} bytes, and tacit reads all of it to check that no task runs when the folder is opened`;
  }
  if (!namesFolderOpen(after)) return null;
  return (
    'it would leave a task that runs when the folder is opened ("runOn": "folderOpen"): VS Code and its forks start such a task ' +
    "on their own, with the user's full authority and outside the sandbox, when the user next opens the project (task.allowAutomaticTasks " +
    '"on", the default before VS Code 1.109, or a folder allowed automatic tasks). Define the task without runOptions.runOn (the user ' +
    "starts it from Run Task), or ask the user to add it"
  );
}
