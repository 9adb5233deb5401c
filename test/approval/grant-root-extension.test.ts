// A beyondAllowlist approve-once rule on fs.open makes a root outside --allowed-roots askable,
// "extend fs.open X", as one on exec or net makes a command or a host askable. A security review
// found it could not be pre-approved: `tacit approvals grant` took "extend exec …" and "extend
// net …" only, and the refusal of an unattended run said to grant "fs.open X", which the
// allowlists refuse whatever is remembered. Expected: the refusal's advice works (the grant of
// the extension, by the real path asked about, or the flag), the grant is accepted and answers
// the question in a later unattended run, and a grant that no question would ever match is refused.

import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { approvals, lit, storedApprovals, unattended, worlds } from "./fixtures.js";

const world = worlds("tacit-grant-root-");

function outsideWorld() {
  const w = world();
  const outside = path.join(w.root, "outside");
  mkdirSync(outside);
  writeFileSync(path.join(outside, "o.txt"), "CANARY-OUTSIDE-4409\n");
  // The script names the root through a link: what is asked about, and granted, is where it leads.
  const link = path.join(w.root, "link");
  symlinkSync(outside, link);
  const script = w.script(
    `try { requestFileSystem(${lit(link)}, (fs) => println("read " + fs.access("o.txt").read().trim())); }\n` +
      `catch (e) { println("open refused: " + (e instanceof SecurityError ? "SecurityError" : "other") + ": " + (e as Error).message); }\n`,
  );
  return { w, outside, link, script };
}

it("unattended, the refusal says how to pre-approve the extension; the grant is accepted and answers it in a later run", async () => {
  const { w, outside, script } = outsideWorld();
  const config = w.config([{ action: "fs.open", path: `${outside}/`, tier: "approve-once", beyondAllowlist: true }]);
  const refused = await unattended(w, ["run", "--config", config, script]);
  expect(refused.code, refused.all).toBe(0);
  expect(refused.stdout).toContain("open refused: SecurityError");
  expect(refused.stdout).not.toContain("CANARY-OUTSIDE-4409");
  expect(refused.stdout).toContain("outside the allowed roots");
  expect(refused.stdout).toContain(`tacit approvals grant 'extend fs.open ${outside}'`);
  // Advice that does not help: the allowlists refuse the open whatever is remembered for it.
  expect(refused.stdout).not.toContain(`tacit approvals grant 'fs.open`);

  const granted = await approvals(w, ["grant", `extend fs.open ${outside}`]);
  expect(granted.code, granted.all).toBe(0);
  expect(storedApprovals(w)!.map((a) => a.pattern)).toEqual([`extend fs.open ${outside}`]);

  const later = await unattended(w, ["run", "--config", config, script]);
  expect(later.code, later.all).toBe(0);
  expect(later.stdout).toContain("read CANARY-OUTSIDE-4409");
});

it("an always-ask extension is never pre-approved: the refusal says so, and names no grant", async () => {
  const { w, outside, script } = outsideWorld();
  const config = w.config([{ action: "fs.open", path: outside, tier: "always-ask", beyondAllowlist: true }]);
  const refused = await unattended(w, ["run", "--config", config, script]);
  expect(refused.stdout).toContain("open refused: SecurityError");
  expect(refused.stdout).toContain("outside the allowed roots");
  expect(refused.stdout).toContain(`extend fs.open ${outside}`);
  expect(refused.stdout).toContain("always-ask");
  expect(refused.stdout).not.toContain("tacit approvals grant");
});

it("grant refuses an extension of the allowlists to a root no question would name, saying why and what to do", async () => {
  const { w, outside, link } = outsideWorld();
  for (const [bad, why] of [
    ["extend fs.open", 'it names no path after "extend fs.open"'],
    ["extend fs.open outside", "not an absolute path"],
    [`extend fs.open ${outside}/`, `extend fs.open ${outside}`],
    [`extend fs.open ${outside}/../outside`, `extend fs.open ${outside}`],
    [`extend fs.open ${link}`, `extend fs.open ${outside}`],
    [`extend fs.open ${path.join(w.root, "missing")}`, "does not exist"],
  ] as const) {
    const refused = await approvals(w, ["grant", bad]);
    expect(refused.code, `${bad}\n${refused.all}`).toBe(2);
    expect(refused.stderr).toContain(`"${bad}" is not a pattern tacit asks about: `);
    expect(refused.stderr, bad).toContain(why);
    expect(storedApprovals(w) ?? []).toEqual([]);
  }
});
