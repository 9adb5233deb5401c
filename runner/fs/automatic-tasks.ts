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
//
// The same for a Dev Container configuration (`.devcontainer/devcontainer.json`,
// `.devcontainer/<name>/devcontainer.json`, `.devcontainer.json`): its `initializeCommand` runs on
// the host, not in the container, with the user's authority, before the container is created and
// again at every start of it, so when the user next opens the project in its container (VS Code's
// Dev Containers, `devcontainer up`). Shown with @devcontainers/cli 0.89.0: a script that added
// `"initializeCommand": "touch PWNED"` had PWNED made on the host at the next `devcontainer up`.
// Its other commands (postCreateCommand, postStartCommand, …) run inside the container.

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

/** `text` with its JSON `\uXXXX` escapes decoded, as a JSON(C) parser reads keys and strings. */
const decodedEscapes = (text: string): string => text.replace(/\\u([0-9a-fA-F]{4})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));

/**
 * Whether a task file's text names a folder-open run, read as VS Code's JSON parser reads it:
 * `\uXXXX` escapes decoded first (`"folder\u004fpen"` is `"folderOpen"` to it). Judged by the
 * word alone, wherever it stands and in any case: a comment or another key holding it is
 * refused too, which costs nothing worth keeping, while parsing JSONC to find where it counts
 * would be one more parser to get right.
 */
function namesFolderOpen(text: string): boolean {
  return /folderopen/i.test(decodedEscapes(text));
}

/** Whether one of `files` (a path as named and where it leads) is a Dev Container configuration. */
export function isDevContainerConfigAt(files: readonly string[]): boolean {
  return files.some((file) => {
    // In lower case, as isTaskFileAt.
    const name = path.basename(file).toLowerCase();
    const parent = path.basename(path.dirname(file)).toLowerCase();
    const above = path.basename(path.dirname(path.dirname(file))).toLowerCase();
    return name === ".devcontainer.json" || (name === "devcontainer.json" && (parent === ".devcontainer" || above === ".devcontainer"));
  });
}

/**
 * Why a write leaving `after` in a Dev Container configuration (see isDevContainerConfigAt) is
 * refused, or null: it may not hold an initializeCommand, judged by the word alone (escapes
 * decoded, in any case), as namesFolderOpen judges a task file. One past
 * LAUNCH_MANIFEST_LIMIT_BYTES is refused: it is read whole to judge it.
 */
export function devContainerInitializeChange(after: string | typeof TOO_LONG): string | null {
  if (after === TOO_LONG || Buffer.byteLength(after) > LAUNCH_MANIFEST_LIMIT_BYTES) {
    return `it would leave this Dev Container configuration larger than ${LAUNCH_MANIFEST_LIMIT_BYTES} bytes, and tacit reads all of it to check that it runs no command on the host`;
  }
  if (!/initializecommand/i.test(decodedEscapes(after))) return null;
  return (
    "it would leave a Dev Container configuration holding an initializeCommand, which runs on the host (not in the container), with the " +
    "user's full authority and outside the sandbox, when the user next opens the project in its container (VS Code's Dev Containers, " +
    "`devcontainer up`: before the container is created and at every start of it). Put the command in postCreateCommand or " +
    "postStartCommand (they run inside the container), or ask the user to add it (a configuration that holds one already changes only by the user, or by a write that removes it)"
  );
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
