// An approved command's working directory is pinned (runner/exec/executor.ts, run): opened once the
// person has said yes, checked to be the directory they were asked about, and handed to the child
// by its descriptor. It was opened to read, so a working directory the user may write and enter but
// not list (mode -wx, a drop box) refused every approved command there with EACCES, though the
// command itself runs there as well as anywhere. It is opened as a path only now (O_PATH), which
// needs search permission alone; the pin holds as before (exec-cwd.test.ts swaps it for a link).
// Run where permission bits bind: as root, tacit runs without CAP_DAC_OVERRIDE and
// CAP_DAC_READ_SEARCH (see nodeBoundByPermissions), whom mode -wx stops as it stops any user.

import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { afterEach, expect, it } from "vitest";
import { nodeBoundByPermissions, realTempDir } from "../files/fixtures.js";
import { makeWorld, serveWorld } from "./fixtures.js";

let close: (() => Promise<void>) | null = null;
afterEach(async () => {
  await close?.();
  close = null;
});

it.skipIf(process.platform !== "linux")("an approved command runs in a working directory it may enter and write but not list", async () => {
  const temp = realTempDir("tacit-exec-cwd-wx-");
  const world = makeWorld(temp.dir);
  const dropBox = world.at("drop-box");
  mkdirSync(dropBox);
  chmodSync(dropBox, 0o300);
  const config = world.config([{ action: "exec", command: "touch", tier: "always-ask" }], { libraryConfig: { commandPermissions: ["touch"] } });
  const questions: string[] = [];
  const client = await serveWorld(world, ["--config", config], {
    node: nodeBoundByPermissions(temp.dir),
    onElicit: (request) => {
      questions.push((request.params as { message: string }).message);
      return { action: "accept", content: { approve: true } };
    },
  });
  close = async () => {
    await client.close();
    chmodSync(dropBox, 0o700);
    temp.cleanup();
  };
  const code = `requestExecPermission(["touch"], (p) => { const r = p.exec("touch", ["delivered"], { cwd: "drop-box" }); println("touch", r.exitCode, r.stderr); });\n`;
  const response = await client.callTool({ name: "execute_typescript", arguments: { code } });
  const text = (response.content as Array<{ text: string }>).map((c) => c.text).join("");
  expect(questions).toHaveLength(1);
  expect(questions[0]).toContain("touch delivered");
  // Refused with EACCES before: nothing ran, though the person said yes.
  expect(response.isError, text).toBeFalsy();
  expect(text).toContain("touch 0");
  chmodSync(dropBox, 0o700);
  expect(existsSync(`${dropBox}/delivered`)).toBe(true);
});
