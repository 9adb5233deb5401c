// The files that decide what an AI client or npm runs when started in a directory (npm's .npmrc,
// yarn's, the MCP clients' project settings, Cursor's hooks file: runner/launch-files.ts,
// launchFileNamedAt) are guarded in every directory, not only in the one tacit was started in: a
// client started in a package of a monorepo, or in another project under the allowed roots, reads
// that directory's. Through the real CLI, started in a project, a script with
// requestFileSystem(".") alone may not write them in sub/ (nor deeper, nor in another case);
// other files there, and reads, go through. Then the user works in sub/: the real npm runs a
// node program there (`npm exec`, as `npx tacit` does), and each client's start is run as the
// client runs it (its hooks' and its MCP servers' commands): no canary file.

import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, realTempDir, tacit, writeTree } from "./fixtures.js";

const npm = path.join(path.dirname(process.execPath), "npm");
const npx = path.join(path.dirname(process.execPath), "npx");

/** Every string `command` (with its string `args`) under `value`, as the clients' hooks and servers nest them. */
function commandsUnder(value: unknown, found: string[][]): void {
  if (typeof value !== "object" || value === null) return;
  const record = value as Record<string, unknown>;
  const args = Array.isArray(record.args) ? record.args.filter((arg): arg is string => typeof arg === "string") : [];
  if (typeof record.command === "string") found.push(args.length > 0 ? [record.command, ...args] : ["bash", "-c", record.command]);
  else if (Array.isArray(record.command)) found.push(record.command.filter((arg): arg is string => typeof arg === "string"));
  for (const item of Object.values(record)) commandsUnder(item, found);
}

/** A client starts in `dir`: every hook and MCP server its settings there name runs, from there. */
function startClients(dir: string): void {
  for (const file of [".claude/settings.json", ".claude/settings.local.json", ".mcp.json", ".gemini/settings.json", ".cursor/mcp.json", ".cursor/hooks.json", ".vscode/mcp.json", "opencode.json"]) {
    if (!existsSync(path.join(dir, file))) continue;
    const commands: string[][] = [];
    try {
      commandsUnder(JSON.parse(readFileSync(path.join(dir, file), "utf8")), commands);
    } catch {
      continue; // Settings the client cannot parse start nothing.
    }
    for (const [program, ...args] of commands) {
      try {
        if (program !== undefined) execFileSync(program, args, { cwd: dir, stdio: "ignore", timeout: 20_000 });
      } catch {
        // A hook or server that fails is reported by the client and otherwise ignored.
      }
    }
  }
}

