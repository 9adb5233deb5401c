// Approvals remembered by `tacit serve` are kept under serve's working directory (the project it
// was started in): a yes given there must not cover the same action about another project that a
// call reaches, such as a session whose requestFileSystem root is elsewhere, or a command run with
// another project as its cwd. Tried through the real MCP client, the person answering through
// elicitation: a yes in project A, then the same action (the same file name, the same command
// line) in project B, which the person refuses; the bad thing would be B's file written, or B's
// command run, with no question.

import { existsSync, mkdirSync, realpathSync } from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { realTempDir } from "../files/fixtures.js";
import { makeWorld, serveAsking, storedApprovals, type World } from "../approval/fixtures.js";
import { createSession } from "../helpers.js";

let world: World;
let cleanup: () => void;
let client: Client;
let questions: string[];
/** Another project, beside serve's working directory (world.work), in the allowed roots. */
let other: string;

beforeAll(async () => {
  const temp = realTempDir("tacit-serve-approvals-");
  cleanup = temp.cleanup;
  world = makeWorld(temp.dir);
  other = path.join(temp.dir, "project-b");
  mkdirSync(other);
  const config = world.config(
    [
      { action: "fs.write", tier: "approve-once" },
      { action: "exec", command: "touch", tier: "approve-once" },
    ],
    { sessionEnabled: true, libraryConfig: { allowedRoots: [world.work, other], commandPermissions: ["touch"] } },
  );
  // The person says yes to what is about serve's own project, and no to anything naming the other.
  ({ client, questions } = await serveAsking(world, ["--config", config, "--exec-timeout-ms", "10000"], (message) => !message.includes("project-b")));
});

afterAll(async () => {
  await client?.close();
  cleanup?.();
});

async function inSession(session: string, code: string): Promise<{ isError: boolean; text: string }> {
  const response = await client.callTool({ name: "execute_in_session", arguments: { session_id: session, code } });
  return { isError: response.isError === true, text: (response.content as Array<{ text: string }>).map((c) => c.text).join("\n") };
}

const writeNotes = (root: string): string => `requestFileSystem(${JSON.stringify(root)}, (fs) => fs.access("notes.txt").write("v"));\nprintln("wrote");\n`;
const touchMarker = (cwd: string | null): string =>
  `requestExecPermission(["touch"], (p) => println("touch", p.exec("touch", ["marker"]${cwd === null ? "" : `, { cwd: ${JSON.stringify(cwd)} }`}).exitCode));\n`;

it("a yes to a write in serve's project does not cover the same write in a session whose root is another project", async () => {
  const here = await createSession(client);
  const elsewhere = await createSession(client);
  const asked = questions.length;

  const first = await inSession(here, writeNotes("."));
  expect(first.isError, first.text).toBe(false);
  expect(world.exists("notes.txt")).toBe(true);
  expect(questions.length).toBe(asked + 1);
  const serveDirectory = realpathSync.native(world.work);
  expect(storedApprovals(world)).toContainEqual(expect.objectContaining({ pattern: `fs.write ${world.at("notes.txt")}`, directory: serveDirectory }));

  // The same file name, written in a scope opened at the other project: asked about by its own path, and refused.
  const second = await inSession(elsewhere, writeNotes(other));
  expect(existsSync(path.join(other, "notes.txt")), `written in the other project with no question: ${second.text}`).toBe(false);
  expect(questions.length).toBe(asked + 2);
  expect(questions.at(-1)).toContain(`fs.write ${path.join(other, "notes.txt")}`);
  expect(second.isError).toBe(true);

  // The remembered yes still holds where it was given, in either session, unasked.
  const again = await inSession(elsewhere, writeNotes(world.work));
  expect(again.isError, again.text).toBe(false);
  expect(questions.length).toBe(asked + 2);
});

it("a yes to a command run in serve's project does not cover the same command line run in another project", async () => {
  const session = await createSession(client);
  const asked = questions.length;

  const first = await inSession(session, touchMarker(null));
  expect(first.isError, first.text).toBe(false);
  expect(world.exists("marker")).toBe(true);
  expect(questions.length).toBe(asked + 1);
  expect(storedApprovals(world)).toContainEqual(expect.objectContaining({ pattern: "exec touch marker", directory: realpathSync.native(world.work) }));

  // The same command line with the other project as its cwd: asked about with where it runs, and refused.
  const second = await inSession(session, touchMarker(other));
  expect(existsSync(path.join(other, "marker")), `run in the other project with no question: ${second.text}`).toBe(false);
  expect(questions.length).toBe(asked + 2);
  expect(questions.at(-1)).toContain(`(in ${realpathSync.native(other)})`);
  expect(second.isError).toBe(true);

  // Named by a relative cwd that leads there, the same.
  const third = await inSession(session, touchMarker("../project-b"));
  expect(existsSync(path.join(other, "marker")), `run in the other project with no question: ${third.text}`).toBe(false);
  expect(questions.length).toBe(asked + 3);
  expect(third.isError).toBe(true);
});
