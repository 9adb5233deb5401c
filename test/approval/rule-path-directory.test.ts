// A rule's path glob that ends in "/" (`deploy/`, as .gitignore and classifiedPaths write a
// directory) covers that directory and everything below it. Matched as written it matched no
// path at all (tacit names paths without a trailing "/"), with no word to the person: an
// always-ask rule on writes to `deploy/` let a script rewrite deploy/prod.conf unasked.

import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { unattended, worlds } from "./fixtures.js";

const world = worlds("tacit-rule-path-directory-");

it("an always-ask rule on a path ending in / asks about the files below that directory, and the directory itself", async () => {
  const w = world();
  w.file("deploy/prod.conf", "safe\n");
  w.file("deploy/old/x.conf", "old\n");
  const config = w.config([
    { action: "fs.write", tier: "always-ask", path: "deploy/" },
    { action: "fs.delete", tier: "always-ask", path: `${w.at("deploy/old")}/` },
  ]);
  const script = w.script(
    `requestFileSystem(".", (fs) => {\n` +
      `  try { fs.access("deploy/prod.conf").write("evil\\n"); println("wrote"); } catch (e) { println("write refused:", String(e)); }\n` +
      `  try { fs.access("deploy/old/x.conf").delete(); println("deleted file"); } catch (e) { println("delete refused:", String(e)); }\n` +
      `});\n`,
  );
  const run = await unattended(w, ["run", "--config", config, script]);
  // The bad things: a file below the directory a rule names changed, or went, with no one asked.
  expect(readFileSync(w.at("deploy/prod.conf"), "utf8"), run.all).toBe("safe\n");
  expect(w.exists("deploy/old/x.conf"), run.all).toBe(true);
  expect(run.stdout, run.all).toContain(`write refused: SecurityError: fs.write ${w.at("deploy/prod.conf")}: refused: the policy requires a person's approval (always-ask)`);
  expect(run.stdout, run.all).toContain(`delete refused: SecurityError: fs.delete ${w.at("deploy/old/x.conf")}: refused: the policy requires a person's approval (always-ask)`);
});
