// `tacit approvals list` shows a pattern with printable()'s escapes (\u000a for a line feed), and
// showed a backslash as itself: a file the script named "a\nb" and one it named "a\u000ab" (a
// backslash, then "u000a") were two approvals listed as the same line, and `approvals revoke`
// given that line removed both. A security review had a person unable to tell from the list
// which of two files a yes covered. A backslash is now listed as \\, so each line names one
// pattern, and revoke given a line removes the approval listed there. Through the real CLI.

import { expect, it } from "vitest";
import { approvals, storedApprovals, worlds } from "./fixtures.js";

const world = worlds("tacit-list-escapes-");

it("two approvals that differ by a control character or its escape's text are listed as two lines, and revoke given one line removes that one", async () => {
  const w = world();
  const control = `fs.write ${w.at("a\nb")}`;
  const spelled = `fs.write ${w.at("a\\u000ab")}`;
  const granted = await approvals(w, ["grant", control, spelled]);
  expect(granted.code, granted.stderr).toBe(0);

  const list = await approvals(w, ["list"]);
  expect(list.code, list.stderr).toBe(0);
  const shown = list.stdout.trimEnd().split("\n").map((line) => line.split("\t")[0]!);
  expect(shown).toHaveLength(2);
  expect(new Set(shown).size).toBe(2);
  expect(shown).toContain(`fs.write ${w.at("a\\u000ab")}`);
  expect(shown).toContain(`fs.write ${w.at("a\\\\u000ab")}`);

  // Revoked as listed: the line of the file named with a backslash removes that approval only.
  const revoked = await approvals(w, ["revoke", `fs.write ${w.at("a\\\\u000ab")}`]);
  expect(revoked.code, revoked.stderr).toBe(0);
  expect(storedApprovals(w)?.map((a) => a.pattern)).toEqual([control]);
});
