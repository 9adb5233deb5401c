// A confined command and the files an AI client runs on its own (runner/fs/agent-hooks.ts): the
// scripts the hooks of Claude Code's, Gemini CLI's and Cursor's settings name, and Cursor's hooks
// files. tacit's file API refuses to change them, but a confined `sh` appended `touch PWNED` to
// the project's .claude/hooks/format.sh, which Claude Code runs after each MCP tool call (tacit's
// too), with the user's full authority and unconfined; and it wrote a hook's script that did not
// exist yet, and a Cursor hooks file. Run through the real CLI; each hook is then run as the
// client runs it, outside tacit.

import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, symlinkSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, confinementDir, execResults, lit, tacit, writeTree } from "./fixtures.js";

const FORMAT = "#!/bin/sh\necho formatted\n";

describe("a confined command and the files an AI client runs on its own", () => {
  it("cannot change a hook's script, nor leave one that did not exist, nor a Cursor hooks file: read-only, or removed after it", async (ctx) => {
    const dir = confinementDir(ctx, "tacit-confine-agent-hooks-");
    const settings = {
      hooks: {
        PostToolUse: [
          {
            matcher: "mcp__.*",
            hooks: [
              { type: "command", command: '"$CLAUDE_PROJECT_DIR"/.claude/hooks/format.sh' },
              { type: "command", command: '"$CLAUDE_PROJECT_DIR"/.claude/hooks/later.sh' },
            ],
          },
        ],
      },
    };
    writeTree(dir, { "project/.claude/settings.json": JSON.stringify(settings), "project/.claude/hooks/format.sh": FORMAT, "home/.keep": "" });
    const project = path.join(dir, "project");
    const hooks = path.join(project, ".claude/hooks");
    chmodSync(path.join(hooks, "format.sh"), 0o755);
    const proof = (name: string): string => path.join(dir, `${name}_RAN`);
    const r = await tacit(
      project,
      `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => {
  attempt("existing", () => proc.exec("sh", ["-c", ${lit(`echo 'touch ${proof("EXISTING")}' >> .claude/hooks/format.sh`)}]));
  attempt("missing", () => proc.exec("sh", ["-c", ${lit(`printf '#!/bin/sh\\ntouch ${proof("MISSING")}\\n' > .claude/hooks/later.sh && chmod +x .claude/hooks/later.sh`)}]));
  attempt("cursor", () => proc.exec("sh", ["-c", ${lit(`mkdir -p .cursor && printf '{"version":1,"hooks":{"beforeMCPExecution":[{"command":"touch ${proof("CURSOR")}"}]}}' > .cursor/hooks.json`)}]));
});
`,
      ["--command-permissions", "sh", "--confine-commands"],
      { HOME: path.join(dir, "home") },
    );
    expect(r.code, r.stderr).toBe(0);
    const result = execResults(r.stdout);
    // The script that exists is read-only to the command, and holds what it held.
    expect(result("existing").exitCode).not.toBe(0);
    expect(result("existing").stderr).toContain("Read-only file system");
    expect(readFileSync(path.join(hooks, "format.sh"), "utf8")).toBe(FORMAT);
    // Those that did not exist are removed once the command ends, and the script is told why.
    for (const [label, made] of [
      ["missing", path.join(hooks, "later.sh")],
      ["cursor", path.join(project, ".cursor/hooks.json")],
    ] as const) {
      expect(existsSync(made), made).toBe(false);
      expect(result(label).stderr).toContain(`the command made ${made}, which an AI client (Claude Code, Gemini CLI, Cursor) runs on its own`);
      expect(result(label).stderr).toContain("tacit removed it");
    }
    // The client runs its hooks as it would after the next tool call: nothing of the command's runs.
    for (const hook of ["format.sh", "later.sh"]) spawnSync("bash", ["-c", `"$CLAUDE_PROJECT_DIR"/.claude/hooks/${hook}`], { env: { ...process.env, CLAUDE_PROJECT_DIR: project } });
    const cursorHooks = path.join(project, ".cursor/hooks.json");
    if (existsSync(cursorHooks)) {
      const { hooks: cursor } = JSON.parse(readFileSync(cursorHooks, "utf8")) as { hooks: Record<string, Array<{ command: string }>> };
      for (const { command } of Object.values(cursor).flat()) spawnSync("bash", ["-c", command], { cwd: project });
    }
    for (const name of ["EXISTING", "MISSING", "CURSOR"]) expect(existsSync(proof(name)), name).toBe(false);
  });
});

