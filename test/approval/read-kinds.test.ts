// What a read of a directory does is part of what a person approves: listing its names is not
// reading every file below it. Both were `fs.read <dir>`, asked about (a listing or search
// reads below its directory, so a rule on anything there applies) and remembered under the
// same pattern. An eleventh security review, under an approve-once rule on private/**, had the
// person approve listing the project's root (children()), remembered as `fs.read <root>`; then
// grepRecursive(".") read every file under private/ with no question.

import { afterEach, expect, it } from "vitest";
import { realTempDir } from "../files/fixtures.js";
import { makeWorld, serveAsking } from "./fixtures.js";

let close: (() => Promise<void>) | null = null;
afterEach(async () => {
  await close?.();
  close = null;
});

it("a remembered yes to listing a directory does not cover searching the files below it", async () => {
  const temp = realTempDir("tacit-read-kinds-");
  const world = makeWorld(temp.dir);
  world.file("private/secret.txt", "PRIVATE_CANARY\n");
  world.file("README.md", "hello\n");
  const config = world.config([{ action: "fs.read", path: "private/**", tier: "approve-once" }]);
  // The person lets the agent see what the project holds, and nothing more.
  const { client, questions } = await serveAsking(world, ["--config", config], (_message, asked) => asked === 1);
  close = async () => {
    await client.close();
    temp.cleanup();
  };
  const run = async (code: string) => {
    const response = await client.callTool({ name: "execute_typescript", arguments: { code } });
    return { isError: response.isError === true, text: (response.content as Array<{ text: string }>).map((c) => c.text).join("") };
  };
  const listing = await run(`requestFileSystem(".", (fs) => println(fs.access(".").children().map((e) => e.name).sort().join(",")));\n`);
  expect(listing.isError, listing.text).toBe(false);
  expect(listing.text).toContain("README.md,private");
  expect(questions).toHaveLength(1);
  const search = await run(`requestFileSystem(".", (fs) => println(fs.grepRecursive(".", "CANARY").map((m) => m.line).join(",")));\n`);
  // The bad thing: the yes to a listing read private/secret.txt's content, unasked.
  expect(search.text).not.toContain("PRIVATE_CANARY");
  expect(questions).toHaveLength(2);
  expect(questions[1]).toContain(`pattern: fs.search ${world.work}\n`);
  expect(search.isError).toBe(true);
  // The listing again runs on its remembered yes.
  const again = await run(`requestFileSystem(".", (fs) => println(fs.access(".").children().length));\n`);
  expect(again.isError, again.text).toBe(false);
  expect(questions).toHaveLength(2);
});
