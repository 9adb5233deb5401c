// A command a person said yes to in one directory runs there or not at all. The gate checks
// where the command's cwd leads after the answer (or a remembered yes), and the executor
// resolved it again and handed the child a path, which the kernel followed when the child
// changed into it: with ln permitted, one call swapped docs between links to
// scratch/ and deploy/ while another ran `touch marker` with cwd docs under a remembered yes
// for `exec touch marker (in …/scratch)`, and markers appeared in deploy/, where nobody said yes.

import { existsSync, symlinkSync } from "node:fs";
import { afterEach, expect, it } from "vitest";
import { realTempDir } from "../files/fixtures.js";
import { approvals, executeText, makeWorld, serveWorld } from "./fixtures.js";

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
  symlinkSync("scratch", world.at("docs"));
  const config = world.config([{ action: "exec", command: "touch", tier: "approve-once" }], { libraryConfig: { commandPermissions: ["touch", "ln"] } });
  const granted = await approvals(world, ["grant", `exec touch marker (in ${world.at("scratch")})`]);
  expect(granted.code, granted.all).toBe(0);
  // No elicitation: anything not already approved is refused.
  const client = await serveWorld(world, ["--config", config, "--exec-timeout-ms", "60000"]);
  close = async () => {
    await client.close();
    temp.cleanup();
  };
  const call = (code: string): Promise<string> => executeText(client, code);
  const swapper =
    `requestFileSystem(".", (fs) => requestExecPermission(["ln"], (p) => {\n` +
    `  let swaps = 0;\n` +
    `  while (!fs.access("stop").exists && swaps < 5000) { p.exec("ln", ["-sfn", "deploy", "docs"]); p.exec("ln", ["-sfn", "scratch", "docs"]); swaps++; }\n` +
    `  println("swaps", swaps);\n` +
    `}));\n`;
  const attacker =
    `let ran = 0, refused = 0, failed = 0;\n` +
    `requestExecPermission(["touch"], (p) => {\n` +
    `  for (let i = 0; i < 400; i++) {\n` +
    `    try { p.exec("touch", ["marker"], { cwd: "docs" }); ran++; } catch (e) { if (String(e).includes("SecurityError")) refused++; else failed++; }\n` +
    `  }\n` +
    `});\n` +
    `requestFileSystem(".", (fs) => fs.access("stop").write(""));\n` +
    `println("ran", ran, "refused", refused, "failed", failed);\n`;
  const [swapped, attacked] = await Promise.all([call(swapper), call(attacker)]);
  expect(swapped).toMatch(/swaps \d+/);
  // Both happened: runs under the yes (in scratch), refusals (deploy, which nobody approved).
  expect(attacked).toMatch(/ran [1-9]/);
  expect(attacked).toMatch(/refused [1-9]/);
  expect(existsSync(world.at("scratch/marker"))).toBe(true);
  // The bad thing: touch ran in deploy/ under the yes given for scratch/.
  expect(existsSync(world.at("deploy/marker")), `${attacked}\n${swapped}`).toBe(false);
});
