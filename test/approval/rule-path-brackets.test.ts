// A rule's path glob whose brackets and braces name a directory as it is written matches it:
// Next.js names routes so (`app/[...slug]/`), and picomatch read `[...slug]` as a class of one
// character and `{a,b}` as a choice, so an always-ask rule on writes to `app/[...slug]/**` or
// `conf/{prod,staging}/**` matched no file in those directories, and a script rewrote them
// with no question.

import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { unattended, worlds } from "./fixtures.js";

const world = worlds("tacit-rule-path-brackets-");

it.each([
  ["a catch-all route", "app/[...slug]", "page.tsx"],
  ["a brace in a name", "conf/{prod,staging}", "db.conf"],
  ["a range in a name", "data/part{1..3}", "rows.csv"],
])("%s: an always-ask rule on writes below it, as written, asks", async (_name, directory, file) => {
  const w = world();
  w.file(`${directory}/${file}`, "safe\n");
  const config = w.config([{ action: "fs.write", tier: "always-ask", path: `${directory}/**` }]);
  const script = w.script(
    `requestFileSystem(".", (fs) => {\n` +
      `  try { fs.access(${JSON.stringify(`${directory}/${file}`)}).write("evil\\n"); println("wrote"); } catch (e) { println("refused:", String(e)); }\n` +
      `});\n`,
  );
  const run = await unattended(w, ["run", "--config", config, script]);
  // The bad thing: a file below the directory the rule names changed with no one asked.
  expect(readFileSync(w.at(`${directory}/${file}`), "utf8"), run.all).toBe("safe\n");
  expect(run.stdout, run.all).toContain(`refused: SecurityError: fs.write ${w.at(`${directory}/${file}`)}: refused: the policy requires a person's approval (always-ask)`);
  expect(run.stdout).not.toContain("wrote");
});
