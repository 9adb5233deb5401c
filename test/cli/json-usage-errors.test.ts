// `tacit run --json` printed nothing on stdout when it refused before running (a script file it
// cannot read, an unknown flag, a config error, an audit log it cannot open): a pipeline reading
// JSON got no JSON. It now prints one object of the shape of its other results (stdout "", the
// error, exitCode 2), with the same words on stderr, and still runs nothing. `tacit check --json`
// had the same gap; it prints one object of check's own shape (ok, errors, error, exitCode,
// durationMs). Whether --json was given is read as commander reads the arguments: `--config --json`
// names a config file "--json".

import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli, tempDirWithHome } from "../helpers.js";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** A work directory with a script that would write ran.txt, and a tacit home of its own. */
function world(): { work: string; dir: string; env: Record<string, string> } {
  const { dir, env, cleanup } = tempDirWithHome("tacit-json-usage-");
  cleanups.push(cleanup);
  const work = path.join(dir, "work");
  mkdirSync(work);
  writeFileSync(path.join(work, "script.ts"), 'requestFileSystem(".", (fs) => fs.access("ran.txt").write("ran"));\n');
  return { work, dir, env };
}

interface JsonResult {
  stdout: string;
  error: string | null;
  exitCode: number;
  durationMs: number;
  truncated: boolean;
  outcome: string;
  warnings: string[];
}

interface CheckJsonResult {
  ok: boolean;
  errors: string[];
  error: string | null;
  exitCode: number;
  durationMs: number;
}

/**
 * Runs tacit with `args` in a fresh world; the one JSON object on stdout (which must be that one
 * line and nothing else), stderr, and whether the script ran.
 */
async function refused<Result = JsonResult>(args: (w: ReturnType<typeof world>) => string[]): Promise<{ code: number | null; result: Result; stderr: string; ran: boolean }> {
  const w = world();
  const { code, stdout, stderr } = await runCli(args(w), { cwd: w.work, env: w.env });
  expect(stdout, `stderr: ${stderr}`).toMatch(/^[^\n]+\n$/);
  return { code, result: JSON.parse(stdout) as Result, stderr, ran: existsSync(path.join(w.work, "ran.txt")) };
}

describe("tacit run --json: a usage or config error is one JSON object too", () => {
  it("a script file that does not exist", async () => {
    const { code, result, stderr, ran } = await refused(() => ["run", "--json", "missing.ts"]);
    expect(code).toBe(2);
    expect(result).toEqual({ stdout: "", error: expect.stringContaining('cannot read the script "missing.ts"'), exitCode: 2, durationMs: 0, truncated: false, outcome: "usage", warnings: [] });
    expect(result.error).toContain("Pass a .ts file, or - to read the script from standard input");
    expect(stderr).toBe(`${result.error}\n`);
    expect(ran).toBe(false);
  });

  it("an unknown flag (commander's own error, and where to look)", async () => {
    const { code, result, stderr, ran } = await refused(() => ["run", "--json", "--no-such-flag", "script.ts"]);
    expect(code).toBe(2);
    expect(result).toMatchObject({ stdout: "", exitCode: 2, outcome: "usage", truncated: false, warnings: [] });
    expect(result.error).toBe("error: unknown option '--no-such-flag' (run tacit --help for usage)");
    expect(stderr).toContain("unknown option '--no-such-flag'");
    expect(ran).toBe(false);
  });

  it("a config file that is not JSON", async () => {
    const { code, result, stderr, ran } = await refused((w) => {
      writeFileSync(path.join(w.dir, "bad.json"), "{ not json");
      return ["run", "--json", "--config", path.join(w.dir, "bad.json"), "script.ts"];
    });
    expect(code).toBe(2);
    expect(result).toMatchObject({ stdout: "", exitCode: 2, outcome: "usage" });
    expect(result.error).toMatch(/^tacit: .*bad\.json.*JSON/);
    expect(stderr).toBe(`${result.error}\n`);
    expect(ran).toBe(false);
  });

  it("an audit log that cannot be opened (a directory)", async () => {
    const { code, result, stderr, ran } = await refused((w) => {
      mkdirSync(path.join(w.dir, "a-directory"));
      return ["run", "--json", "--no-check", "--audit-log", path.join(w.dir, "a-directory"), "script.ts"];
    });
    expect(code).toBe(2);
    expect(result).toMatchObject({ stdout: "", exitCode: 2, outcome: "audit-log-failed" });
    expect(result.error).toMatch(/^tacit: cannot open the audit log .*a-directory: .*tacit exits 2: it could not write its audit log$/);
    expect(stderr).toBe(`${result.error}\n`);
    expect(ran).toBe(false);
  });

  it("without --json: stderr only, stdout empty, as before", async () => {
    const w = world();
    const { code, stdout, stderr } = await runCli(["run", "missing.ts"], { cwd: w.work, env: w.env });
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/^tacit: cannot read the script "missing\.ts"/);
  });

  it("--json after -- is the script's argument, not tacit's: no JSON", async () => {
    const w = world();
    const { code, stdout } = await runCli(["run", "missing.ts", "--", "--json"], { cwd: w.work, env: w.env });
    expect(code).toBe(2);
    expect(stdout).toBe("");
  });

  it("--json after the script and after an unknown flag is still tacit's (commander reads both)", async () => {
    for (const args of [["run", "script.ts", "--json", "--no-such-flag"], ["run", "--no-such-flag", "--json", "script.ts"]]) {
      const { code, result, ran } = await refused(() => args);
      expect(code).toBe(2);
      expect(result).toMatchObject({ stdout: "", exitCode: 2, outcome: "usage", error: "error: unknown option '--no-such-flag' (run tacit --help for usage)" });
      expect(ran).toBe(false);
    }
  });

  it("--json after a flag whose value commander refused before it read --json: still JSON", async () => {
    const { code, result, ran } = await refused(() => ["run", "--exec-timeout-ms", "0", "--json", "script.ts"]);
    expect(code).toBe(2);
    expect(result).toMatchObject({ stdout: "", exitCode: 2, outcome: "usage" });
    expect(result.error).toContain('--exec-timeout-ms takes a positive whole number, got "0"');
    expect(ran).toBe(false);
  });

  it("--json as another flag's value is that value, not --json: no JSON (commander reads it as the config file's name)", async () => {
    const w = world();
    const { code, stdout, stderr } = await runCli(["run", "--config", "--json", "script.ts"], { cwd: w.work, env: w.env });
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/^tacit: .*--json/);
    expect(existsSync(path.join(w.work, "ran.txt"))).toBe(false);
  });
});

