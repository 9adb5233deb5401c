// A rule's absolute path glob written through a symbolic link (the shell's $PWD inside a linked
// directory, /tmp on macOS, a home directory reached through a link) is matched where it leads
// too. tacit names a script's paths from its working directory as the system gives it (links
// resolved) and where they really lead; a glob that named the link itself matched neither, so an
// always-ask rule on `<link>/deploy/**` let a script write deploy/prod.conf with no question, and
// a read rule on `<link>/private/**` let it read, and search, private/ unasked.

import { readFileSync, symlinkSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { unattended, worlds } from "./fixtures.js";

const world = worlds("tacit-rule-path-link-");

it("an always-ask rule whose absolute path names a link to the project asks about the files it leads to", async () => {
  const w = world();
  w.file("deploy/prod.conf", "safe\n");
  w.file("private/secret.txt", "CANARY-rule-path-link\n");
  // What the person's shell calls the project: a link to it.
  const alias = path.join(w.root, "alias");
  symlinkSync(w.work, alias);
  const config = w.config([
    { action: "fs.write", tier: "always-ask", path: `${alias}/deploy/**` },
    { action: "fs.read", tier: "always-ask", path: `${alias}/private/**` },
  ]);
  const script = w.script(
    `requestFileSystem(".", (fs) => {\n` +
      `  try { fs.access("deploy/prod.conf").write("evil\\n"); println("wrote"); } catch (e) { println("write refused:", String(e)); }\n` +
      `  try { println("read", fs.access("private/secret.txt").read()); } catch (e) { println("read refused:", String(e)); }\n` +
      `  try { println("found", JSON.stringify(fs.grepRecursive(".", "CANARY"))); } catch (e) { println("search refused:", String(e)); }\n` +
      `});\n`,
  );
  const run = await unattended(w, ["run", "--config", config, script]);
  // The bad things: the file under the write rule changed, the one under the read rule reached the script, unasked.
  expect(readFileSync(w.at("deploy/prod.conf"), "utf8"), run.all).toBe("safe\n");
  expect(run.stdout, run.all).not.toContain("CANARY-rule-path-link");
  expect(run.stdout, run.all).toContain(`write refused: SecurityError: fs.write ${w.at("deploy/prod.conf")}: refused: the policy requires a person's approval (always-ask)`);
  expect(run.stdout, run.all).toContain(`read refused: SecurityError: fs.read ${w.at("private/secret.txt")}: refused: the policy requires a person's approval (always-ask)`);
  expect(run.stdout, run.all).toContain(`search refused: SecurityError: fs.search ${w.work}: refused: the policy requires a person's approval (always-ask)`);
  expect(run.stdout).not.toContain("wrote");
});
