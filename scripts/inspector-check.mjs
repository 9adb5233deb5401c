#!/usr/bin/env node
// The third-party MCP Inspector CLI (@modelcontextprotocol/inspector-cli) against `tacit serve`:
// it lists the tools and runs execute_typescript. `npm run inspector`; test/mcp runs it too.
//
// The inspector looks for "../package.json" relative to its working directory (a quirk of
// v1.0.3), so it runs from bin/, whose parent holds tacit's package.json.

import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const inspector = path.join(root, "node_modules", "@modelcontextprotocol", "inspector-cli", "build", "cli.js");
const server = ["node", path.join(root, "bin", "tacit.js"), "serve", "--quiet"];

function inspect(args) {
  const run = spawnSync(process.execPath, [inspector, "--cli", ...server, ...args], { cwd: path.join(root, "bin"), encoding: "utf8", timeout: 120_000 });
  const out = run.stdout ?? "";
  const start = out.indexOf("{");
  if (run.status !== 0 || start === -1) throw new Error(`mcp-inspector-cli ${args.join(" ")} exited ${run.status}:\n${out}${run.stderr}`);
  return JSON.parse(out.slice(start));
}

const tools = inspect(["--method", "tools/list"]).tools.map((tool) => tool.name).sort();
const expected = ["create_repl_session", "delete_repl_session", "execute_in_session", "execute_typescript", "list_sessions", "show_interface"];
if (JSON.stringify(tools) !== JSON.stringify(expected)) throw new Error(`tools/list: expected ${expected.join(", ")}, got ${tools.join(", ")}`);
console.log(`tools/list: ${tools.join(", ")}`);

const call = inspect(["--method", "tools/call", "--tool-name", "execute_typescript", "--tool-arg", "code=println(6 * 7)"]);
if (call.isError || call.structuredContent?.stdout !== "42\n" || call.structuredContent?.exitCode !== 0) {
  throw new Error(`tools/call execute_typescript: unexpected result ${JSON.stringify(call)}`);
}
console.log(`tools/call execute_typescript: stdout ${JSON.stringify(call.structuredContent.stdout)}, exit ${call.structuredContent.exitCode}`);
