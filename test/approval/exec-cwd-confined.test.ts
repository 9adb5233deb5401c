// An approved command's working directory is pinned (runner/exec/executor.ts, run: opened as a path
// only, handed to the child by its descriptor) and, with --confine-commands, entered again inside the
// confined view by its path and checked to be the same directory (confinement.ts, SETUP). The two
// together: the command runs confined, where the person said yes, and a covered file stays covered.

import { existsSync } from "node:fs";
import { afterEach, expect, it } from "vitest";
import { makeCanary, realTempDir } from "../files/fixtures.js";
import { makeWorld, serveWorld } from "./fixtures.js";

let close: (() => Promise<void>) | null = null;
afterEach(async () => {
  await close?.();
  close = null;
});

it.skipIf(process.platform !== "linux")("an approved, confined command runs in the directory approved, its classified files covered", async () => {
  const temp = realTempDir("tacit-exec-cwd-confined-", "/var/tmp");
  const world = makeWorld(temp.dir);
  const canary = makeCanary();
  world.file("docs/.env", `${canary}\n`);
  const config = world.config([{ action: "exec", command: "sh", tier: "always-ask" }], { libraryConfig: { commandPermissions: ["sh"], confineCommands: true } });
  const questions: string[] = [];
  const client = await serveWorld(world, ["--config", config], {
    onElicit: (request) => {
      questions.push((request.params as { message: string }).message);
      return { action: "accept", content: { approve: true } };
    },
  });
  close = async () => {
    await client.close();
    temp.cleanup();
  };
  const code = `requestExecPermission(["sh"], (p) => { const r = p.exec("sh", ["-c", "pwd; cat .env; touch made"], { cwd: "docs" }); println("sh", r.exitCode, r.stdout, r.stderr); });\n`;
  const response = await client.callTool({ name: "execute_typescript", arguments: { code } });
  const text = (response.content as Array<{ text: string }>).map((c) => c.text).join("");
  expect(questions).toHaveLength(1);
  expect(response.isError, text).toBeFalsy();
  expect(text).toContain(`sh 0 ${world.at("docs")}`);
  expect(text).not.toContain(canary);
  expect(existsSync(world.at("docs/made"))).toBe(true);
});
