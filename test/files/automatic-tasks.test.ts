// Editor tasks run when a folder is opened (runner/fs/automatic-tasks.ts): a VS Code task with
// "runOptions": { "runOn": "folderOpen" } starts on its own when the user opens the project in
// VS Code or a fork, with task.allowAutomaticTasks "on" (the default up to VS Code 1.108) or in a
// folder allowed automatic tasks. Through the real CLI, a script with requestFileSystem(".")
// alone may not write such a task into .vscode/tasks.json (new, appended, escaped, in a
// subfolder's) or a .code-workspace file; tasks the user starts, and reads, are still fine.
// Then the folder is "opened" as VS Code does with automatic tasks on (every folder-open task
// of each task file run with sh): nothing of the script's runs (no canary file).
// The same for a Dev Container configuration's initializeCommand, which runs on the host when the
// project is next opened in its container: then the container is "started" as the devcontainer
// CLI does (the initializeCommand of each configuration run on the host): no canary file.

import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync, renameSync, symlinkSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, realTempDir, tacit, writeTree } from "./fixtures.js";

interface Task {
  command?: string;
  runOptions?: { runOn?: string };
}

/** What opening `dir` runs with automatic tasks allowed: each folder-open task of `file` (JSON, as VS Code parses it, escapes decoded). */
function openFolder(dir: string, file: string): void {
  const full = path.join(dir, file);
  if (!existsSync(full)) return;
  let parsed: { tasks?: Task[] | { tasks?: Task[] } };
  try {
    parsed = JSON.parse(readFileSync(full, "utf8")) as typeof parsed;
  } catch {
    return; // A file VS Code cannot parse runs nothing.
  }
  const tasks = Array.isArray(parsed.tasks) ? parsed.tasks : (parsed.tasks?.tasks ?? []);
  for (const task of tasks) {
    if (task.runOptions?.runOn === "folderOpen" && task.command) execFileSync("sh", ["-c", task.command], { cwd: dir, stdio: "ignore" });
  }
}

/** What starting the container of `dir` runs on the host: the configuration's initializeCommand (a string with sh, a list as the command and its arguments). */
function startContainer(dir: string, file: string): void {
  const full = path.join(dir, file);
  if (!existsSync(full)) return;
  let parsed: { initializeCommand?: string | string[] };
  try {
    parsed = JSON.parse(readFileSync(full, "utf8")) as typeof parsed;
  } catch {
    return; // A configuration the CLI cannot parse starts nothing.
  }
  const command = parsed.initializeCommand;
  if (typeof command === "string") execFileSync("sh", ["-c", command], { cwd: dir, stdio: "ignore" });
  else if (Array.isArray(command) && command[0] !== undefined) execFileSync(command[0], command.slice(1), { cwd: dir, stdio: "ignore" });
}

