// `tacit repl` with its input piped (no terminal): definitions kept between inputs,
// multi-line input, an error that leaves the bindings, and .exit.

import { spawn, spawnSync } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { describe, expect, it, onTestFinished } from "vitest";
import { childEnv, runCli, tacitBin } from "../helpers.js";

describe("tacit repl", () => {
  it("keeps bindings, takes multi-line input, reports errors without losing state, and exits", async () => {
    const input = ["const x = 42", "x * 2", "function f(): number {", "  return 3;", "}", "f() + x", 'throw new Error("e")', "x", ".exit", "x + 1", ""].join("\n");
    const r = await runCli(["repl"], { input });
    expect(r.code).toBe(0);
    // 84, then 45 (f defined over three lines), then 42 after the error; nothing after .exit.
    expect(r.stdout).toBe("84\n45\n42\n");
    expect(r.stderr).toContain("Error: e");
    expect(r.stderr).toContain("script.ts:1:7");
  });

  it("runs what the input ends in the middle of, so its syntax error says what is missing, instead of dropping it", async () => {
    const r = await runCli(["repl"], { input: 'println("first")\nfunction g() {\n  return 2;\n' });
    expect(r.stdout).toBe("first\n");
    expect(r.stderr).toContain("error [syntax] Expected `}` but found `EOF`");
  });

  it("takes a long unfinished statement in time linear in its length, each line not parsing all of it again", async () => {
    // 300,000 blank lines inside one function: each parsed all that came before it (quadratic).
    const input = `function g() {\n${"\n".repeat(300_000)}  return 5;\n}\nprintln(g())\nprintln("next")\n`;
    const r = await runCli(["repl"], { input });
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("5\nnext\n");
    expect(r.code).toBe(0);
  });

  it("answers a short statement sent over two lines at once, to a program that waits for the answer before it sends more", async () => {
    // Piped input waited for an unfinished statement to double before parsing it again, so
    // `println(` and `42)` (11 characters, less than twice 8) were never run until more input
    // came: a program driving the repl through a pipe waited for ever.
    const child = spawn(process.execPath, [tacitBin, "repl", "--no-check"], { env: childEnv(), stdio: ["pipe", "pipe", "pipe"] });
    onTestFinished(() => void child.kill("SIGKILL"));
    let stdout = "";
    let looks: Array<() => void> = [];
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
      for (const look of looks) look();
    });
    const answered = (text: string): Promise<void> =>
      new Promise((resolve, reject) => {
        looks = [() => stdout.includes(text) && resolve()];
        child.on("close", () => reject(new Error(`tacit repl ended before it answered ${text}; its output: ${stdout}`)));
        looks[0]!();
      });
    child.stdin.write('println("first")\n');
    await answered("first\n");
    // The input stays open: the answer must come while it does.
    child.stdin.write("println(\n42)\n");
    await answered("42\n");
    child.stdin.end();
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code).toBe(0);
    expect(stdout).toBe("first\n42\n");
  }, 60_000);

  it("stops at a line longer than a session keeps (an endless one, /dev/zero), says so, and runs none of it", () => {
    // readline gathered the line in one string until V8's "Invalid string length" ended tacit with Node's stack.
    const zero = openSync("/dev/zero", "r");
    try {
      const r = spawnSync(process.execPath, [tacitBin, "repl"], { stdio: [zero, "pipe", "pipe"], encoding: "utf8", env: childEnv(), timeout: 60_000 });
      expect(r.status).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toBe(
        "tacit repl: a line of the input is longer than 16 MiB, more code than a session keeps; the rest of the input was not read. " +
          "Give it smaller snippets, or run a whole script with tacit run.\n",
      );
    } finally {
      closeSync(zero);
    }
  }, 60_000);
});
