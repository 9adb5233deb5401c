// A config that names a key twice in one object is refused, naming the key and where: JSON.parse
// keeps the last in silence, so a second "policy" (say, an empty one pasted below) dropped the
// rules above it, and a rule's second "path" moved it elsewhere; each action the person meant to
// be asked about ran unasked, with no word that the first had been read at all.

import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { unattended, worlds } from "./fixtures.js";

const world = worlds("tacit-config-repeated-key-");

const WRITE_DEPLOY = `{ "action": "fs.write", "tier": "always-ask", "path": "deploy/**" }`;

it.each([
  ["a second policy", `{ "policy": { "rules": [${WRITE_DEPLOY}] },\n  "policy": { "rules": [] } }`, "policy", "line 2, column 3"],
  ["a rule's second path", `{ "policy": { "rules": [\n  { "action": "fs.write", "tier": "always-ask", "path": "deploy/**",\n    "path": "elsewhere/**" }] } }`, "path", "line 3, column 5"],
])("%s is refused before anything runs, and the file the first protects is unchanged", async (_name, text, key, place) => {
  const w = world();
  w.file("deploy/prod.conf", "safe\n");
  const config = path.join(w.root, "tacit.json");
  writeFileSync(config, text);
  const script = w.script(`requestFileSystem(".", (fs) => { fs.access("deploy/prod.conf").write("evil\\n"); println("wrote"); });\n`);
  const run = await unattended(w, ["run", "--config", config, script]);
  // The bad thing: the file under the rule the person wrote changed with no one asked.
  expect(readFileSync(w.at("deploy/prod.conf"), "utf8"), run.all).toBe("safe\n");
  expect(run.code, run.all).toBe(2);
  expect(run.stdout).toBe("");
  expect(run.stderr).toContain(`${config}: the key "${key}" appears twice in one object (the second at ${place}); JSON keeps only the last`);
});

it("the same key in different objects is no repeat", async () => {
  const w = world();
  w.file("deploy/prod.conf", "safe\n");
  const config = w.config([
    { action: "fs.write", tier: "always-ask", path: "deploy/**" },
    { action: "fs.delete", tier: "always-ask", path: "deploy/**" },
  ]);
  const script = w.script(`requestFileSystem(".", (fs) => { try { fs.access("deploy/prod.conf").write("evil\\n"); } catch (e) { println(String(e)); } });\n`);
  const run = await unattended(w, ["run", "--config", config, script]);
  expect(run.code, run.all).toBe(0);
  expect(run.stdout).toContain(`SecurityError: fs.write ${w.at("deploy/prod.conf")}: refused: the policy requires a person's approval (always-ask)`);
  expect(readFileSync(w.at("deploy/prod.conf"), "utf8")).toBe("safe\n");
});
