// The files an MCP client's settings name for tacit are refused to every script, not only to
// the runs those settings start. A thirteenth security review registered tacit in .mcp.json with
// --config, --secure-output, --audit-log, --record and TACIT_HOME, then ran `tacit run` in the
// same project without those flags: its script read the sink's plaintext and the config's LLM
// key, appended to the audit log and wrote approvals into that home. Through the real CLI.

import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectServe, runScript } from "../helpers.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, makeCanary, realTempDir } from "./fixtures.js";

describe("files named for tacit in the MCP clients' settings", () => {
  let root: string;
  let cleanup: () => void;
  const secret = makeCanary();
  const apiKey = `sk-${makeCanary()}`;
  const at = (name: string): string => path.join(root, name);
  const approvals = JSON.stringify({ version: 1, approvals: [{ pattern: "exec git push *", directory: "/", grantedAt: "2026-01-01T00:00:00Z", expiresAt: "2099-01-01T00:00:00Z", via: "terminal" }] });

  beforeAll(() => {
    ({ dir: root, cleanup } = realTempDir("tacit-client-settings-"));
    // Claude Code's project settings: tacit through npx, every file flag, and its own home.
    const args = ["tacit", "serve", "--config", "tacit.json", "--secure-output", "secure.log", "--audit-log", "audit.jsonl", "--record", "rec"];
    writeFileSync(at(".mcp.json"), JSON.stringify({ mcpServers: { agent: { command: "npx", args, env: { TACIT_HOME: "${workspaceFolder}/tacit-home" } } } }));
    writeFileSync(at("tacit.json"), JSON.stringify({ libraryConfig: { llm: { baseUrl: "http://127.0.0.1:9/v1", apiKey, model: "m" } } }));
    writeFileSync(at("secure.log"), `TOKEN=${secret}\n`);
    writeFileSync(at("audit.jsonl"), "{}\n");
    mkdirSync(at("rec"));
    writeFileSync(at("rec/tacit-record.jsonl"), `${secret}\n`);
    mkdirSync(at("tacit-home"), { mode: 0o700 });
    // VS Code's (JSONC: a comment, a trailing comma), tacit run from a checkout, the --flag=value form,
    // and a config that names a sink of its own.
    mkdirSync(at(".vscode"));
    writeFileSync(at(".vscode/mcp.json"), `{\n  // tacit from a checkout\n  "servers": { "t": { "type": "stdio", "command": "node", "args": ["/opt/tacit/bin/tacit.js", "serve", "--config=other.json",], }, },\n}\n`);
    writeFileSync(at("other.json"), JSON.stringify({ libraryConfig: { secureOutput: "other-secure.log" } }));
    writeFileSync(at("other-secure.log"), `${secret}\n`);
    // OpenCode's command array.
    writeFileSync(at("opencode.json"), JSON.stringify({ mcp: { tacit: { type: "local", command: ["npx", "-y", "tacit@latest", "serve", "--secure-output", "oc-secure.log"] } } }));
    // Claude Code's local settings, with the command in one string, read as a shell reads it (a quoted name with a space).
    mkdirSync(at(".claude"));
    writeFileSync(at(".claude/settings.local.json"), JSON.stringify({ mcpServers: { mine: { command: "npx tacit serve --record one-string-rec --secure-output 'quoted secure.log'" } } }));
    writeFileSync(at("quoted secure.log"), `${secret}\n`);
    mkdirSync(at("one-string-rec"));
    writeFileSync(at("one-string-rec/tacit-record.jsonl"), `${secret}\n`);
    writeFileSync(at("oc-secure.log"), `${secret}\n`);
    // A settings file that does not parse: every tacit flag in its strings counts (fail safe).
    mkdirSync(at(".cursor"));
    writeFileSync(at(".cursor/mcp.json"), `{ "mcpServers": { "tacit": { "command": "npx", "args": ["tacit", "serve", "--secure-output", "cursor-secure.log" ] `);
    writeFileSync(at("cursor-secure.log"), `${secret}\n`);
    // Another server's --config is not tacit's: it stays the project's.
    mkdirSync(at(".gemini"));
    writeFileSync(at(".gemini/settings.json"), JSON.stringify({ mcpServers: { other: { command: "other-server", args: ["--config", "notes.json"] } } }));
    writeFileSync(at("notes.json"), "{}");
  });
  afterAll(() => cleanup());

  it("are refused to a run without those flags: no secret read, no approval planted, the log and record unchanged", async () => {
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("read the config", () => fs.access("tacit.json").read());
  attempt("read the sink", () => fs.access("secure.log").read());
  attempt("grep the sink", () => fs.grep("secure.log", "TOKEN"));
  attempt("append to the log", () => fs.access("audit.jsonl").append("{\\"forged\\":true}\\n"));
  attempt("take the log's lock", () => fs.access("audit.jsonl.lock").write("1"));
  attempt("read the record", () => fs.access("rec/tacit-record.jsonl").read());
  attempt("plant approvals", () => fs.access("tacit-home/approvals.json").write(${lit(approvals)}));
  attempt("list the home", () => fs.access("tacit-home").children().length);
  attempt("read the sink of the config named with =", () => fs.access("other-secure.log").read());
  attempt("read OpenCode's sink", () => fs.access("oc-secure.log").read());
  attempt("read a record named in a one-string command", () => fs.access("one-string-rec/tacit-record.jsonl").read());
  attempt("read a quoted sink named in a one-string command", () => fs.access("quoted secure.log").read());
  attempt("read the sink of unparsable settings", () => fs.access("cursor-secure.log").read());
  attempt("search", () => fs.grepRecursive(".", ${lit(secret.slice(0, 16))}));
  attempt("search for the key", () => fs.grepRecursive(".", "sk-canary"));
  attempt("another server's config", () => fs.access("notes.json").read());
  attempt("the settings themselves", () => fs.access(".mcp.json").read().length > 0);
});
`;
    const r = await runScript(script, ["--quiet"], { cwd: root });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(secret);
    expect(r.stdout + r.stderr).not.toContain(apiKey);
    const found = attempts(r.stdout);
    expectRefused(found, ["read the config"], /tacit's config file .*named for tacit in .*\.mcp\.json/);
    expectRefused(found, ["read the sink", "grep the sink"], /the secure output file .*named for tacit in .*\.mcp\.json/);
    expectRefused(found, ["append to the log", "take the log's lock", "read the record"]);
    expectRefused(found, ["plant approvals", "list the home"], /tacit's home .*named for tacit in/);
    expectRefused(found, ["read the sink of the config named with ="], /named for tacit in the config file .*other\.json/);
    expectRefused(found, ["read OpenCode's sink"], /opencode\.json/);
    expectRefused(found, ["read a record named in a one-string command"], /the record directory \(--record\), named for tacit in .*settings\.local\.json/);
    expectRefused(found, ["read a quoted sink named in a one-string command"], /quoted secure\.log: refused: this is the secure output file .*named for tacit in .*settings\.local\.json/);
    expectRefused(found, ["read the sink of unparsable settings"], /could not parse/);
    expect(attemptOf(found, "search")).toEqual({ status: "ok", value: [] });
    expect(attemptOf(found, "search for the key")).toEqual({ status: "ok", value: [] });
    expect(attemptOf(found, "another server's config")).toEqual({ status: "ok", value: "{}" });
    expect(attemptOf(found, "the settings themselves")).toEqual({ status: "ok", value: true });
    expect(existsSync(at("tacit-home/approvals.json"))).toBe(false);
    expect(readFileSync(at("audit.jsonl"), "utf8")).toBe("{}\n");
    expect(existsSync(at("audit.jsonl.lock"))).toBe(false);
  }, 30_000);

  it("settings that do not parse and name 200,000 sinks (a cloned repository's, made to be large): tacit still runs, and refuses them", async () => {
    const { dir, cleanup } = realTempDir("tacit-many-named-");
    try {
      // Spread into one call, the files named exceeded the stack: every run in the project ended in an internal error.
      const flags = Array.from({ length: 200_000 }, (_, i) => `"--secure-output", "sink${i}.log"`).join(", ");
      writeFileSync(path.join(dir, ".mcp.json"), `{ "mcpServers": { "tacit": { "command": "npx", "args": ["tacit", "serve", ${flags} `);
      writeFileSync(path.join(dir, "sink0.log"), `TOKEN=${secret}\n`);
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("read the first sink named", () => fs.access("sink0.log").read());
  attempt("write another file", () => fs.access("notes.txt").write("ok"));
});
`;
      const r = await runScript(script, ["--quiet"], { cwd: dir });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout + r.stderr).not.toContain(secret);
      const found = attempts(r.stdout);
      expectRefused(found, ["read the first sink named"], /the secure output file .*could not parse/);
      expect(attemptOf(found, "write another file").status).toBe("ok");
    } finally {
      cleanup();
    }
  }, 60_000);

  it("the user's settings count too (~/.claude.json's projects, past 8 MiB), and settings that hold tacit's key are refused whole", async () => {
    const { dir, cleanup: done } = realTempDir("tacit-client-settings-user-");
    try {
      const home = path.join(dir, "home");
      const project = path.join(dir, "project");
      mkdirSync(home);
      mkdirSync(project);
      const userSink = path.join(dir, "project", "user-secure.log");
      // Longer than tacit parses (~/.claude.json keeps a history): read a chunk at a time, fail safe.
      const history = Array.from({ length: 90_000 }, (_, i) => ({ display: `question ${i} ${"x".repeat(80)}` }));
      writeFileSync(path.join(home, ".claude.json"), JSON.stringify({ numStartups: 3, history, projects: { [project]: { mcpServers: { t: { type: "stdio", command: "tacit", args: ["serve", `--secure-output=${userSink}`] } } } } }));
      expect(statSync(path.join(home, ".claude.json")).size).toBeGreaterThan(8 * 1024 * 1024); // client-settings.ts's SETTINGS_LIMIT_BYTES
      writeFileSync(userSink, `${secret}\n`);
      mkdirSync(path.join(project, ".gemini"));
      writeFileSync(path.join(project, ".gemini", "settings.json"), JSON.stringify({ mcpServers: { tacit: { command: "npx", args: ["tacit", "serve"], env: { TACIT_LLM_API_KEY: apiKey } } } }));
      // Settings with more objects than tacit looks at are judged by their strings (fail safe).
      mkdirSync(path.join(project, ".cursor"));
      const crowd = `{"mcpServers":{"tacit":{"command":"tacit","args":["serve","--audit-log","walked.jsonl"]}},"filler":[${"{},".repeat(600_000)}{}]}`;
      writeFileSync(path.join(project, ".cursor", "mcp.json"), crowd);
      writeFileSync(path.join(project, "walked.jsonl"), `${secret}\n`);
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("read the log named in crowded settings", () => fs.access("walked.jsonl").read());
  attempt("read the user's sink", () => fs.access("user-secure.log").read());
  attempt("read the settings holding the key", () => fs.access(".gemini/settings.json").read());
  attempt("search for the key", () => fs.grepRecursive(".", "sk-canary"));
});
`;
      const r = await runScript(script, ["--quiet"], { cwd: project, env: { HOME: home } });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout + r.stderr).not.toContain(secret);
      expect(r.stdout + r.stderr).not.toContain(apiKey);
      const found = attempts(r.stdout);
      expectRefused(found, ["read the user's sink"], /named for tacit in .*home\/\.claude\.json \(which tacit could not parse/);
      expectRefused(found, ["read the log named in crowded settings"], /the audit log \(--audit-log\), named for tacit in .*\.cursor\/mcp\.json \(which tacit could not parse/);
      expectRefused(found, ["read the settings holding the key"], /an MCP client's settings holding tacit's LLM API key/);
      expect(attemptOf(found, "search for the key")).toEqual({ status: "ok", value: [] });
    } finally {
      done();
    }
  }, 30_000);

  it("a HOME given to tacit in the settings names its home too (HOME/.config/tacit): no approvals planted there", async () => {
    // tacit's home is TACIT_HOME, else XDG_CONFIG_HOME/tacit, else HOME/.config/tacit; a server
    // entry that set HOME (a home of its own inside the project) was not looked at, so a script
    // of another run in the project wrote approvals.json into the home that server reads.
    const { dir: project, cleanup: done } = realTempDir("tacit-client-settings-home-");
    try {
      writeFileSync(path.join(project, ".mcp.json"), JSON.stringify({ mcpServers: { tacit: { command: "npx", args: ["tacit", "serve"], env: { HOME: "${workspaceFolder}/agent-home" } } } }));
      mkdirSync(path.join(project, "agent-home"));
      mkdirSync(path.join(project, ".cursor"));
      // Unparsable settings: judged by their strings (fail safe), HOME among them.
      writeFileSync(path.join(project, ".cursor", "mcp.json"), `{ "mcpServers": { "tacit": { "command": "tacit", "env": { "HOME": "cursor-home" } `);
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("make the home", () => fs.access("agent-home/.config/tacit").mkdir());
  attempt("plant approvals", () => fs.access("agent-home/.config/tacit/approvals.json").write(${lit(approvals)}));
  attempt("plant approvals where unparsable settings say", () => fs.access("cursor-home/.config/tacit/approvals.json").write(${lit(approvals)}));
  attempt("an ordinary file beside it", () => fs.access("agent-home/notes.txt").write("x"));
});
`;
      const r = await runScript(script, ["--quiet"], { cwd: project });
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, ["make the home", "plant approvals", "plant approvals where unparsable settings say"], /tacit's home .*named for tacit in/);
      expect(attemptOf(found, "an ordinary file beside it").status).toBe("ok");
      expect(existsSync(path.join(project, "agent-home/.config/tacit/approvals.json"))).toBe(false);
      expect(existsSync(path.join(project, "cursor-home/.config/tacit/approvals.json"))).toBe(false);
    } finally {
      done();
    }
  }, 30_000);

  it("a tacit serve judges settings edited while it runs: a sink named after its first call is refused at the next", async () => {
    const { dir: project, cleanup: done } = realTempDir("tacit-client-settings-edit-");
    const client = await connectServe([], project);
    try {
      writeFileSync(path.join(project, "later.log"), `${secret}\n`);
      writeFileSync(path.join(project, ".mcp.json"), JSON.stringify({ mcpServers: { tacit: { command: "npx", args: ["tacit", "serve"] } } }));
      const read = { name: "execute_typescript", arguments: { code: 'requestFileSystem(".", (fs) => println(fs.access("later.log").read().length));' } };
      // Not tacit's yet: an ordinary file, read (and the settings judged and remembered).
      expect(JSON.stringify(await client.callTool(read))).toContain(`"stdout":"${secret.length + 1}\\n"`);
      // The user registers it as the sink; the settings file's size and times change with it.
      writeFileSync(path.join(project, ".mcp.json"), JSON.stringify({ mcpServers: { tacit: { command: "npx", args: ["tacit", "serve", "--secure-output", "later.log"] } } }));
      const after = JSON.stringify(await client.callTool(read));
      expect(after).not.toContain(secret);
      expect(after).toMatch(/later\.log: refused: this is the secure output file \(--secure-output, which holds plaintext\), named for tacit in/);
    } finally {
      await client.close();
      done();
    }
  }, 30_000);
});
