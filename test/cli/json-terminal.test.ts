// The JSON tacit prints (--json of run, check, audit show, audit verify and approvals list) on a
// terminal: JSON.stringify escapes C0 controls but leaves the C1 controls raw inside strings
// (U+009D is OSC, U+009B CSI, U+009C ST), and terminals that take C1 in UTF-8 act on them. A
// tenth security review had a script print "\u009d52;c;<base64>\u009c" (set the clipboard) and
// name a file with it, then looked at `tacit run --json` and `tacit audit show --json` on a
// pseudo-terminal: the sequences reached it as they were. Through the real CLI and a real Deno.

import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childEnv, runCli, tacitBin, tempDir } from "../helpers.js";

let dir: string;
let cleanup: () => void;

beforeAll(() => {
  ({ dir, cleanup } = tempDir("tacit-json-terminal-"));
});
afterAll(() => cleanup());

/** Set the clipboard to "rm -rf ~" (OSC 52 in C1: OSC … ST), then clear the screen (C1 CSI). */
const CLIPBOARD = "\u009d52;c;cm0gLXJmIH4=\u009c\u009b2J";
const C1 = /[\u0080-\u009f]/;

/** What tacit shows on a pseudo-terminal (util-linux `script`), stdout and stderr together. */
async function onTerminal(args: string[], cwd: string): Promise<string> {
  const quote = (word: string): string => `'${word.replace(/'/g, `'\\''`)}'`;
  const command = [process.execPath, tacitBin, ...args].map(quote).join(" ");
  const child = spawn("script", ["-qec", command, "/dev/null"], { cwd, env: childEnv(), stdio: ["ignore", "pipe", "pipe"] });
  let screen = "";
  child.stdout.on("data", (chunk: Buffer) => (screen += chunk.toString("utf8")));
  await new Promise<number | null>((resolve) => child.on("close", resolve));
  return screen;
}

/** The JSON document in what the terminal showed (it turns each line feed into CR LF). */
function shownJson(screen: string): unknown {
  const text = screen.replace(/\r\n/g, "\n");
  return JSON.parse(text.slice(text.search(/[[{]/)));
}

describe("JSON that tacit prints, on a terminal", () => {
  it("tacit run --json: a script's C1 controls are escapes, and the JSON still holds its output as printed", async () => {
    const script = path.join(dir, "print.ts");
    writeFileSync(script, `println(${JSON.stringify(`out:${CLIPBOARD}`)});\n`);
    const screen = await onTerminal(["run", "--json", script], dir);
    expect(screen).not.toMatch(C1);
    expect(screen).toContain("\\u009d52;c;cm0gLXJmIH4=");
    expect(shownJson(screen)).toMatchObject({ stdout: `out:${CLIPBOARD}\n`, exitCode: 0 });
  });

  it("tacit check --json: an import specifier's C1 controls in the diagnostic are escapes", async () => {
    const script = path.join(dir, "check.ts");
    writeFileSync(script, `import x from ${JSON.stringify(CLIPBOARD)};\nprintln(x);\n`);
    const screen = await onTerminal(["check", "--json", script], dir);
    expect(screen).not.toMatch(C1);
    const shown = shownJson(screen) as { ok: boolean; error: string };
    expect(shown.ok).toBe(false);
    expect(shown.error).toMatch(/import of ".*52;c;cm0gLXJmIH4=.*" is not allowed/);
  });

  it("tacit audit show --json and verify --json: a file name a script chose is escaped, the JSON unchanged", async () => {
    const project = path.join(dir, "project");
    mkdirSync(project, { recursive: true });
    const log = path.join(dir, "audit.jsonl");
    const name = `a${CLIPBOARD}.txt`;
    const script = path.join(project, "write.ts");
    writeFileSync(script, `requestFileSystem(".", (fs) => fs.access(${JSON.stringify(name)}).write("x"));\n`);
    const run = await runCli(["run", "--audit-log", log, script], { cwd: project });
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(path.join(project, name), "utf8")).toBe("x");

    const show = await onTerminal(["audit", "show", "--json", log], dir);
    expect(show).not.toMatch(C1);
    const entries = (shownJson(show) as { lines: Array<{ entry: { event: { type: string; pattern?: string } } }> }).lines.map((line) => line.entry);
    const requested = entries.find((entry) => entry.event.type === "action-requested" && entry.event.pattern?.startsWith("fs.write"));
    expect(requested?.event.pattern).toBe(`fs.write ${path.join(project, name)}`);

    // A tamperer's extra key, named with the same controls, is reported by name in verify's JSON.
    const lines = readFileSync(log, "utf8").split("\n");
    lines[0] = `${lines[0]!.slice(0, -1)},${JSON.stringify(CLIPBOARD)}:1}`;
    writeFileSync(log, lines.join("\n"));
    const verify = await onTerminal(["audit", "verify", "--json", log], dir);
    expect(verify).not.toMatch(C1);
    const report = shownJson(verify) as { verified: boolean; problems: Array<{ line: number; reason: string }> };
    expect(report.verified).toBe(false);
    expect(report.problems.some((problem) => problem.line === 1 && problem.reason.includes("52;c;cm0gLXJmIH4="))).toBe(true);
  });

  it("tacit approvals list --json: a remembered pattern's C1 controls are escapes", async () => {
    // The pattern a yes to that file's write would remember (granted here by hand).
    const pattern = `fs.write /work/a${CLIPBOARD}.txt`;
    const grant = await runCli(["approvals", "grant", pattern], { cwd: dir });
    expect(grant.code, grant.stderr).toBe(0);
    const screen = await onTerminal(["approvals", "list", "--json"], dir);
    expect(screen).not.toMatch(C1);
    expect((shownJson(screen) as Array<{ pattern: string }>).map((a) => a.pattern)).toContain(pattern);
  });
});
