// The executor refuses an action whose path leads elsewhere, by the time it acts, than where the
// approval gate applied the policy's rules to it (judged-path-race.test.ts). That refusal said
// where the path now led, also where that was outside the bounds: a script that swapped docs
// between a link to scratch/ and one to a directory outside the allowed roots while it opened
// scopes on docs was told "requestFileSystem("docs"): … (it now leads to /tmp/…/outside-<name>)"
// a few times in every few thousand opens: where a link led, which no other answer names. Now a
// place outside is only said to be outside. (Without the fix this test saw 6 to 13 such refusals
// in each of three runs.)

import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { realTempDir } from "../files/fixtures.js";
import { executeText, makeWorld, serveWorld } from "./fixtures.js";

// Two calls run against each other; the attacker stops after ATTACK_MS, well inside the calls' limit (60 s).
const ATTACK_MS = 25_000;
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
    { libraryConfig: { commandPermissions: ["xargs", "ln"] } },
  );
  const client = await serveWorld(world, ["--config", config, "--exec-timeout-ms", "60000"]);
  close = async () => {
    await client.close();
    temp.cleanup();
  };
  // Swaps docs between a link to scratch/ and one to the directory outside, until the file `stop` exists.
  const swapper =
    `const pairs = "-sfn scratch docs\\n-sfn ../outside-${secretName} docs\\n".repeat(200);\n` +
    `requestFileSystem(".", (fs) => requestExecPermission(["xargs"], (p) => {\n` +
    `  let calls = 0;\n` +
    `  while (!fs.access("stop").exists && calls < 200) { p.exec("xargs", ["-n", "3", "ln"], { input: pairs }); calls++; }\n` +
    `  println("swaps", calls * 400);\n` +
    `}));\n`;
  // Counts the refusals that name the place outside, and those of a scope judged elsewhere than it now leads.
  const attacker =
    `let done = 0, named = 0, moved = 0, other = 0;\n` +
    `const tally = (e: unknown) => { const text = String(e); if (text.includes(${JSON.stringify(secretName)})) named++; if (text.includes("after the policy's rules were applied")) moved++; else other++; };\n` +
    `const end = Date.now() + ${ATTACK_MS};\n` +
    `while (Date.now() < end) {\n` +
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
