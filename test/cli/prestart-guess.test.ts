// `tacit run` starts its sandbox before its options are read (cli/prestart.ts), from a guess at
// the raw command line, and a sandbox notes what it found of the network namespaces in tacit's
// home. A command line the CLI then refuses (an unknown option, a missing value, two scripts) made
// ~/.config/tacit for a typo: nothing is started for one now, and the home is left unmade. The
// guess's list of options is the run command's own.

import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildProgram } from "../../cli/main.js";
import { RUN_OPTIONS } from "../../cli/prestart.js";
import { runCli, tempDir } from "../helpers.js";

const { dir, cleanup } = tempDir("tacit-prestart-guess-");
afterAll(cleanup);

describe("the prestart's guess", () => {
  it("knows every option of the run command, and which take a value", () => {
    const run = buildProgram(() => undefined).commands.find((command) => command.name() === "run")!;
    const own = new Map(run.options.map((option) => [option.long!, option.required || option.optional]));
    expect(new Map(RUN_OPTIONS)).toEqual(own);
  });

  it.each([
    [["run", "--bogus", "script.ts"]],
    [["run", "script.ts", "--no-chek"]],
    [["run", "--json=yes", "script.ts"]],
    [["run", "script.ts", "other.ts"]],
    [["run", "script.ts", "--exec-timeout-ms"]],
  ])("tacit %j is refused (exit 2) and leaves tacit's home unmade", async (args) => {
    writeFileSync(path.join(dir, "script.ts"), 'println("ran");\n');
    const home = path.join(dir, `home-${args.join("_")}`);
    const result = await runCli(args, { cwd: dir, env: { TACIT_HOME: home } });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stdout).not.toContain("ran");
    expect(existsSync(home), `${home} was made`).toBe(false);
  });
});
