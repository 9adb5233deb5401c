// A rule on opening a directory (fs.open) also covers opening one below it, and what a scope
// opened above it reaches there: an always-ask rule on opening private/ refused
// requestFileSystem("private"), while requestFileSystem("private/inner") opened unasked, and
// requestFileSystem(".") read private/secret.txt, wrote beside it and searched it with no
// question. In a scope opened at the directory, the rule was applied when it opened: what is
// done there is not asked about again.

import { expect, it } from "vitest";
import { onTerminal, unattended, worlds } from "./fixtures.js";

const world = worlds("tacit-open-rule-below-");

it("an always-ask rule on opening private/ asks about reading, writing and searching it from a scope opened above", async () => {
  const w = world();
  w.file("private/secret.txt", "CANARY-open-rule-below\n");
  w.file("public/readme.txt", "hello\n");
  w.file("private/inner/note.txt", "CANARY-open-rule-inner\n");
  const config = w.config([{ action: "fs.open", tier: "always-ask", path: "private" }]);
  const script = w.script(
    `requestFileSystem(".", (fs) => {\n` +
      `  try { println("read", fs.access("private/secret.txt").read()); } catch (e) { println("read refused:", String(e)); }\n` +
      `  try { fs.access("private/planted.txt").write("x"); println("wrote"); } catch (e) { println("write refused:", String(e)); }\n` +
      `  try { println("found", JSON.stringify(fs.grepRecursive("private", "CANARY"))); } catch (e) { println("search refused:", String(e)); }\n` +
      `  println("public", fs.access("public/readme.txt").read());\n` +
      `});\n` +
      `try { requestFileSystem("private/inner", (fs) => println("inner", fs.access("note.txt").read())); } catch (e) { println("inner refused:", String(e)); }\n`,
  );
  const run = await unattended(w, ["run", "--config", config, script]);
  // The bad things: the directory the rule guards read, written and searched with no one asked.
  expect(run.stdout, run.all).not.toContain("CANARY-open-rule-below");
  expect(run.stdout, run.all).not.toContain("CANARY-open-rule-inner");
  expect(run.stdout, run.all).toContain(`inner refused: SecurityError: fs.open ${w.at("private/inner")}: refused: the policy requires a person's approval (always-ask)`);
  expect(w.exists("private/planted.txt")).toBe(false);
  expect(run.stdout, run.all).toContain(`read refused: SecurityError: fs.read ${w.at("private/secret.txt")}: refused: the policy requires a person's approval (always-ask)`);
  expect(run.stdout, run.all).toContain(`write refused: SecurityError: fs.write ${w.at("private/planted.txt")}: refused: the policy requires a person's approval (always-ask)`);
  expect(run.stdout, run.all).toContain(`search refused: SecurityError: fs.search ${w.at("private")}: refused: the policy requires a person's approval (always-ask)`);
  // What lies elsewhere is read as before.
  expect(run.stdout).toContain("public hello");
  expect(run.code, run.all).toBe(0);
});

it("in a scope opened at the directory with a yes, what is done there is not asked about again", async () => {
  const w = world();
  w.file("private/secret.txt", "inside\n");
  const config = w.config([{ action: "fs.open", tier: "always-ask", path: "private" }]);
  const script = w.script(`requestFileSystem("private", (fs) => { println("read", fs.access("secret.txt").read().trim()); println("list", fs.access(".").children().length); });\n`);
  const run = await onTerminal(w, ["run", "--config", config, script], { answers: ["y"] });
  expect(run.code, run.all).toBe(0);
  expect(run.prompts, run.all).toBe(1);
  expect(run.stdout).toContain("read inside");
  expect(run.stdout).toContain("list 1");
});
