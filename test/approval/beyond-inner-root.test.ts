// Two beyondAllowlist rules on roots outside --allowed-roots, one inside the other: a person may
// extend the allowlists to data/ (approve-once), but anything in data/private/ is always asked
// about (always-ask). A yes to opening data/ answers for the root it extends, not for the rule on
// the root inside it: reading data/private/key.txt in a scope opened at data/ is still asked
// about, as README says ("other rules still apply"). It was not: every beyondAllowlist rule
// matching the read was left out once data/ was extended, and the key was read unasked.

import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { lit, onTerminal, worlds } from "./fixtures.js";

const world = worlds("tacit-beyond-inner-");

it("a yes that extends the allowlists to a root does not answer for an always-ask beyondAllowlist rule on a root inside it", async () => {
  const w = world();
  const data = path.join(w.root, "data");
  mkdirSync(path.join(data, "private"), { recursive: true });
  writeFileSync(path.join(data, "private", "key.txt"), "CANARY-KEY-5531\n");
  writeFileSync(path.join(data, "public.txt"), "public\n");
  const config = w.config([
    { action: "fs.open", path: `${data}/**`, tier: "approve-once", beyondAllowlist: true },
    { action: "fs.open", path: `${data}/private/**`, tier: "always-ask", beyondAllowlist: true },
  ]);
  const script = w.script(
    `requestFileSystem(${lit(data)}, (fs) => {\n` +
      `  println("public: " + fs.access("public.txt").read().trim());\n` +
      `  try { println("private: " + fs.access("private/key.txt").read().trim()); }\n` +
      `  catch (e) { println("private refused: " + (e instanceof SecurityError ? "SecurityError" : String(e))); }\n` +
      `});\n`,
  );
  // The person allows opening data/ and nothing that names private/.
  const run = await onTerminal(w, ["run", "--config", config, script], {
    answers: [(shown) => (shown.slice(shown.lastIndexOf("tacit: a script asks")).includes("private") ? "n" : "y")],
  });
  expect(run.code, run.all).toBe(0);
  expect(run.stdout).toContain("public: public");
  expect(run.stdout).not.toContain("CANARY-KEY-5531");
  expect(run.stdout).toContain("private refused: SecurityError");
  // Asked twice: the extension to data/, then the read in private/ (refused).
  expect(run.prompts, run.all).toBe(2);
  expect(run.stdout).toContain(`fs.read ${path.join(data, "private", "key.txt")}`);

  // The yes to data/ is remembered (approve-once): a later run opens it unasked, and the read in private/ is still asked about.
  const later = await onTerminal(w, ["run", "--config", config, script], { answers: ["n"] });
  expect(later.code, later.all).toBe(0);
  expect(later.stdout).toContain("public: public");
  expect(later.stdout).not.toContain("CANARY-KEY-5531");
  expect(later.stdout).toContain("private refused: SecurityError");
  expect(later.prompts, later.all).toBe(1);
});
