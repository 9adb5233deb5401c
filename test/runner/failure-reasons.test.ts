// The reasons failed classified values keep are counted as values are. A failed value keeps
// why it failed for as long as its evaluation or session lives (up to 2,048 characters of a map
// function's error), and the budget counted only values that were computed: a security review
// failed 100,000 maps in each session with a function throwing a 4,000-character error, and
// tacit serve grew by about 250 MB a session, bounded by nothing but the 100,000 values a
// session keeps, times its sessions (3.8 GB resident after fifteen, at a 4 GiB heap; at 250 MB,
// it died in the second session of 60,000).
// Counted, a reason that does not fit is replaced by one fixed reason, out of sight, as a value
// that does not fit is. Shown here against a small classifiedStoreLimitBytes (the same budget
// the server's share is taken with), so that the budget fills after a few hundred failures
// rather than after the heap's worth the review needed: that run took a minute of the suite.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { runScript } from "../helpers.js";

const dir = mkdtempSync(path.join(tmpdir(), "tacit-failure-reasons-"));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("the reasons of failed values fill the store's budget: past it, a failed value keeps one fixed reason", async () => {
  const config = path.join(dir, "small-store.json");
  // 2 MiB: some 500 reasons of 2,048 two-byte characters; the script fails 1,500 maps.
  writeFileSync(config, JSON.stringify({ classifiedStoreLimitBytes: 2 * 1024 * 1024 }));
  const sink = path.join(dir, "sink.txt");
  const script = `const secret = classify("s");
const kept: Classified<string>[] = [];
for (let i = 0; i < 1_500; i++) kept.push(secret.map((v) => { throw new Error("ж".repeat(4000)); }));
println(kept[kept.length - 1]);
println("done", kept.length);
`;
  const r = await runScript(script, ["--no-check", "--config", config, "--secure-output", sink], { cwd: dir });
  expect(r.code, r.stderr.slice(0, 2000)).toBe(0);
  expect(r.stdout).toBe("Classified(***)\ndone 1500\n");
  // The last value's reason is the fixed one: the 1,500 reasons did not all fit.
  expect(readFileSync(sink, "utf8")).toContain("the value failed, and why was not kept:");
}, 120_000);