describe("editor tasks run when the folder is opened", () => {
  it("a folder-open task may not be written into .vscode/tasks.json or a .code-workspace file", async () => {
    const { dir, cleanup } = realTempDir("tacit-auto-tasks-");
    try {
      const marker = path.join(dir, "PWNED");
      const build = `{\n  "version": "2.0.0",\n  "tasks": [{ "label": "build", "type": "shell", "command": "true" }]\n}\n`;
      writeTree(dir, { ".vscode/tasks.json": build, "sub/.vscode/tasks.json": build, "secret/.vscode/tasks.json": build });
      const onOpen = (runOn: string): string =>
        `{\n  "version": "2.0.0",\n  "tasks": [{ "label": "setup", "type": "shell", "command": "touch ${marker}", "runOptions": { "runOn": "${runOn}" } }]\n}\n`;
      const workspace = `{ "folders": [{ "path": "." }], "tasks": { "version": "2.0.0", "tasks": [{ "label": "w", "type": "shell", "command": "touch ${marker}", "runOptions": { "runOn": "folderOpen" } }] } }\n`;
      // Written up to "fold", then the rest appended: neither piece alone names the run.
      const whole = onOpen("folderOpen");
      const cut = whole.indexOf("folderOpen") + 4;
      const pieces = [whole.slice(0, cut), whole.slice(cut)] as const;
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("write", () => fs.access(".vscode/tasks.json").write(${lit(onOpen("folderOpen"))}));
  attempt("escaped", () => fs.access(".vscode/tasks.json").write(${lit(onOpen("folder\\u004fpen"))}));
  attempt("in pieces", () => {
    fs.access("sub/.vscode/tasks.json").write(${lit(pieces[0])});
    fs.access("sub/.vscode/tasks.json").append(${lit(pieces[1])});
  });
  attempt("workspace file", () => fs.access("project.code-workspace").write(${lit(workspace)}));
  attempt("classified", () => fs.access("secret/.vscode/tasks.json").writeClassified(classify(${lit(onOpen("folderOpen"))})));
  attempt("read", () => fs.access(".vscode/tasks.json").read());
  attempt("a task the user starts", () => fs.access(".vscode/tasks.json").write(${lit(onOpen("default"))}));
  attempt("ordinary", () => fs.access("notes.json").write("folderOpen"));
});
`;
      const r = await tacit(dir, script, ["--quiet", "--classified-paths", "**/secret/.vscode/tasks.json"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, ["write", "escaped", "in pieces", "workspace file"], /refused: it would leave a task that runs when the folder is opened .*Define the task without runOptions\.runOn.*ask the user/);
      expectRefused(found, ["classified"], /writeClassified\(\) refused: this is a file VS Code reads tasks from/);
      expect(attemptOf(found, "read")).toEqual({ status: "ok", value: build });
      expect(attemptOf(found, "a task the user starts").status).toBe("ok");
      expect(attemptOf(found, "ordinary").status).toBe("ok");
      // The user opens the project, and its subfolder, with automatic tasks allowed.
      openFolder(dir, ".vscode/tasks.json");
      openFolder(path.join(dir, "sub"), ".vscode/tasks.json");
      openFolder(path.join(dir, "secret"), ".vscode/tasks.json");
      openFolder(dir, "project.code-workspace");
      expect(existsSync(marker)).toBe(false);
    } finally {
      cleanup();
    }
  }, 60_000);

  it("a Dev Container configuration may not come to hold an initializeCommand, which runs on the host", async () => {
    const { dir, cleanup } = realTempDir("tacit-devcontainer-");
    try {
      const marker = path.join(dir, "PWNED");
      const plain = `{\n  "image": "mcr.microsoft.com/devcontainers/base:ubuntu"\n}\n`;
      writeTree(dir, {
        ".devcontainer/devcontainer.json": plain,
        ".devcontainer/py/devcontainer.json": plain,
        "sub/.devcontainer.json": plain,
        "secret/.devcontainer.json": plain,
        "docs/notes.md": "x\n",
      });
      const initialize = (key: string, command: string | string[]): string =>
        `{\n  "image": "mcr.microsoft.com/devcontainers/base:ubuntu",\n  ${JSON.stringify(key)}: ${JSON.stringify(command)}\n}\n`;
      const whole = initialize("initializeCommand", `touch ${marker}`);
      const cut = whole.indexOf("initializeCommand") + 6;
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("write", () => fs.access(".devcontainer/devcontainer.json").write(${lit(whole)}));
  attempt("a list", () => fs.access(".devcontainer/devcontainer.json").write(${lit(initialize("initializeCommand", ["touch", marker]))}));
  attempt("escaped", () => fs.access(".devcontainer/devcontainer.json").write(${lit(whole.replace("initializeCommand", "initialize\\u0043ommand"))}));
  attempt("a named configuration", () => fs.access(".devcontainer/py/devcontainer.json").write(${lit(whole)}));
  attempt("in pieces", () => {
    fs.access("sub/.devcontainer.json").write(${lit(whole.slice(0, cut))});
    fs.access("sub/.devcontainer.json").append(${lit(whole.slice(cut))});
  });
  attempt("a new one", () => fs.access("new/.devcontainer.json").write(${lit(whole)}));
  attempt("classified", () => fs.access("secret/.devcontainer.json").writeClassified(classify(${lit(whole)})));
  attempt("classified, appended", () => fs.access("secret/.devcontainer.json").append("x"));
  attempt("read", () => fs.access(".devcontainer/devcontainer.json").read());
  attempt("a command in the container", () => fs.access(".devcontainer/devcontainer.json").write(${lit(initialize("postCreateCommand", "npm ci"))}));
  attempt("another file of that name", () => fs.access("docs/devcontainer.json").write(${lit(whole)}));
});
`;
      const r = await tacit(dir, script, ["--quiet", "--classified-paths", "**/secret/.devcontainer.json"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(
        found,
        ["write", "a list", "escaped", "a named configuration", "in pieces", "a new one"],
        /refused: it would leave a Dev Container configuration holding an initializeCommand, which runs on the host .*Put the command in postCreateCommand or postStartCommand.*ask the user/,
      );
      expectRefused(found, ["classified"], /writeClassified\(\) refused: this is a Dev Container configuration/);
      expectRefused(found, ["classified, appended"], /append refused: the path is classified/);
      expect(attemptOf(found, "read")).toEqual({ status: "ok", value: plain });
      expect(attemptOf(found, "a command in the container").status).toBe("ok");
      expect(attemptOf(found, "another file of that name").status).toBe("ok");
      expect(existsSync(path.join(dir, "new"))).toBe(false);
      // The user opens the project, its named configuration and its subfolder in their containers.
      for (const [at, file] of [[dir, ".devcontainer/devcontainer.json"], [dir, ".devcontainer/py/devcontainer.json"], [path.join(dir, "sub"), ".devcontainer.json"], [path.join(dir, "secret"), ".devcontainer.json"]] as const) {
        startContainer(at, file);
      }
      expect(existsSync(marker)).toBe(false);
    } finally {
      cleanup();
    }
  }, 60_000);
});

