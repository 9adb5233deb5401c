// A file-system scope opened at a link works below where the link led when the scope opened
// (its real root): every later action of the scope lands there, whatever the link becomes.
// The approval gate named those actions from the root as the script named it, resolved anew,
// so once the link was gone (or led elsewhere) a rule on the real directory no longer matched:
// a script opened requestFileSystem("dep") with dep -> deploy, deleted the link dep (a delete
// removes the link itself) through a scope on ".", and wrote dep/prod.conf, which went to
// deploy/prod.conf with no question under an always-ask rule on deploy/**; a read of
// secrets/ went by a read rule the same way.

import { mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { expect, it } from "vitest";
import { unattended, worlds } from "./fixtures.js";

const world = worlds("tacit-scope-root-link-");

it("a write through a scope opened at a link is asked about where it lands, after the link is gone or leads elsewhere", async () => {
  const w = world();
  w.file("deploy/prod.conf", "safe\n");
  mkdirSync(w.at("scratch"));
  symlinkSync("deploy", w.at("dep"));
  symlinkSync("deploy", w.at("dep2"));
  const config = w.config([{ action: "fs.write", tier: "always-ask", path: `${w.at("deploy")}/**` }], { libraryConfig: { commandPermissions: ["ln"] } });
  const script = w.script(
    `requestFileSystem("dep", (d) => {\n` +
      `  requestFileSystem(".", (fs) => fs.access("dep").delete());\n` +
      `  try { d.access("prod.conf").write("evil\\n"); println("wrote"); } catch (e) { println("refused:", String(e)); }\n` +
      `});\n` +
      `requestFileSystem("dep2", (d) => {\n` +
      `  requestExecPermission(["ln"], (p) => println("ln", p.exec("ln", ["-sfn", "scratch", "dep2"]).exitCode));\n` +
      `  try { d.access("prod.conf").append("evil\\n"); println("appended"); } catch (e) { println("refused:", String(e)); }\n` +
      `});\n`,
  );
  const run = await unattended(w, ["run", "--config", config, script]);
  // The bad thing: deploy/prod.conf changed with no one asked, under a rule that asks every time.
  expect(readFileSync(w.at("deploy/prod.conf"), "utf8"), run.all).toBe("safe\n");
  expect(run.stdout).toContain("ln 0");
  // Each refusal names where the write would have gone.
  expect(run.stdout, run.all).toContain(`refused: SecurityError: fs.write ${w.at("dep/prod.conf")} -> ${w.at("deploy/prod.conf")}: refused`);
  expect(run.stdout, run.all).toContain(`refused: SecurityError: fs.write ${w.at("dep2/prod.conf")} -> ${w.at("deploy/prod.conf")}: refused`);
  expect(run.stdout).not.toContain("wrote");
  expect(run.stdout).not.toContain("appended");
});

it("a read through a scope opened at a link that is gone is judged by the read rule on where it reads", async () => {
  const w = world();
  w.file("secrets/key.txt", "the-secret-key\n");
  symlinkSync("secrets", w.at("s"));
  const config = w.config([{ action: "fs.read", tier: "always-ask", path: `${w.at("secrets")}/**` }]);
  const script = w.script(
    `requestFileSystem("s", (d) => {\n` +
      `  requestFileSystem(".", (fs) => fs.access("s").delete());\n` +
      `  try { println("read", d.access("key.txt").read()); } catch (e) { println("refused:", String(e)); }\n` +
      `});\n`,
  );
  const run = await unattended(w, ["run", "--config", config, script]);
  // The bad thing: the file under the read rule reached the script unasked.
  expect(run.stdout, run.all).not.toContain("the-secret-key");
  expect(run.stdout, run.all).toContain(`refused: SecurityError: fs.read ${w.at("s/key.txt")} -> ${w.at("secrets/key.txt")}: refused`);
});
