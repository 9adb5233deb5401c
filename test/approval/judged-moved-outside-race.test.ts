// The executor refuses an action whose path leads elsewhere, by the time it acts, than where the
// approval gate applied the policy's rules to it (judged-path-race.test.ts). That refusal said
// where the path now led, also where that was outside the bounds: a script that swapped docs
// between a link to scratch/ and one to a directory outside the allowed roots while it opened
// scopes on docs was told "requestFileSystem("docs"): … (it now leads to /tmp/…/outside-<name>)"
// a few times in every few thousand opens: where a link led, which no other answer names. Now a
// place outside is only said to be outside. (Without the fix this test saw 6 to 13 such refusals
// in each of three runs.)
//
// The swap is done by one node process that renames a fresh link over docs in a loop (thousands of
// swaps a second), not by xargs running ln (a process per swap, some hundreds a second): a scope's
// root then changes between the gate's judgment and the open several times as often, so the
// attacker stops once it has seen MOVED_WANTED such refusals instead of attacking for 25 s. Without
// the fix this design saw 34 refusals naming the place outside in 100 moved (9 s, load 17), where
// the old one saw 5 in 25 s; 60 moved is still more named refusals than the old design ever caught.

import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { realTempDir } from "../files/fixtures.js";
import { executeText, makeWorld, serveWorld } from "./fixtures.js";

// Two calls run against each other; the attacker stops once it has seen MOVED_WANTED refusals of a
// root that moved after it was judged, or after ATTACK_MS (a machine too loaded to get there
// sooner), well inside the calls' limit (60 s).
const MOVED_WANTED = 60;
const ATTACK_MS = 25_000;
/** Run by node in the work directory: swaps docs between links to argv[1] and argv[2] (rename(2), atomic) until `stop` exists; prints the count. */
const SWAP_LOOP =
  'const fs = require("fs"); const places = process.argv.slice(1); let n = 0; ' +
  'while (!fs.existsSync("stop")) for (const to of places) { fs.symlinkSync(to, "docs.next"); fs.renameSync("docs.next", "docs"); n++; } ' +
  "console.log(n);";
let close: (() => Promise<void>) | null = null;
afterEach(async () => {
  await close?.();
  close = null;
});

it("a scope judged inside whose root is swapped to lead outside before it opens is refused without naming where", async () => {
  const temp = realTempDir("tacit-judged-outside-race-");
  const world = makeWorld(temp.dir);
  const secretName = `SECRETNAME${crypto.randomUUID().slice(0, 8)}`;
  const outside = path.join(temp.dir, `outside-${secretName}`);
  mkdirSync(outside);
  writeFileSync(path.join(outside, "x.txt"), "outside, untouched\n");
  world.file("scratch/x.txt", "scratch\n");
  symlinkSync("scratch", world.at("docs"));
  // A rule on opening another directory: the gate then judges every scope by where its root leads (and allows it).
  const config = world.config(
    [{ action: "fs.open", tier: "always-ask", path: world.at("private") }],
    { libraryConfig: { commandPermissions: ["node"] } },
  );
  const client = await serveWorld(world, ["--config", config, "--exec-timeout-ms", "60000"]);
  close = async () => {
    await client.close();
    temp.cleanup();
  };
  // Swaps docs between a link to scratch/ and one to the directory outside, until the file `stop` exists.
  const swapper =
    `requestExecPermission(["node"], (p) => {\n` +
    // Past the default 30 s a command gets, for a machine so loaded that the attacker needs its full ATTACK_MS.
    `  const r = p.exec("node", ["-e", ${JSON.stringify(SWAP_LOOP)}, "scratch", "../outside-${secretName}"], { timeoutMs: 55_000 });\n` +
    `  println("swaps", r.stdout.trim(), r.stderr);\n` +
    `});\n`;
  // Counts the refusals that name the place outside, and those of a scope judged elsewhere than it now leads.
  const attacker =
    `let done = 0, named = 0, moved = 0, other = 0;\n` +
    `const tally = (e: unknown) => { const text = String(e); if (text.includes(${JSON.stringify(secretName)})) named++; if (text.includes("after the policy's rules were applied")) moved++; else other++; };\n` +
    `const end = Date.now() + ${ATTACK_MS};\n` +
    `while (moved < ${MOVED_WANTED} && Date.now() < end) {\n` +
    `  try { requestFileSystem("docs", (fs) => { done++; fs.access("x.txt").write("evil\\n"); }); } catch (e) { tally(e); }\n` +
    `}\n` +
    `requestFileSystem(".", (fs) => fs.access("stop").write(""));\n` +
    `println("done", done, "named", named, "moved", moved, "other", other);\n`;
  const [swapped, attacked] = await Promise.all([executeText(client, swapper), executeText(client, attacker)]);
  expect(swapped).toMatch(/swaps \d+/);
  expect(attacked).toMatch(/done [1-9]/);
  // The executor's own refusal of a path that moved after it was judged did come.
  expect(attacked, swapped).toMatch(/moved [1-9]/);
  // The bad things: a refusal named the place outside, or a write landed there.
  expect(attacked, swapped).toContain("named 0");
  expect(readFileSync(path.join(outside, "x.txt"), "utf8")).toBe("outside, untouched\n");
}, 180_000);
