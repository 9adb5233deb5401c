// `tacit serve` driven by the real MCP SDK client over stdio: the tools, their structured
// results, failures as isError results (never protocol errors), wrong arguments as
// InvalidParams, and a clean stdout.

import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answerTexts, childEnv, repoRoot, tacitBin } from "../helpers.js";
import { expectProgressThenCancel } from "./progress.js";

let client: Client;
let transport: StdioClientTransport;
let stderr = "";

beforeAll(async () => {
  transport = new StdioClientTransport({
    command: process.execPath,
    args: [tacitBin, "serve", "--exec-timeout-ms", "3000"],
    cwd: repoRoot,
    env: childEnv(),
    stderr: "pipe",
  });
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  client = new Client({ name: "tacit-test", version: "0.0.0" });
  await client.connect(transport);
});

afterAll(async () => {
  await client.close();
});

interface RunResult {
  stdout: string;
  error: string | null;
  exitCode: number;
  durationMs: number;
  truncated: boolean;
}

async function execute(code: string): Promise<{ isError: boolean; text: { output: string; report: string }; result: RunResult }> {
  const response = await client.callTool({ name: "execute_typescript", arguments: { code } });
  return { isError: response.isError === true, text: answerTexts(response), result: response.structuredContent as unknown as RunResult };
}

describe("tacit serve", () => {
  it("says what it is and lists its tools with schemas", async () => {
    expect(client.getInstructions()).toContain("show_interface");
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      "create_repl_session",
      "delete_repl_session",
      "execute_in_session",
      "execute_typescript",
      "list_sessions",
      "show_interface",
    ]);
    const execute = tools.find((t) => t.name === "execute_typescript")!;
    expect(execute.inputSchema.properties).toHaveProperty("code");
    expect(execute.outputSchema?.properties).toHaveProperty("exitCode");
  });

  it("runs a script: text for the model, structured content for programs", async () => {
    const { isError, text, result } = await execute('const x: number = 21;\nprintln("answer", x * 2);');
    expect(isError).toBe(false);
    expect(result).toMatchObject({ stdout: "answer 42\n", error: null, exitCode: 0, truncated: false });
    // The script's output in one item, tacit's exit line in the other.
    expect(text.output).toBe("answer 42\n");
    expect(text.report).toMatch(/^\[tacit: exit 0, \d+ ms\]$/);
  });

  it("rejections, type errors, exceptions and timeouts are isError results with the CLI's messages", async () => {
    const rejected = await execute("Deno.exit(1)");
    expect(rejected.isError).toBe(true);
    expect(rejected.result.exitCode).toBe(3);
    expect(rejected.result.error).toContain("script.ts:1:1 error [ambient-authority]");
    const typeError = await execute('const x: number = "s";');
    expect(typeError.result.exitCode).toBe(3);
    expect(typeError.result.error).toContain("script.ts:1:7 error TS2322");
    const thrown = await execute('println("before");\nthrow new Error("boom");');
    expect(thrown.result).toMatchObject({ stdout: "before\n", exitCode: 1 });
    expect(thrown.result.error).toContain("script.ts:2:7");
    // Timed out waiting (Atomics.wait, for ever), not spinning a core through the 3 s limit.
    const timeout = await execute("Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);");
    expect(timeout.result.exitCode).toBe(124);
    // The server is still there afterwards.
    expect((await execute('println("still here")')).result.stdout).toBe("still here\n");
  });

  // The issue asks for InvalidParams here; tacit checks tool arguments at the edge
  // (runner/mcp-arguments.ts), since the SDK alone would answer with an isError result.
  it("wrong arguments get a clear InvalidParams naming the problem, and the server goes on", async () => {
    await expect(client.callTool({ name: "execute_typescript", arguments: { source: "x" } })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('argument "code" is missing (a string); unknown argument "source"'),
    });
    await expect(client.callTool({ name: "execute_typescript", arguments: { code: 42 } })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('argument "code": Invalid input: expected string, received number'),
    });
    await expect(client.callTool({ name: "run_python", arguments: {} })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('unknown tool "run_python"; this server\'s tools are execute_typescript'),
    });
    expect((await execute("println(1)")).result.exitCode).toBe(0);
  });

  it("a long evaluation reports progress to a client that asks, and a cancellation ends it; the server goes on", async () => {
    await expectProgressThenCancel(client, "execute_typescript", {});
    // The server killed that sandbox and still answers.
    expect((await execute('println("after cancel")')).result.stdout).toBe("after cancel\n");
  });

  it("search threads started for a script end with it: rejected, failed or finished, the server keeps no extra threads", async () => {
    const threads = (): number => Number(/^Threads:\s+(\d+)$/m.exec(readFileSync(`/proc/${transport.pid}/status`, "utf8"))?.[1]);
    /** The server's thread count once it has settled (threads end asynchronously). */
    const settled = async (): Promise<number> => {
      let last = threads();
      for (let i = 0; i < 40; i++) {
        await sleep(50);
        const now = threads();
        if (now === last) return now;
        last = now;
      }
      return last;
    };
    await execute("println(1)");
    const before = await settled();
    // Each names grepRecursive, so each gets the search threads started at once.
    const rejected = await execute("Deno.exit(0); // grepRecursive");
    expect(rejected.result.exitCode).toBe(3);
    const threw = await execute("// grepRecursive\nthrow new Error('no');");
    expect(threw.result.exitCode).toBe(1);
    for (let i = 0; i < 3; i++) {
      const searched = await execute(`requestFileSystem(".", (fs) => println(fs.grepRecursive("library", "interface-that-is-nowhere-${i}").length));`);
      expect(searched.result.stdout).toBe("0\n");
    }
    // Threads end asynchronously, slowly on a loaded machine: wait up to 10 s for the count to come back.
    let after = threads();
    for (let i = 0; i < 200 && after > before; i++) {
      await sleep(50);
      after = threads();
    }
    expect(after).toBeLessThanOrEqual(before);
  });

  it("show_interface returns interface.d.ts and examples; stdout carried only protocol", async () => {
    const response = await client.callTool({ name: "show_interface", arguments: {} });
    const text = (response.content as Array<{ text: string }>)[0]!.text;
    expect(text).toContain(readFileSync(path.join(repoRoot, "library", "interface.d.ts"), "utf8"));
    expect(text).toContain("requestFileSystem");
    // Had anything but protocol messages reached stdout, the client would have failed to parse it.
    expect(stderr).not.toMatch(/error/i);
  });
});
