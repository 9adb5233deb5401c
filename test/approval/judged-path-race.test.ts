// The approval gate judges a file action by where its path leads when the gate looks; the
// executor then resolves and opens the path again. A path that leads elsewhere in between (a
// link swapped by the agent's concurrent call) had the action land where no rule was applied:
// with `ln` and `xargs` permitted, one call swapped docs between a link to scratch/ and one to deploy/
// while another wrote docs/x.txt in a loop, and writes the gate judged as going to
// scratch/x.txt (no rule) landed in deploy/x.txt, under an always-ask rule on deploy/**, with
// no question; reads and greps of a file under a read rule came back the same way.
//
// The swap is done by one node process that renames a fresh link over docs in a loop (thousands
// of swaps a second; see judged-moved-outside-race.test.ts), not by xargs running ln (a process
// per swap). Each kind of action is attempted until the bad thing happens once (the fault), or
// until the executor has refused MOVED_WANTED of them whose path moved after the gate judged it
// (the race entered that often and caught: without the fix each of those is a chance for the bad
// thing), or until PHASE_MS on a machine too loaded for either. Attacking for a fixed count
// instead (6000 writes and reads, 3000 greps, ~12 s), the old design saw 12 leaked reads and 9
// greps without the fix, and a faster swapper with fewer rounds as few as 1: here an attempt
// without the fix goes on until it leaks. With judged() storing null (the fix undone), each kind
// did within its first 11 attempts in 3 of 3 runs; with the fix, 20 moved refusals of each kind
// came within about a second.

import { readFileSync, symlinkSync } from "node:fs";
import { afterEach, expect, it } from "vitest";
import { realTempDir } from "../files/fixtures.js";
import { executeText, makeWorld, serveWorld } from "./fixtures.js";

// Each test runs two calls against each other for a few seconds on a quiet machine, far longer under load: 180 s each.
// The attacker's phases together stop well inside the calls' limit (60 s, and the MCP client's request timeout).
const MOVED_WANTED = 20;
const PHASE_MS = 15_000;
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

/** Swaps `docs` between links to `guarded` and to `other` until the file `stop` exists. */
const swapper = (guarded: string, other: string) =>
  `requestExecPermission(["node"], (p) => {\n` +
  // Past the default 30 s a command gets, for a machine so loaded that the attacker needs its phases' full time.
  `  const r = p.exec("node", ["-e", ${JSON.stringify(SWAP_LOOP)}, ${JSON.stringify(guarded)}, ${JSON.stringify(other)}], { timeoutMs: 55_000 });\n` +
  `  println("swaps", r.stdout.trim(), r.stderr);\n` +
  `});\n`;

/**
 * Agent code: `phase(attempt)` runs attempt() (true: the bad thing happened) until it has, or the
 * executor refused MOVED_WANTED attempts whose path moved after it was judged, or PHASE_MS passed;
 * returns how many moved. Refusals and other failures are counted in `refused` and `failed`.
 */
const phases =
  `let refused = 0, failed = 0;\n` +
  `const phase = (attempt: () => boolean): { moved: number; bad: number } => {\n` +
  `  let moved = 0, bad = 0;\n` +
  `  const end = Date.now() + ${PHASE_MS};\n` +
  `  while (moved < ${MOVED_WANTED} && bad === 0 && Date.now() < end) {\n` +
  `    try { if (attempt()) bad++; }\n` +
  `    catch (e) { const text = String(e); if (text.includes("SecurityError")) refused++; else failed++; if (text.includes("changed after the policy's rules were applied")) moved++; }\n` +
  `  }\n` +
  `  return { moved, bad };\n` +
  `};\n`;

