// Help runs nothing and keeps nothing: no sandbox is started for it, and tacit's home is not made.
// `tacit run` starts its sandbox before its options are read (cli/prestart.ts), and a sandbox
// notes what it found of the network namespaces in the home: `tacit run --help` made ~/.config/tacit.

import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, tempDir } from "../helpers.js";

const { dir, cleanup } = tempDir("tacit-help-");
afterAll(cleanup);

describe("help", () => {
  it.each([[["--help"]], [["run", "--help"]], [["run", "-h"]], [["run", "script.ts", "--help"]]])(
    "tacit %j prints usage, exits 0 and leaves tacit's home unmade",
    async (args) => {
      const home = path.join(dir, `home-${args.join("-")}`);
      const result = await runCli(args, { cwd: dir, env: { TACIT_HOME: home } });
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^Usage: tacit/);
      expect(existsSync(home), `${home} was made`).toBe(false);
    },
  );
});