describe("task files and Dev Container configurations behind a name that flips to a link", () => {
  // The checks that judge a write by what it leaves ran on the path as resolved before opening:
  // d/tasks.json is no task file, so nothing was judged, and the open followed d, swapped
  // meanwhile for a link to .vscode, into .vscode/tasks.json. Where a write lands is judged again.
  const ROUNDS = 400;
  it("a write judged as going to d/ never lands a folder-open task or an initializeCommand in .vscode/ or .devcontainer/", async () => {
    const { dir: root, cleanup } = realTempDir("tacit-auto-tasks-race-");
    let swapper: ChildProcess | null = null;
    try {
      const tasks = `{ "version": "2.0.0", "tasks": [] }\n`;
      const config = `{ "image": "mcr.microsoft.com/devcontainers/base:ubuntu" }\n`;
      writeTree(root, { ".vscode/tasks.json": tasks, ".devcontainer/devcontainer.json": config, "dreal/notes.txt": "x\n" });
      symlinkSync(".vscode", path.join(root, "spare-tasks"));
      symlinkSync(".devcontainer", path.join(root, "spare-container"));
      swapper = spawn(
        process.execPath,
        [
          "-e",
          `const fs = require("fs");
for (;;) {
  for (const spare of ["spare-tasks", "spare-container"]) {
    try { fs.renameSync("d", "hold"); fs.renameSync(spare, "d"); } catch {}
    try { fs.renameSync("d", spare); fs.renameSync("hold", "d"); } catch {}
  }
}`,
        ],
        { cwd: root, stdio: "ignore" },
      );
      renameSync(path.join(root, "dreal"), path.join(root, "d"));
      const marker = path.join(root, "PWNED");
      const task = JSON.stringify({ version: "2.0.0", tasks: [{ label: "x", type: "shell", command: `touch ${marker}`, runOptions: { runOn: "folderOpen" } }] });
      const container = JSON.stringify({ image: "mcr.microsoft.com/devcontainers/base:ubuntu", initializeCommand: `touch ${marker}` });
      const script = `
const counts = { wrote: 0, refused: 0, failed: 0 };
requestFileSystem(".", (fs) => {
  for (let i = 0; i < ${ROUNDS}; i++) {
    for (const [name, content] of [["d/tasks.json", ${lit(task)}], ["d/devcontainer.json", ${lit(container)}]]) {
      try { fs.access(name).write(content); counts.wrote++; } catch (e) { if (e instanceof SecurityError) counts.refused++; else counts.failed++; }
    }
  }
});
println(JSON.stringify(counts));
`;
      const r = await tacit(root, script, ["--quiet"]);
      swapper.kill("SIGKILL");
      expect.soft(readFileSync(path.join(root, ".vscode/tasks.json"), "utf8"), "a folder-open task landed in .vscode/tasks.json").toBe(tasks);
      expect.soft(readFileSync(path.join(root, ".devcontainer/devcontainer.json"), "utf8"), "an initializeCommand landed in .devcontainer/").toBe(config);
      expect(r.code, r.stderr).toBe(0);
      const counts = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as { wrote: number; refused: number };
      // The swap really raced the script: writes landed in the directory, and others were refused.
      expect(counts.wrote).toBeGreaterThan(0);
      expect(counts.refused).toBeGreaterThan(0);
      // The user opens the project, and its container.
      openFolder(root, ".vscode/tasks.json");
      startContainer(root, ".devcontainer/devcontainer.json");
      expect(existsSync(marker)).toBe(false);
    } finally {
      swapper?.kill("SIGKILL");
      cleanup();
    }
  }, 60_000);
});
