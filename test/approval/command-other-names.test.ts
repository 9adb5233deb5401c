// An exec rule holds however a script names the program it is on. Matched on the name alone, an
// always-ask rule on `make` let a script run make as `gmake` (a link to it on Debian), and one on
// `gcc` ran gcc as `gcc-12`, each permitted beside the ruled name, with no one asked. Here the
// program and its other names are made on a PATH of the test's own: a program that records each
// run in a marker file, a link to it in the same directory, one in another directory, and a hard link.

import { existsSync, linkSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { unattended, worlds } from "./fixtures.js";

const world = worlds("tacit-command-other-names-");

it("an always-ask rule on a command asks about the same program run by another name on PATH, directly or through env", async () => {
  const w = world();
  const bin = path.join(w.root, "bin");
  const more = path.join(w.root, "more-bin");
  mkdirSync(bin);
  mkdirSync(more);
  const marker = path.join(w.root, "deployed");
  const deployer = path.join(bin, "deployer");
  writeFileSync(deployer, `#!/bin/sh\necho "$1" >> ${marker}\n`, { mode: 0o755 });
  symlinkSync("deployer", path.join(bin, "ship"));
  symlinkSync(deployer, path.join(more, "Deploy-2"));
  linkSync(deployer, path.join(more, "deployer-1.0"));
  const config = w.config([{ action: "exec", command: "deployer", args: "prod*", tier: "always-ask" }], {
    libraryConfig: { commandPermissions: ["deployer", "ship", "Deploy-2", "deployer-1.0", "env"] },
  });
  const script = w.script(
    `requestExecPermission(["deployer", "ship", "Deploy-2", "deployer-1.0", "env"], (p) => {\n` +
      `  for (const [command, args] of [["ship", ["prod-by-link"]], ["Deploy-2", ["prod-by-other-dir"]], ["deployer-1.0", ["prod-by-hard-link"]], ["env", ["ship", "prod-through-env"]], ["env", ["Deploy-2", "prod-through-env-2"]], ["ship", ["staging"]]]) {\n` +
      `    try { println("ran", command, args.join(" "), p.exec(command, args).exitCode); } catch (e) { println("refused:", String(e)); }\n` +
      `  }\n` +
      `});\n`,
  );
  const run = await unattended(w, ["run", "--config", config, script], { PATH: `${bin}:${more}:${process.env.PATH ?? ""}` });
  // The bad thing: the deployer ran for prod, which the rule asks about every time, with no one asked.
  const ran = existsSync(marker) ? readFileSync(marker, "utf8") : "";
  expect(ran, run.all).not.toMatch(/prod/);
  for (const pattern of ["exec ship prod-by-link", "exec Deploy-2 prod-by-other-dir", "exec deployer-1.0 prod-by-hard-link", "exec env ship *", "exec env Deploy-2 *"]) {
    expect(run.stdout, run.all).toContain(`refused: SecurityError: ${pattern}: refused: the policy requires a person's approval (always-ask)`);
  }
  // The link runs the program: a command line the rule does not name went through it.
  expect(ran, run.all).toBe("staging\n");
  expect(run.stdout, run.all).toContain("ran ship staging 0");
  expect(run.code, run.all).toBe(0);
});