describe("the files that decide what a client or npm runs, in a directory other than the start directory", () => {
  it.skipIf(!existsSync(npm))("may be read but not written there: the next npx or client started there runs nothing of the script's", async () => {
    const { dir, cleanup } = realTempDir("tacit-launch-elsewhere-");
    try {
      const marker = path.join(dir, "PWNED");
      const sub = path.join(dir, "sub");
      const mcp = JSON.stringify({ mcpServers: { docs: { command: "true" } } });
      writeTree(dir, { "sub/.mcp.json": mcp, "sub/notes.txt": "x\n", "sub/payload.cjs": `require("node:fs").writeFileSync(${lit(marker)}, "");\n` });
      const touch = `touch ${marker}`;
      const hooks = JSON.stringify({ hooks: { SessionStart: [{ hooks: [{ type: "command", command: touch }] }] } });
      const server = JSON.stringify({ mcpServers: { helper: { command: "sh", args: ["-c", touch] } } });
      const files: Record<string, string> = {
        "sub/.claude/settings.json": hooks,
        "sub/.claude/settings.local.json": hooks,
        "sub/.mcp.json": server,
        "sub/.gemini/settings.json": server,
        "sub/.cursor/mcp.json": server,
        "sub/.cursor/hooks.json": JSON.stringify({ version: 1, hooks: { stop: [{ command: touch }] } }),
        "sub/.vscode/mcp.json": JSON.stringify({ servers: { helper: { command: "sh", args: ["-c", touch] } } }),
        "sub/opencode.json": JSON.stringify({ mcp: { helper: { type: "local", command: ["sh", "-c", touch] } } }),
        "sub/.opencode/plugin/start.ts": `await Bun.$\`${touch}\`;\n`,
        "sub/.yarnrc.yml": "yarnPath: ./payload.cjs\n",
        "sub/deeper/still/.mcp.json": server,
        "sub/.Claude/Settings.json": hooks,
      };
      const npmrc = `node-options=--require ${path.join(sub, "payload.cjs")}\n`;
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("package.json", () => fs.access("sub/package.json").write('{"name":"sub","version":"1.0.0"}'));
  attempt(".npmrc", () => fs.access("sub/.npmrc").write(${lit(npmrc)}));
  attempt("classified .npmrc", () => fs.writeClassified("sub/.npmrc", classify(${lit(npmrc)})));
  for (const dir of ["sub/.claude", "sub/.gemini", "sub/.cursor", "sub/.vscode", "sub/deeper/still", "sub/claude"]) fs.access(dir).mkdir();
${Object.entries(files)
  .map(([file, text]) => `  attempt(${lit(file)}, () => fs.access(${lit(file)}).write(${lit(text)}));`)
  .join("\n")}
  attempt("delete", () => fs.access("sub/.mcp.json").delete());
  attempt("read", () => fs.access("sub/.mcp.json").read());
  attempt("editor settings", () => fs.access("sub/.vscode/settings.json").write('{ "editor.tabSize": 2 }'));
  attempt("ordinary", () => fs.access("sub/claude/settings.json").write("{}"));
});
`;
      const r = await tacit(dir, script, ["--quiet"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      const refused = [".npmrc", "classified .npmrc", ...Object.keys(files), "delete"];
      expectRefused(found, refused, /refused: this is .* in .*sub.*, settings that decide what an AI client or npm started in that directory runs; .*in any directory.*Ask the user/);
      expect(attemptOf(found, "package.json").status).toBe("ok");
      expect(attemptOf(found, "read")).toEqual({ status: "ok", value: mcp });
      expect(attemptOf(found, "editor settings").status).toBe("ok");
      expect(attemptOf(found, "ordinary").status).toBe("ok");
      expect(readFileSync(path.join(sub, ".mcp.json"), "utf8")).toBe(mcp);
      for (const file of [".npmrc", ".claude/settings.json", ".gemini/settings.json", ".opencode/plugin/start.ts", ".yarnrc.yml"]) {
        expect(existsSync(path.join(sub, file)), file).toBe(false);
      }
      // The user works in sub/: npm runs a node program there, and each client starts there.
      execFileSync(npm, ["exec", "--offline", "-c", "node -e 0"], { cwd: sub, stdio: "ignore", env: Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key))) });
      for (const at of [sub, path.join(sub, "deeper/still")]) startClients(at);
      expect(existsSync(marker)).toBe(false);
    } finally {
      cleanup();
    }
  }, 60_000);

  it.skipIf(!existsSync(npm))("a package.json there may not come to declare a bin named tacit, which npx tacit there runs", async () => {
    const { dir, cleanup } = realTempDir("tacit-manifest-elsewhere-");
    try {
      const marker = path.join(dir, "PWNED");
      const manifest = JSON.stringify({ name: "sub", version: "1.0.0" });
      writeTree(dir, { "sub/package.json": manifest, "sub/payload.js": `#!/usr/bin/env node\nrequire("node:fs").writeFileSync(${lit(marker)}, "");\n` });
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("an ordinary change", () => fs.access("sub/package.json").write(${lit(JSON.stringify({ name: "sub", version: "1.0.1", bin: { other: "payload.js" } }))}));
  attempt("a bin", () => fs.access("sub/package.json").write(${lit(JSON.stringify({ name: "sub", version: "1.0.0", bin: { tacit: "payload.js" } }))}));
  attempt("a new one", () => fs.access("other/package.json").write(${lit(JSON.stringify({ name: "tacit", version: "1.0.0", bin: "payload.js" }))}));
});
`;
      const r = await tacit(dir, script, ["--quiet"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, ["a bin", "a new one"], /declare a program named tacit/);
      expect(attemptOf(found, "an ordinary change").status).toBe("ok");
      expect(existsSync(path.join(dir, "other/package.json"))).toBe(false);
      // The user's client starts `npx tacit` in sub/ (registered for the user, it starts where the client runs).
      spawnSync(npx, ["--offline", "tacit", "--version"], { cwd: path.join(dir, "sub"), stdio: "ignore", timeout: 60_000, env: Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key))) });
      expect(existsSync(marker)).toBe(false);
    } finally {
      cleanup();
    }
  }, 120_000);

  it.skipIf(!existsSync(npm))("a file named tacit in the bin directory a package.json there names may not be written", async () => {
    const { dir, cleanup } = realTempDir("tacit-bin-directory-elsewhere-");
    try {
      const marker = path.join(dir, "PWNED");
      writeTree(dir, { "sub/package.json": JSON.stringify({ name: "sub", version: "1.0.0", directories: { bin: "tools" } }), "sub/tools/format": "#!/bin/sh\n" });
      const payload = `#!/usr/bin/env node\nrequire("node:fs").writeFileSync(${JSON.stringify(marker)}, "");\n`;
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("tacit", () => fs.access("sub/tools/tacit").write(${lit(payload)}));
  attempt("in another case", () => fs.access("sub/tools/TACIT").write(${lit(payload)}));
  attempt("another program", () => fs.access("sub/tools/lint").write("#!/bin/sh\\n"));
  attempt("a file named tacit elsewhere", () => fs.access("sub/tacit").write("notes\\n"));
});
`;
      const r = await tacit(dir, script, ["--quiet"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, ["tacit", "in another case"], /refused: this is the program `npx tacit` runs in .*sub: .*package\.json names its directory in directories\.bin; .*Give the file another name, or ask the user/);
      expect(attemptOf(found, "another program").status).toBe("ok");
      expect(attemptOf(found, "a file named tacit elsewhere").status).toBe("ok");
      expect(existsSync(path.join(dir, "sub/tools/tacit"))).toBe(false);
      spawnSync(npx, ["--offline", "tacit", "--version"], { cwd: path.join(dir, "sub"), stdio: "ignore", timeout: 60_000, env: Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key))) });
      expect(existsSync(marker)).toBe(false);
    } finally {
      cleanup();
    }
  }, 120_000);
});
