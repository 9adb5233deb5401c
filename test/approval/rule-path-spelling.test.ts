// An absolute rule path written with `//`, `/./` or `/x/../` is read as the path it names, as a
// relative one always was (joined to the working directory, which normalizes it). Matched as
// written, such a glob matched no path tacit names, and an always-ask rule on writes to
// `/work/app//deploy/**` let a script write deploy/prod.conf unasked, with no warning (the
// directory it names exists, so the rule was not reported as matching nothing).

import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { unattended, worlds } from "./fixtures.js";

const world = worlds("tacit-rule-path-spelling-");

it.each([
  ["a doubled slash", (work: string) => `${work}//deploy/**`],
  ["a ./ segment", (work: string) => `${work}/./deploy/**`],
  ["a x/../ segment", (work: string) => `${work}/x/../deploy/**`],
  ["a doubled slash in a directory glob", (work: string) => `${work}//deploy/`],
])("an always-ask rule on writes to an absolute glob with %s asks about writes there", async (_label, glob) => {
  const w = world();
  w.file("deploy/prod.conf", "keep me\n");
  const config = w.config([{ action: "fs.write", path: glob(w.work), tier: "always-ask" }]);
  const script = w.script(
    `requestFileSystem(".", (fs) => {\n` +
      `  try { fs.access("deploy/prod.conf").write("replaced\\n"); println("wrote"); } catch (e) { println("refused:", String(e)); }\n` +
      `});\n`,
  );
  const run = await unattended(w, ["run", "--config", config, script]);
  // The bad thing: the file the rule asks about every time was replaced with no one asked.
  expect(readFileSync(w.at("deploy/prod.conf"), "utf8"), run.all).toBe("keep me\n");
  expect(run.stdout, run.all).toContain(`refused: SecurityError: fs.write ${w.at("deploy/prod.conf")}: refused: the policy requires a person's approval (always-ask)`);
  expect(run.code, run.all).toBe(0);
});
