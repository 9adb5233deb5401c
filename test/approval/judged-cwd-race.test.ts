// A command a person said yes to in one directory runs there or not at all. The gate checks
// where the command's cwd leads after the answer (or a remembered yes), and the executor
// resolved it again and handed the child a path, which the kernel followed when the child
// changed into it: with ln permitted, one call swapped docs between links to
// scratch/ and deploy/ while another ran `touch marker` with cwd docs under a remembered yes
// for `exec touch marker (in …/scratch)`, and markers appeared in deploy/, where nobody said yes.
//
// The swap is done by one node process that renames a fresh link over docs in a loop (thousands
// of swaps a second), as in judged-moved-outside-race.test.ts, not by an `ln` per p.exec (tens of
// ms a swap: 22 swaps in 400 touches, and with the fix undone a run saw no marker in deploy/).
// node is remembered as approved too: the approve-once rule on touch asks about every
// interpreter (its arguments are code that may run touch; see policy.ts), and unanswered is no.
// The attacker stops at the first marker in deploy/ (the fault), once the executor has refused
// MOVED_WANTED commands whose cwd moved after the gate judged it (the race entered that often
// and was caught), or after ATTACK_MS on a machine too loaded for either.
// With judged() storing null (the executor no longer pins the cwd), a marker landed in deploy/ after
// 1 to 14 touches that ran, in 5 of 5 runs; with the fix, 30 moved refusals came in 35 to 99 touches.

import { existsSync, symlinkSync } from "node:fs";
import { afterEach, expect, it } from "vitest";
import { realTempDir } from "../files/fixtures.js";
import { approvals, executeText, makeWorld, serveWorld } from "./fixtures.js";

const MOVED_WANTED = 30;
const ATTACK_MS = 25_000;
/** Run by node in the work directory: swaps docs between links to deploy/ and scratch/ (rename(2), atomic) until `stop` exists; prints the count. */
const SWAP_LOOP =
  'const fs = require("fs"); let n = 0; ' +
  'while (!fs.existsSync("stop")) for (const to of ["deploy", "scratch"]) { fs.symlinkSync(to, "docs.next"); fs.renameSync("docs.next", "docs"); n++; } ' +
  "console.log(n);\n";

let close: (() => Promise<void>) | null = null;
afterEach(async () => {
  await close?.();
  close = null;
});

it("a remembered yes for a command in one directory does not run it in another a link leads to by the time it starts", async () => {
  const temp = realTempDir("tacit-judged-cwd-race-");
  const world = makeWorld(temp.dir);
  world.file("scratch/.keep", "");
  world.file("deploy/.keep", "");
  world.file("swap.js", SWAP_LOOP);
  symlinkSync("scratch", world.at("docs"));
  const config = world.config([{ action: "exec", command: "touch", tier: "approve-once" }], { libraryConfig: { commandPermissions: ["touch", "node"] } });
  const granted = await approvals(world, ["grant", `exec touch marker (in ${world.at("scratch")})`, "exec node swap.js"]);
  expect(granted.code, granted.all).toBe(0);
  // No elicitation: anything not already approved is refused.
  const client = await serveWorld(world, ["--config", config, "--exec-timeout-ms", "60000"]);
  close = async () => {
    await client.close();
    temp.cleanup();
  };
  const call = (code: string): Promise<string> => executeText(client, code);
  const swapper =
    `requestExecPermission(["node"], (p) => {\n` +
    // Past the default 30 s a command gets, for a machine so loaded that the attacker needs its full ATTACK_MS.
    `  const r = p.exec("node", ["swap.js"], { timeoutMs: 55_000 });\n` +
    `  println("swaps", r.stdout.trim(), r.stderr);\n` +
    `});\n`;
  // moved: refusals of a command whose cwd led elsewhere when it was to start than when judged; deployed: markers found in deploy/.
  const attacker =
    `let ran = 0, refused = 0, moved = 0, failed = 0, deployed = 0;\n` +
    `const end = Date.now() + ${ATTACK_MS};\n` +
    `requestFileSystem(".", (fs) => requestExecPermission(["touch"], (p) => {\n` +
    `  while (moved < ${MOVED_WANTED} && deployed === 0 && Date.now() < end) {\n` +
    `    try { p.exec("touch", ["marker"], { cwd: "docs" }); ran++; if (fs.access("deploy/marker").exists) deployed++; }\n` +
    `    catch (e) { const text = String(e); if (text.includes("SecurityError")) refused++; else failed++; if (text.includes("working directory changed after")) moved++; }\n` +
    `  }\n` +
    `  fs.access("stop").write("");\n` +
    `}));\n` +
    `println("ran", ran, "refused", refused, "moved", moved, "failed", failed, "deployed", deployed);\n`;
  const [swapped, attacked] = await Promise.all([call(swapper), call(attacker)]);
  expect(swapped).toMatch(/swaps \d+/);
  // The bad thing: touch ran in deploy/ under the yes given for scratch/.
  expect(existsSync(world.at("deploy/marker")), `${attacked}\n${swapped}`).toBe(false);
  // Both happened: runs under the yes (in scratch), refusals (deploy, which nobody approved).
  expect(attacked, swapped).toMatch(/ran [1-9]/);
  expect(attacked, swapped).toMatch(/refused [1-9]/);
  expect(existsSync(world.at("scratch/marker"))).toBe(true);
  // The race was entered, and the executor refused what moved after it was judged.
  expect(attacked, swapped).toMatch(/moved [1-9]/);
}, 180_000);
