// A person is only asked about what the allowlists would let happen (README). Opening a root
// outside --allowed-roots is refused by the allowlists unless a beyondAllowlist rule's question
// extends them. A security review found a second question asked anyway: after a no to "extend
// fs.open X", or under a rule on fs.open X that is no beyondAllowlist rule, the person was asked
// "fs.open X", and a yes to it was remembered, though the allowlists then refused the open.
// Expected: no such question; the script gets the allowlists' refusal; nothing is remembered.

import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { lit, onTerminal, storedApprovals, unattended, worlds } from "./fixtures.js";

const world = worlds("tacit-open-outside-");

function outsideWorld() {
  const w = world();
  const outside = path.join(w.root, "outside");
  mkdirSync(outside);
  writeFileSync(path.join(outside, "o.txt"), "CANARY-OUTSIDE-7713\n");
  const script = w.script(
    `try { requestFileSystem(${lit(outside)}, (fs) => println("read " + fs.access("o.txt").read().trim())); }\n` +
      `catch (e) { println("open refused: " + (e instanceof SecurityError ? "SecurityError" : "other") + ": " + (e as Error).message); }\n`,
  );
  return { w, outside, script };
}

it("a no to extending the allowlists to a root is not followed by a question about opening it", async () => {
  const { w, outside, script } = outsideWorld();
  const config = w.config([{ action: "fs.open", path: outside, tier: "approve-once", beyondAllowlist: true }]);
  const run = await onTerminal(w, ["run", "--config", config, script], { answers: ["n", "y"] });
  expect(run.code, run.all).toBe(0);
  expect(run.stdout).toContain(`pattern: extend fs.open ${outside}`);
  // The second question, about an open the allowlists refuse anyway.
  expect(run.stdout).not.toContain(`pattern: fs.open ${outside}`);
  expect(run.prompts, run.all).toBe(1);
  expect(run.stdout).not.toContain("CANARY-OUTSIDE-7713");
  expect(run.stdout).toContain("open refused: SecurityError");
  expect(run.stdout).toContain("outside the allowed roots");
  expect(run.stdout).toContain("--allowed-roots");
  expect(storedApprovals(w)).toBeNull();
});

it("a rule on fs.open that is no beyondAllowlist rule does not make a root outside the allowed roots askable", async () => {
  const { w, outside, script } = outsideWorld();
  const config = w.config([{ action: "fs.open", path: outside, tier: "approve-once" }]);
  const run = await onTerminal(w, ["run", "--config", config, script], { answers: ["y"] });
  expect(run.code, run.all).toBe(0);
  expect(run.prompts, run.all).toBe(0);
  expect(run.stdout).not.toContain("tacit: a script asks");
  expect(run.stdout).not.toContain("CANARY-OUTSIDE-7713");
  expect(run.stdout).toContain("open refused: SecurityError");
  expect(run.stdout).toContain("outside the allowed roots");
  // A yes to it used to be remembered, for an open the allowlists refuse every time.
  expect(storedApprovals(w)).toBeNull();

  // With no one to ask, the refusal is the allowlists', with the flag to change: a grant of "fs.open …" would not help.
  const alone = await unattended(w, ["run", "--config", config, script]);
  expect(alone.code, alone.all).toBe(0);
  expect(alone.stdout).toContain("open refused: SecurityError");
  expect(alone.stdout).toContain("--allowed-roots (config libraryConfig.allowedRoots)");
  expect(alone.stdout).not.toContain(`tacit approvals grant 'fs.open`);
});
