// A rule's path that starts with "~" is refused with the path to write instead. A shell expands
// "~" and tacit does not: an always-ask rule on writes to `~/deploy/**` named a directory called
// "~" in the working directory, and a script wrote ~/deploy/prod.conf (the home directory's) with
// no question, the run's only sign a warning on stderr that nothing existed at <cwd>/~/deploy.

import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { unattended, worlds } from "./fixtures.js";

const world = worlds("tacit-rule-path-home-");

it("refuses a rule path starting with ~ and runs nothing, saying what to write", async () => {
  const w = world();
  const home = path.join(w.root, "person");
  mkdirSync(path.join(home, "deploy"), { recursive: true });
  const config = w.config([{ action: "fs.write", path: "~/deploy/**", tier: "always-ask" }], { libraryConfig: { allowedRoots: [w.work, home] } });
  const script = w.script(`requestFileSystem(${JSON.stringify(home)}, (fs) => fs.access("deploy/prod.conf").write("replaced\\n"));\nprintln("wrote");\n`);
  const run = await unattended(w, ["run", "--config", config, script], { HOME: home });
  // The bad thing: the home directory's deploy/prod.conf written under a rule meant to ask about it.
  expect(existsSync(path.join(home, "deploy", "prod.conf")), run.all).toBe(false);
  expect(run.stdout).not.toContain("wrote");
  expect(run.stderr).toContain(
    `policy.rules.0.path: "~/deploy/**" starts with "~", which tacit does not expand (it would name a directory called "~" in the working directory): ` +
      `write the home directory out (${JSON.stringify(path.join(home, "deploy/**"))})`,
  );
  expect(run.code, run.all).toBe(2);
});

it("refuses ~user/ the same way, and takes a path with ~ elsewhere in it as written", async () => {
  const w = world();
  const other = w.config([{ action: "fs.write", path: "~alice/deploy/**", tier: "always-ask" }]);
  const run = await unattended(w, ["run", "--config", other, w.script(`println("ran");\n`)]);
  expect(run.stderr).toContain(`"~alice/deploy/**" starts with "~", which tacit does not expand (it would name a directory called "~alice" in the working directory): write the absolute path of that user's home directory`);
  expect(run.code, run.all).toBe(2);
  w.file("backup~/keep.txt");
  const inside = w.config([{ action: "fs.write", path: "backup~/**", tier: "always-ask" }]);
  const asked = await unattended(w, ["run", "--config", inside, w.script(`requestFileSystem(".", (fs) => { try { fs.access("backup~/keep.txt").write("x"); } catch (e) { println(String(e)); } });\n`)]);
  expect(asked.stdout, asked.all).toContain(`fs.write ${w.at("backup~/keep.txt")}: refused: the policy requires a person's approval (always-ask)`);
  expect(asked.code, asked.all).toBe(0);
});