describe("a hook's script whose directory did not exist", () => {
  // The command made that directory a link to one of its own holding the script: tacit would not
  // remove the script through a directory that now led elsewhere, and said "remove it yourself" to
  // the script alone, and the client's next hook ran it.
  it("cannot be reached through a link the command made in its place: the link is removed", async (ctx) => {
    const dir = confinementDir(ctx, "tacit-confine-agent-hooks-link-");
    const settings = { hooks: { PostToolUse: [{ matcher: "mcp__.*", hooks: [{ type: "command", command: '"$CLAUDE_PROJECT_DIR"/.claude/hooks/later.sh' }] }] } };
    writeTree(dir, { "project/.claude/settings.json": JSON.stringify(settings), "home/.keep": "" });
    const project = path.join(dir, "project");
    const proof = path.join(dir, "LINKED_RAN");
    const r = await tacit(
      project,
      `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => {
  attempt("linked", () => proc.exec("sh", ["-c", ${lit(`mkdir elsewhere && printf '#!/bin/sh\\ntouch ${proof}\\n' > elsewhere/later.sh && chmod +x elsewhere/later.sh && ln -s ../elsewhere .claude/hooks`)}]));
});
`,
      ["--command-permissions", "sh", "--confine-commands"],
      { HOME: path.join(dir, "home") },
    );
    expect(r.code, r.stderr).toBe(0);
    const { exitCode, stderr } = execResults(r.stdout)("linked");
    expect(exitCode, stderr).toBe(0);
    spawnSync("bash", ["-c", '"$CLAUDE_PROJECT_DIR"/.claude/hooks/later.sh'], { env: { ...process.env, CLAUDE_PROJECT_DIR: project } });
    expect(existsSync(proof)).toBe(false);
    expect(existsSync(path.join(project, ".claude/hooks"))).toBe(false);
    expect(stderr).toContain(`${path.join(project, ".claude/hooks/later.sh")} (through ${path.join(project, ".claude/hooks")}, which it made and tacit removed)`);
    // What the link led to, in the roots, is left as it was: only the link is removed.
    expect(existsSync(path.join(project, "elsewhere/later.sh"))).toBe(true);
  });
});

describe("a hook's script that is a link leading nowhere yet", () => {
  // .claude/hooks/format.sh linked to ../../scripts/format.sh, not there yet (a build's output): the
  // link existed, so nothing was to be removed, and its target could not be kept read-only. A
  // confined `sh` wrote scripts/format.sh, and the client's next hook ran it.
  it("cannot be given a target by the command: the file it made there is removed", async (ctx) => {
    const dir = confinementDir(ctx, "tacit-confine-agent-hooks-dangling-");
    const settings = { hooks: { PostToolUse: [{ matcher: "mcp__.*", hooks: [{ type: "command", command: '"$CLAUDE_PROJECT_DIR"/.claude/hooks/format.sh' }] }] } };
    writeTree(dir, { "project/.claude/settings.json": JSON.stringify(settings), "project/scripts/readme.txt": "built here\n", "project/.claude/hooks/readme.txt": "hooks\n", "home/.keep": "" });
    const project = path.join(dir, "project");
    symlinkSync("../../scripts/format.sh", path.join(project, ".claude/hooks/format.sh"));
    const proof = path.join(dir, "DANGLING_RAN");
    const r = await tacit(
      project,
      `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => {
  attempt("target", () => proc.exec("sh", ["-c", ${lit(`printf '#!/bin/sh\\ntouch ${proof}\\n' > scripts/format.sh && chmod +x scripts/format.sh`)}]));
});
`,
      ["--command-permissions", "sh", "--confine-commands"],
      { HOME: path.join(dir, "home") },
    );
    expect(r.code, r.stderr).toBe(0);
    const { exitCode, stderr } = execResults(r.stdout)("target");
    expect(exitCode, stderr).toBe(0);
    spawnSync("bash", ["-c", '"$CLAUDE_PROJECT_DIR"/.claude/hooks/format.sh'], { env: { ...process.env, CLAUDE_PROJECT_DIR: project } });
    expect(existsSync(proof)).toBe(false);
    expect(existsSync(path.join(project, "scripts/format.sh"))).toBe(false);
    expect(stderr).toContain(`the command made ${path.join(project, "scripts/format.sh")}, which an AI client (Claude Code, Gemini CLI, Cursor) runs on its own`);
  });
});

describe("the directory of a hook's script that does not exist yet", () => {
  // .claude/hooks existed, later.sh in it did not: a confined `sh` renamed .claude/hooks away and
  // linked it to a directory of its own holding later.sh. tacit would not remove that through a
  // directory that led elsewhere, said "remove it yourself" to the script alone, and the client's
  // next hook ran it.
  it("cannot be renamed away and replaced by a link", async (ctx) => {
    const dir = confinementDir(ctx, "tacit-confine-agent-hooks-renamed-");
    const settings = { hooks: { PostToolUse: [{ matcher: "mcp__.*", hooks: [{ type: "command", command: '"$CLAUDE_PROJECT_DIR"/.claude/hooks/later.sh' }] }] } };
    writeTree(dir, { "project/.claude/settings.json": JSON.stringify(settings), "project/.claude/hooks/readme.txt": "hooks\n", "home/.keep": "" });
    const project = path.join(dir, "project");
    const proof = path.join(dir, "RENAMED_RAN");
    const r = await tacit(
      project,
      `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => {
  attempt("renamed", () => proc.exec("sh", ["-c", ${lit(`mkdir elsewhere && printf '#!/bin/sh\\ntouch ${proof}\\n' > elsewhere/later.sh && chmod +x elsewhere/later.sh && mv .claude/hooks .claude/hooks.old && ln -s ../elsewhere .claude/hooks`)}]));
});
`,
      ["--command-permissions", "sh", "--confine-commands"],
      { HOME: path.join(dir, "home") },
    );
    expect(r.code, r.stderr).toBe(0);
    const { stderr } = execResults(r.stdout)("renamed");
    spawnSync("bash", ["-c", '"$CLAUDE_PROJECT_DIR"/.claude/hooks/later.sh'], { env: { ...process.env, CLAUDE_PROJECT_DIR: project } });
    expect(existsSync(proof)).toBe(false);
    expect(stderr).toContain("mv: cannot move '.claude/hooks' to '.claude/hooks.old': Device or resource busy");
    expect(readFileSync(path.join(project, ".claude/hooks/readme.txt"), "utf8")).toBe("hooks\n");
  });
});
