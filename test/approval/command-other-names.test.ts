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

// Asked about under a rule on another name, the refusal said only the rule's tier: a person (or
// an agent with no one to ask) could not tell why `ship` was asked about under a policy whose
// rules name only `deployer`. It now names the rule, says the command is another name for the
// program it is on, and what pre-approves it; the grant it names does.
it("a refusal under a rule on another name for the program names the rule, says why, and says what pre-approves it", async () => {
  const w = world();
  const bin = path.join(w.root, "bin");
  mkdirSync(bin);
  const marker = path.join(w.root, "deployed");
  writeFileSync(path.join(bin, "deployer"), `#!/bin/sh\necho "$1" >> ${marker}\n`, { mode: 0o755 });
  symlinkSync("deployer", path.join(bin, "ship"));
  const config = w.config([{ action: "exec", command: "deployer", args: "prod*", tier: "approve-once" }], {
    libraryConfig: { commandPermissions: ["deployer", "ship"] },
  });
  const script = w.script(
    `requestExecPermission(["ship"], (p) => {\n` +
      `  try { println("ran", p.exec("ship", ["prod-by-link"]).exitCode); } catch (e) { println("refused:", String(e)); }\n` +
      `});\n`,
  );
  const env = { PATH: `${bin}:${process.env.PATH ?? ""}` };
  const run = await unattended(w, ["run", "--config", config, script], env);
  // The bad thing: the deployer ran for prod with no one asked.
  expect(existsSync(marker), run.all).toBe(false);
  expect(run.stdout, run.all).toContain("refused: SecurityError: exec ship prod-by-link: refused: the policy requires a person's approval (approve-once)");
  expect(run.stdout, run.all).toContain(
    "(ship is asked about under the rule on `deployer prod*` (approve-once): on this PATH it runs the same program as `deployer`, another name for it",
  );
  expect(run.stdout, run.all).toContain("a grant under the rule's name does not cover this one: pre-approve it as named here, `tacit approvals grant 'exec ship prod-by-link'`");

  // What the refusal says to write pre-approves it: granted, the same script runs the command.
  const granted = await unattended(w, ["approvals", "grant", "exec ship prod-by-link"], env);
  expect(granted.code, granted.all).toBe(0);
  const again = await unattended(w, ["run", "--config", config, script], env);
  expect(again.stdout, again.all).toContain("ran 0");
  expect(readFileSync(marker, "utf8")).toBe("prod-by-link\n");
});
