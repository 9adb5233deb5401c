// `tacit repl` on a real terminal: a pseudo-terminal from util-linux `script`, the test typing
// each line when the prompt appears, as a person would. Line editing is on (readline in
// terminal mode): what is typed is echoed, prompts are "tacit> " and "... ".

import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { tacitBin, tempDir } from "../helpers.js";

const quote = (word: string): string => `'${word.replace(/'/g, `'\\''`)}'`;

/** Types `lines` one by one, each after the next prompt ("tacit> " or "... ") shows. */
function onTerminal(lines: string[], cwd: string): Promise<{ code: number | null; screen: string }> {
  return new Promise((resolve, reject) => {
    const command = [process.execPath, tacitBin, "repl"].map(quote).join(" ");
    const child = spawn("script", ["-qec", command, "/dev/null"], { cwd, stdio: ["pipe", "pipe", "pipe"], detached: true });
    let screen = "";
    let prompts = 0;
    const pending = [...lines];
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      screen += chunk;
      const shown = (screen.match(/(tacit> |\.\.\. )/g) ?? []).length;
      while (prompts < shown) {
        prompts++;
        const line = pending.shift();
        if (line !== undefined) child.stdin.write(`${line}\r`);
      }
    });
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, screen: screen.replace(/\r/g, "").replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "") });
    });
  });
}

describe("tacit repl on a terminal", () => {
  it("defines, reuses, takes multi-line input, survives an error, and exits", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const { code, screen } = await onTerminal(
        ["const x = 20", "x + 1", "function twice(n: number): number {", "  return n * 2;", "}", "twice(x)", "x.nope()", "x", ".exit"],
        dir,
      );
      if (process.env.SHOW_SCREEN) console.log(JSON.stringify(screen));
      expect(code).toBe(0);
      expect(screen).toContain("tacit repl: TypeScript against the tacit API");
      // Each answer shows right after the line that asked for it.
      expect(screen).toMatch(/tacit> x \+ 1\n21\n/);
      expect(screen).toMatch(/\.\.\. {3}return n \* 2;\n\.\.\. \}\n/);
      expect(screen).toMatch(/tacit> twice\(x\)\n40\n/);
      expect(screen).toMatch(/tacit> x\.nope\(\)\n[^\n]*error TS2339: Property 'nope' does not exist on type '20'/);
      expect(screen).toMatch(/tacit> x\n20\n/);
    } finally {
      cleanup();
    }
  }, 90_000);

  it("shows the controls a snippet prints as escapes: the terminal's clipboard and title stay untouched", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const { code, screen } = await onTerminal(['println("a\\x1b]52;c;cm0gLXJmIH4=\\x07b")', '"t\\x1b]2;x\\x07"', ".exit"], dir);
      expect(code).toBe(0);
      expect(screen).not.toMatch(/\x1b\]|\x07/);
      expect(screen).toContain("a\\u001b]52;c;cm0gLXJmIH4=\\u0007b\n");
      // The echo of a string value quotes it with its escapes already (Deno's inspect).
      expect(screen).toContain('"t\\x1b]2;x\\x07"\n');
    } finally {
      cleanup();
    }
  }, 90_000);
});