it("a write or read the gate judged by one place does not land in another: a link swapped meanwhile is refused", async () => {
  const temp = realTempDir("tacit-judged-race-");
  const world = makeWorld(temp.dir);
  world.file("scratch/x.txt", "scratch\n");
  world.file("deploy/x.txt", "deploy, the real one\n");
  world.file("scratch/secret.txt", "nothing here\n");
  world.file("deploy/secret.txt", "deploy-secret-canary\n");
  symlinkSync("scratch", world.at("docs"));
  const config = world.config(
    [
      { action: "fs.write", tier: "always-ask", path: `${world.at("deploy")}/**` },
      { action: "fs.read", tier: "always-ask", path: `${world.at("deploy")}/secret.txt` },
    ],
    { libraryConfig: { commandPermissions: ["node"] } },
  );
  // No elicitation: whatever the rules ask about is refused.
  const client = await serveWorld(world, ["--config", config, "--exec-timeout-ms", "60000"]);
  close = async () => {
    await client.close();
    temp.cleanup();
  };
  const call = (code: string): Promise<string> => executeText(client, code);
  // overwritten: deploy/x.txt found rewritten after a write that went through; leaked, grepped: deploy's secret read or found.
  const attacker =
    phases +
    `let wrote = 0;\n` +
    `const [writes, reads, greps] = requestFileSystem(".", (fs) => [\n` +
    `  phase(() => { fs.access("docs/x.txt").write("evil\\n"); wrote++; return fs.access("deploy/x.txt").read() !== "deploy, the real one\\n"; }),\n` +
    `  phase(() => fs.access("docs/secret.txt").read().includes("canary")),\n` +
    `  phase(() => fs.grep("docs/secret.txt", "canary").length > 0),\n` +
    `]);\n` +
    `requestFileSystem(".", (fs) => fs.access("stop").write(""));\n` +
    `println("wrote", wrote, "refused", refused, "failed", failed, "overwritten", writes.bad, "leaked", reads.bad, "grepped", greps.bad);\n` +
    `println("moved writes", writes.moved, "reads", reads.moved, "greps", greps.moved);\n`;
  const [swapped, attacked] = await Promise.all([call(swapper("deploy", "scratch")), call(attacker)]);
  expect(swapped).toMatch(/swaps \d+/);
  // The bad things: deploy/x.txt rewritten, or deploy's secret read or searched, with nobody asked.
  expect(readFileSync(world.at("deploy/x.txt"), "utf8"), `${attacked}\n${swapped}`).toBe("deploy, the real one\n");
  expect(attacked, swapped).toContain("leaked 0");
  expect(attacked, swapped).toContain("grepped 0");
  // Both kinds of judgment happened: some writes and reads went through (to scratch), some were refused (deploy).
  expect(attacked, swapped).toMatch(/wrote [1-9]/);
  expect(attacked, swapped).toMatch(/refused [1-9]/);
  // Each kind entered the race, and the executor refused what moved after it was judged.
  expect(attacked, swapped).toMatch(/moved writes [1-9]\d* reads [1-9]\d* greps [1-9]/);
}, 180_000);

it("a scope the gate judged by one directory does not open at another: a link swapped meanwhile is refused", async () => {
  const temp = realTempDir("tacit-judged-open-race-");
  const world = makeWorld(temp.dir);
  world.file("public/secret.txt", "nothing here\n");
  world.file("private/secret.txt", "private-canary\n");
  symlinkSync("public", world.at("docs"));
  // Opening private/ is asked about every time; what is in it is not (the rule on opening it stands for them).
  const config = world.config([{ action: "fs.open", tier: "always-ask", path: world.at("private") }], { libraryConfig: { commandPermissions: ["node"] } });
  const client = await serveWorld(world, ["--config", config, "--exec-timeout-ms", "60000"]);
  close = async () => {
    await client.close();
    temp.cleanup();
  };
  const call = (code: string): Promise<string> => executeText(client, code);
  const attacker =
    phases +
    `let opened = 0;\n` +
    `const opens = phase(() => requestFileSystem("docs", (fs) => { opened++; return fs.access("secret.txt").read().includes("canary"); }));\n` +
    `requestFileSystem(".", (fs) => fs.access("stop").write(""));\n` +
    `println("opened", opened, "refused", refused, "failed", failed, "leaked", opens.bad, "moved", opens.moved);\n`;
  const [swapped, attacked] = await Promise.all([call(swapper("private", "public")), call(attacker)]);
  expect(swapped).toMatch(/swaps \d+/);
  // The bad thing: a scope on private/ opened with nobody asked, and its secret read.
  expect(attacked, swapped).toContain("leaked 0");
  expect(attacked).toMatch(/opened [1-9]/);
  expect(attacked).toMatch(/refused [1-9]/);
  expect(attacked, swapped).toMatch(/moved [1-9]/);
}, 180_000);
