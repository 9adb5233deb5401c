// The approval gate judges a file action by where its path leads when the gate looks; the
// executor then resolves and opens the path again. A path that leads elsewhere in between (a
// link swapped by the agent's concurrent call) had the action land where no rule was applied:
// with `ln` and `xargs` permitted, one call swapped docs between a link to scratch/ and one to deploy/
// while another wrote docs/x.txt in a loop, and writes the gate judged as going to
// scratch/x.txt (no rule) landed in deploy/x.txt, under an always-ask rule on deploy/**, with
// no question; reads and greps of a file under a read rule came back the same way.

import { readFileSync, symlinkSync } from "node:fs";
import { afterEach, expect, it } from "vitest";
import { realTempDir } from "../files/fixtures.js";
import { executeText, makeWorld, serveWorld } from "./fixtures.js";

// Each test runs two calls against each other for 10-25 s on a quiet machine, far longer under load: 180 s each.
// The attacker also stops after ATTACK_MS, well inside the calls' limit (60 s, and the MCP client's
// request timeout): on a loaded machine it makes fewer attempts instead of running out of time.
const ATTACK_MS = 35_000;
let close: (() => Promise<void>) | null = null;
afterEach(async () => {
  await close?.();
  close = null;
});

/** Swaps `docs` between links to `other` and to `guarded` until the file `stop` exists (xargs runs ln, a few hundred times a call). */
const swapper = (guarded: string, other: string) =>
  `const pairs = "-sfn ${guarded} docs\\n-sfn ${other} docs\\n".repeat(200);\n` +
  `requestFileSystem(".", (fs) => requestExecPermission(["xargs"], (p) => {\n` +
  `  let calls = 0;\n` +
  `  while (!fs.access("stop").exists && calls < 200) { p.exec("xargs", ["-n", "3", "ln"], { input: pairs }); calls++; }\n` +
  `  println("swaps", calls * 400);\n` +
  `}));\n`;

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
    { libraryConfig: { commandPermissions: ["xargs", "ln"] } },
  );
  // No elicitation: whatever the rules ask about is refused.
  const client = await serveWorld(world, ["--config", config, "--exec-timeout-ms", "60000"]);
  close = async () => {
    await client.close();
    temp.cleanup();
  };
  const call = (code: string): Promise<string> => executeText(client, code);
  const attacker =
    `let wrote = 0, refused = 0, failed = 0, leaked = 0, grepped = 0;\n` +
    `const tally = (e: unknown) => { if (String(e).includes("SecurityError")) refused++; else failed++; };\n` +
    `const end = Date.now() + ${ATTACK_MS};\n` +
    `requestFileSystem(".", (fs) => {\n` +
    `  for (let i = 0; i < 6000 && Date.now() < end; i++) {\n` +
    `    try { fs.access("docs/x.txt").write("evil\\n"); wrote++; } catch (e) { tally(e); }\n` +
    `    try { if (fs.access("docs/secret.txt").read().includes("canary")) leaked++; } catch (e) { tally(e); }\n` +
    `  }\n` +
    `  for (let i = 0; i < 3000 && Date.now() < end; i++) {\n` +
    `    try { if (fs.grep("docs/secret.txt", "canary").length > 0) grepped++; } catch (e) { tally(e); }\n` +
    `  }\n` +
    `  fs.access("stop").write("");\n` +
    `});\n` +
    `println("wrote", wrote, "refused", refused, "failed", failed, "leaked", leaked, "grepped", grepped);\n`;
  const [swapped, attacked] = await Promise.all([call(swapper("deploy", "scratch")), call(attacker)]);
  expect(swapped).toMatch(/swaps \d+/);
  // Both kinds of judgment happened: some writes and reads went through (to scratch), some were refused (deploy).
  expect(attacked).toMatch(/wrote [1-9]/);
  expect(attacked).toMatch(/refused [1-9]/);
  // The bad things: deploy/x.txt rewritten, or deploy's secret read or searched, with nobody asked.
  expect(readFileSync(world.at("deploy/x.txt"), "utf8"), `${attacked}\n${swapped}`).toBe("deploy, the real one\n");
  expect(attacked, swapped).toContain("leaked 0");
  expect(attacked, swapped).toContain("grepped 0");
}, 180_000);

it("a scope the gate judged by one directory does not open at another: a link swapped meanwhile is refused", async () => {
  const temp = realTempDir("tacit-judged-open-race-");
  const world = makeWorld(temp.dir);
  world.file("public/secret.txt", "nothing here\n");
  world.file("private/secret.txt", "private-canary\n");
  symlinkSync("public", world.at("docs"));
  // Opening private/ is asked about every time; what is in it is not (the rule on opening it stands for them).
  const config = world.config([{ action: "fs.open", tier: "always-ask", path: world.at("private") }], { libraryConfig: { commandPermissions: ["xargs", "ln"] } });
  const client = await serveWorld(world, ["--config", config, "--exec-timeout-ms", "60000"]);
  close = async () => {
    await client.close();
    temp.cleanup();
  };
  const call = (code: string): Promise<string> => executeText(client, code);
  const attacker =
    `let opened = 0, refused = 0, failed = 0, leaked = 0;\n` +
    `const end = Date.now() + ${ATTACK_MS};\n` +
    `for (let i = 0; i < 6000 && Date.now() < end; i++) {\n` +
    `  try { requestFileSystem("docs", (fs) => { opened++; if (fs.access("secret.txt").read().includes("canary")) leaked++; }); }\n` +
    `  catch (e) { if (String(e).includes("SecurityError")) refused++; else failed++; }\n` +
    `}\n` +
    `requestFileSystem(".", (fs) => fs.access("stop").write(""));\n` +
    `println("opened", opened, "refused", refused, "failed", failed, "leaked", leaked);\n`;
  const [swapped, attacked] = await Promise.all([call(swapper("private", "public")), call(attacker)]);
  expect(swapped).toMatch(/swaps \d+/);
  expect(attacked).toMatch(/opened [1-9]/);
  expect(attacked).toMatch(/refused [1-9]/);
  // The bad thing: a scope on private/ opened with nobody asked, and its secret read.
  expect(attacked, swapped).toContain("leaked 0");
}, 180_000);