describe("tacit check --json: a usage or config error is one JSON object of check's shape", () => {
  it("a script file that does not exist", async () => {
    const { code, result, stderr } = await refused<CheckJsonResult>(() => ["check", "--json", "missing.ts"]);
    expect(code).toBe(2);
    expect(result).toEqual({ ok: false, errors: [], error: expect.stringContaining('cannot read the script "missing.ts"'), exitCode: 2, durationMs: 0 });
    expect(result.error).toContain("Pass a .ts file, or - to read the script from standard input");
    expect(stderr).toBe(`${result.error}\n`);
  });

  it("an unknown flag (commander's own error, and where to look)", async () => {
    const { code, result, stderr } = await refused<CheckJsonResult>(() => ["check", "--json", "--no-such-flag", "script.ts"]);
    expect(code).toBe(2);
    expect(result).toEqual({ ok: false, errors: [], error: "error: unknown option '--no-such-flag' (run tacit --help for usage)", exitCode: 2, durationMs: 0 });
    expect(stderr).toContain("error: unknown option '--no-such-flag'");
  });

  it("a missing script argument", async () => {
    const { code, result, stderr } = await refused<CheckJsonResult>(() => ["check", "--json"]);
    expect(code).toBe(2);
    expect(result).toEqual({ ok: false, errors: [], error: "error: missing required argument 'file' (run tacit --help for usage)", exitCode: 2, durationMs: 0 });
    expect(stderr).toContain("error: missing required argument 'file'");
  });

  it("a config file that is not JSON", async () => {
    const { code, result, stderr } = await refused<CheckJsonResult>((w) => {
      writeFileSync(path.join(w.dir, "bad.json"), "{ not json");
      return ["check", "--json", "--config", path.join(w.dir, "bad.json"), "script.ts"];
    });
    expect(code).toBe(2);
    expect(result).toMatchObject({ ok: false, errors: [], exitCode: 2, durationMs: 0 });
    expect(result.error).toMatch(/^tacit: .*bad\.json.*JSON/);
    expect(stderr).toBe(`${result.error}\n`);
  });

  it("--json as the config file's name, after --, or not given: stdout empty, the error on stderr", async () => {
    for (const args of [["check", "--config", "--json", "script.ts"], ["check", "missing.ts", "--", "--json"], ["check", "missing.ts"]]) {
      const w = world();
      const { code, stdout, stderr } = await runCli(args, { cwd: w.work, env: w.env });
      expect(code, args.join(" ")).toBe(2);
      expect(stdout, args.join(" ")).toBe("");
      // tacit's own refusal, or commander's (check takes no arguments after --: too many arguments)
      expect(stderr, args.join(" ")).toMatch(/^(tacit|error): /);
    }
  });

  it("a script that checks: its result as before, one line", async () => {
    const w = world();
    const { code, stdout } = await runCli(["check", "--json", "--no-check", "script.ts"], { cwd: w.work, env: w.env });
    expect(code).toBe(0);
    expect(stdout).toMatch(/^[^\n]+\n$/);
    expect(JSON.parse(stdout)).toEqual({ ok: true, errors: [], error: null, exitCode: 0, durationMs: expect.any(Number) });
    expect(existsSync(path.join(w.work, "ran.txt"))).toBe(false);
  });
});
