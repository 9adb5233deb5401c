// A tacit home that another run uses (TACIT_HOME set for it: a container's home kept in the
// project it mounts, a CI job's), inside the allowed roots of a run whose own home is elsewhere.
// A run refuses its scripts its own home and the default ones ($XDG_CONFIG_HOME/tacit,
// ~/.config/tacit: tacit-home.ts, tacitHomes), but nothing tells it that this directory is a home
// too: a security review's script, in a run with the default root, read the audit signing key
// kept there (and could then sign any log as that home's runs) and wrote approvals.json there,
// which the next run with that TACIT_HOME took as a person's yes to `exec git push *`.
//
// NOT FIXED YET (it.fails): a run only knows the homes of its own environment, and the place a
// list of every home used could live (the default home) is one a run with TACIT_HOME set must not
// write to. Fixing it is a design choice: record each home used where every run looks, or have
// the file system recognise a home by what it holds. Through the real CLI, a real Deno, real files.

import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { runCli, tempDirWithTwoHomes } from "../helpers.js";

let dir: string;
let env: Record<string, string>;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, env, cleanup } = tempDirWithTwoHomes("tacit-other-home-"));
});
afterEach(() => cleanup());

it.fails("a script cannot read the signing key of, nor plant approvals in, a tacit home another run uses inside its roots", async () => {
  const project = path.join(dir, "project");
  const otherHome = path.join(project, ".tacit-home");
  mkdirSync(project);
  writeFileSync(path.join(project, "hello.ts"), 'println("hello");\n');
  // A run with its home in the project makes its key there.
  const first = await runCli(["run", "--no-check", "--audit-log", path.join(dir, "audit.jsonl"), "hello.ts"], { cwd: project, env: { ...env, TACIT_HOME: otherHome } });
  expect(first.code, first.stderr).toBe(0);
  const key = readFileSync(path.join(otherHome, "audit-key.json"), "utf8");
  const privateKey = (JSON.parse(key) as { privateKey: string }).privateKey;

  // A run with another home (the test's), its root the project.
  const now = Date.now();
  const planted = JSON.stringify({
    version: 1,
    approvals: [{ pattern: "exec git push *", directory: project, grantedAt: new Date(now - 1000).toISOString(), expiresAt: new Date(now + 86_400_000).toISOString(), via: "terminal" }],
  });
  writeFileSync(
    path.join(project, "agent.ts"),
    `requestFileSystem(".", (fs) => {\n` +
      `  try { println("key: " + fs.access(".tacit-home/audit-key.json").read()); } catch (e) { println("key refused: " + String(e)); }\n` +
      `  try { fs.access(".tacit-home/approvals.json").write(${JSON.stringify(planted)}); println("planted"); } catch (e) { println("plant refused: " + String(e)); }\n` +
      `});\n`,
  );
  const agent = await runCli(["run", "--no-check", "agent.ts"], { cwd: project, env });
  expect(agent.code, agent.stderr).toBe(0);
  expect(agent.stdout).not.toContain(privateKey);
  expect(agent.stdout).toContain("key refused");
  expect(agent.stdout).toContain("plant refused");
  expect(existsSync(path.join(otherHome, "approvals.json"))).toBe(false);
});
