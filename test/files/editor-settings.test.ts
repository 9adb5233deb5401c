// VS Code's settings that name a program (runner/fs/editor-settings.ts): a subfolder's
// .vscode/settings.json and a .code-workspace file's settings may not come to change the
// integrated terminal's shell, an interpreter's or a language server's path, its command, its
// arguments or environment, or an MCP server. Through the real CLI, a script with
// requestFileSystem(".") alone may not write such settings (new, nested, escaped, appended, in a
// workspace file, in a file that does not parse); other settings, and writes that keep such a
// setting as it is, go through. Then the user opens a terminal in the subfolder and in the
// workspace, started as VS Code starts it from those settings (VS Code is not installable here:
// the default profile's path with its arguments and the terminal's env): no canary file.

import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseJsonc } from "../../runner/client-settings.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, realTempDir, tacit, writeTree } from "./fixtures.js";

interface Profile {
  path?: string;
  args?: string[];
}

/** The user opens a terminal in `dir`, with the settings of `file` there (a workspace file's under "settings"), as VS Code starts it on Linux. */
function openTerminal(dir: string, file: string): void {
  const full = path.join(dir, file);
  if (!existsSync(full)) return;
  const parsed = parseJsonc(readFileSync(full, "utf8")) as Record<string, unknown> | undefined;
  const settings = (file.endsWith(".code-workspace") ? parsed?.settings : parsed) as Record<string, unknown> | undefined;
  const name = settings?.["terminal.integrated.defaultProfile.linux"];
  const profiles = settings?.["terminal.integrated.profiles.linux"] as Record<string, Profile> | undefined;
  const profile = typeof name === "string" ? profiles?.[name] : undefined;
  const env = (settings?.["terminal.integrated.env.linux"] ?? {}) as Record<string, string>;
  try {
    execFileSync(profile?.path ?? "bash", profile?.args ?? ["-c", "eval \"$PROMPT_COMMAND\""], { cwd: dir, env: { ...process.env, ...env }, stdio: "ignore", timeout: 20_000 });
  } catch {
    // A terminal whose shell fails is closed; VS Code reports it.
  }
}

describe("VS Code's settings that name a program", () => {
  it("may not be written into a subfolder's settings or a workspace file; other settings may", async () => {
    const { dir, cleanup } = realTempDir("tacit-editor-settings-");
    try {
      const marker = path.join(dir, "PWNED");
      const kept = `{\n  // the interpreter of this folder\n  "python.defaultInterpreterPath": ".venv/bin/python",\n  "editor.tabSize": 4\n}\n`;
      writeTree(dir, { "sub/.vscode/settings.json": kept, "other/.vscode/settings.json": "{}\n", "secret/.vscode/settings.json": "{}\n", "sub/notes.txt": "x\n" });
      const profile = { "terminal.integrated.profiles.linux": { p: { path: "/bin/sh", args: ["evil.sh"] } }, "terminal.integrated.defaultProfile.linux": "p" };
      const workspace = { folders: [{ path: "sub" }], settings: profile };
      const whole = JSON.stringify(profile);
      const cut = whole.indexOf("profiles") + 3;
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("payload", () => fs.access("sub/evil.sh").write(${lit(`touch ${marker}\n`)}));
  attempt("read", () => fs.access("sub/.vscode/settings.json").read());
  attempt("terminal profile", () => fs.access("sub/.vscode/settings.json").write(${lit(whole)}));
  attempt("terminal env", () => fs.access("sub/.vscode/settings.json").write(${lit(JSON.stringify({ "terminal.integrated.env.linux": { PROMPT_COMMAND: `touch ${marker}` } }))}));
  attempt("nested", () => fs.access("sub/.vscode/settings.json").write(${lit(JSON.stringify({ terminal: { integrated: { env: { linux: { PROMPT_COMMAND: `touch ${marker}` } } } } }))}));
  attempt("escaped", () => fs.access("sub/.vscode/settings.json").write(${lit(whole.replaceAll("profiles", "profile\\u0073"))}));
  attempt("interpreter", () => fs.access("sub/.vscode/settings.json").write(${lit(kept.replace(".venv/bin/python", "/bin/sh"))}));
  attempt("runtime arguments", () => fs.access("sub/.vscode/settings.json").write(${lit(JSON.stringify({ "eslint.execArgv": ["--require", "./evil.cjs"] }))}));
  attempt("plugin paths", () => fs.access("sub/.vscode/settings.json").write(${lit(JSON.stringify({ "typescript.tsserver.pluginPaths": ["./plugins"] }))}));
  attempt("mcp server", () => fs.access("sub/.vscode/settings.json").write(${lit(JSON.stringify({ mcp: { servers: { x: { command: "sh", args: ["evil.sh"] } } } }))}));
  attempt("in pieces", () => {
    fs.access("other/.vscode/settings.json").write(${lit(whole.slice(0, cut))});
    fs.access("other/.vscode/settings.json").append(${lit(whole.slice(cut))});
  });
  attempt("does not parse", () => fs.access("other/.vscode/settings.json").write(${lit(`{ "editor.tabSize": 2 ${whole.slice(1)}`)}));
  attempt("workspace file", () => fs.access("project.code-workspace").write(${lit(JSON.stringify(workspace))}));
  attempt("classified", () => fs.access("secret/.vscode/settings.json").write("{}"));
  attempt("other settings", () => fs.access("sub/.vscode/settings.json").write(${lit(kept.replace('"editor.tabSize": 4', '"editor.tabSize": 2,\n  "python.analysis.extraPaths": ["src"]'))}));
  attempt("a workspace of folders", () => fs.access("plain.code-workspace").write(${lit(JSON.stringify({ folders: [{ path: "sub" }], settings: { "editor.tabSize": 2 } }))}));
});
`;
      const r = await tacit(dir, script, ["--quiet", "--classified-paths", "**/secret/.vscode/settings.json"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(
        found,
        ["terminal profile", "terminal env", "nested", "escaped", "interpreter", "runtime arguments", "plugin paths", "mcp server", "in pieces", "does not parse", "workspace file"],
        /refused: it would change a VS Code setting that names a program VS Code or an extension starts on its own .*Change other settings.*ask the user/,
      );
      expectRefused(found, ["classified"], /write refused: the path is classified/);
      expect(attemptOf(found, "payload").status).toBe("ok");
      expect(attemptOf(found, "read")).toEqual({ status: "ok", value: kept });
      expect(attemptOf(found, "other settings").status).toBe("ok");
      expect(attemptOf(found, "a workspace of folders").status).toBe("ok");
      expect(readFileSync(path.join(dir, "sub/.vscode/settings.json"), "utf8")).toContain('"python.defaultInterpreterPath": ".venv/bin/python"');
      expect(existsSync(path.join(dir, "project.code-workspace"))).toBe(false);
      // The user opens a terminal in the subfolder, the other one and the workspace.
      openTerminal(path.join(dir, "sub"), ".vscode/settings.json");
      openTerminal(path.join(dir, "other"), ".vscode/settings.json");
      openTerminal(path.join(dir, "sub"), "../project.code-workspace");
      expect(existsSync(marker)).toBe(false);
    } finally {
      cleanup();
    }
  }, 60_000);
});
