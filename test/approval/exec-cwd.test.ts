// Where an asked-about command runs: its working directory (exec's cwd) decides what many
// commands act on (`rm -r build`, `git push`), and the question named it as the script spelled
// it. A tenth security review ran, under an always-ask rule on `rm`, `rm -r build` with cwd
// "docs": where docs was a link to deploy/, the person read "(in docs)" and the yes emptied
// deploy/build; where the agent's concurrent call replaced docs/ with that link while the person
// read the question (as the fs link-swap tests do for paths), the same. The fs actions already
// show where a path leads and refuse one that moved after the answer; a command's cwd now does too.

import { existsSync, symlinkSync } from "node:fs";
import { afterEach, expect, it } from "vitest";
import { realTempDir } from "../files/fixtures.js";
import { makeWorld, serveAsking, serveSwappingWhileAsked } from "./fixtures.js";

let close: (() => Promise<void>) | null = null;
afterEach(async () => {
  await close?.();
  close = null;
});

const RM_BUILD = `requestExecPermission(["rm"], (p) => println("rm", p.exec("rm", ["-r", "build"], { cwd: "docs" }).exitCode));\n`;

it("a cwd that is a link is asked about with where it leads", async () => {
  const temp = realTempDir("tacit-exec-cwd-link-");
  const world = makeWorld(temp.dir);
  world.file("deploy/build/app.js");
  symlinkSync("deploy", world.at("docs"));
  const config = world.config([{ action: "exec", command: "rm", tier: "always-ask" }], { libraryConfig: { commandPermissions: ["rm"] } });
  // The person approves removing build in docs/, and nowhere else.
  const { client, questions } = await serveAsking(world, ["--config", config], (message) => !message.includes("deploy"));
  close = async () => {
    await client.close();
    temp.cleanup();
  };
  const response = await client.callTool({ name: "execute_typescript", arguments: { code: RM_BUILD } });
  const text = (response.content as Array<{ text: string }>).map((c) => c.text).join("");
  expect(questions).toHaveLength(1);
  expect(questions[0]).toContain(`run: rm -r build (in ${world.at("docs")} -> ${world.at("deploy")})`);
  // The bad thing: a yes to "rm -r build (in docs)" removed deploy/build.
  expect(existsSync(world.at("deploy/build/app.js")), text).toBe(true);
  expect(response.isError).toBe(true);
});

it("a cwd swapped for a link while a person is asked is refused after the yes, and the command does not run", async () => {
  const temp = realTempDir("tacit-exec-cwd-swap-");
  const world = makeWorld(temp.dir);
  world.file("docs/build/notes.md");
  world.file("deploy/build/app.js");
  const config = world.config([{ action: "exec", command: "rm", tier: "always-ask" }], { libraryConfig: { commandPermissions: ["rm", "ln", "mv"] } });
  // While the person reads the question, the agent's other call swaps the directory.
  const { client, questions, swapOutput } = await serveSwappingWhileAsked(
    world,
    config,
    `requestExecPermission(["mv", "ln"], (p) => { print(p.exec("mv", ["docs", "old-docs"]).exitCode, p.exec("ln", ["-s", "deploy", "docs"]).exitCode); });\n`,
  );
  close = async () => {
    await client.close();
    temp.cleanup();
  };
  const response = await client.callTool({ name: "execute_typescript", arguments: { code: RM_BUILD } });
  const text = (response.content as Array<{ text: string }>).map((c) => c.text).join("");
  expect(swapOutput()).toContain("0 0");
  expect(questions).toHaveLength(1);
  expect(questions[0]).toContain(`run: rm -r build (in ${world.at("docs")})`);
  // The bad thing: the person's yes to removing docs/build removed deploy/build.
  expect(existsSync(world.at("deploy/build/app.js")), text).toBe(true);
  expect(response.isError).toBe(true);
  expect(text).toContain(`the command's working directory changed while a person was asked (it now leads elsewhere inside the allowed roots, to ${world.at("deploy")}, not to ${world.at("docs")})`);
});

it("a remembered yes to a command holds in the directory the person saw, not in another", async () => {
  // approve-once remembered `exec rm victim.txt`, the command's shape, whatever its cwd: the person
  // read "run: rm victim.txt (in …/scratch)", and the yes later removed important/victim.txt
  // with no question.
  const temp = realTempDir("tacit-exec-cwd-remembered-");
  const world = makeWorld(temp.dir);
  world.file("scratch/victim.txt");
  world.file("important/victim.txt");
  const config = world.config([{ action: "exec", command: "rm", tier: "approve-once" }], { libraryConfig: { commandPermissions: ["rm"] } });
  // The person approves removing scratch/victim.txt, and nothing in important/.
  const { client, questions } = await serveAsking(world, ["--config", config], (message) => !message.includes("important"));
  close = async () => {
    await client.close();
    temp.cleanup();
  };
  const rmIn = (dir: string) => `requestExecPermission(["rm"], (p) => println("rm", p.exec("rm", ["victim.txt"], { cwd: ${JSON.stringify(dir)} }).exitCode));\n`;
  const first = await client.callTool({ name: "execute_typescript", arguments: { code: rmIn("scratch") } });
  expect(first.isError).toBeFalsy();
  expect(world.exists("scratch/victim.txt")).toBe(false);
  expect(questions).toHaveLength(1);
  expect(questions[0]).toContain(`run: rm victim.txt (in ${world.at("scratch")})`);
  const second = await client.callTool({ name: "execute_typescript", arguments: { code: rmIn("important") } });
  const text = (second.content as Array<{ text: string }>).map((c) => c.text).join("");
  // The bad thing: the yes given for scratch/ removed important/victim.txt, unasked.
  expect(world.exists("important/victim.txt"), text).toBe(true);
  expect(questions).toHaveLength(2);
  expect(questions[1]).toContain(`run: rm victim.txt (in ${world.at("important")})`);
  expect(second.isError).toBe(true);
  // Asked again in scratch/, the remembered yes holds there.
  world.file("scratch/victim.txt");
  const third = await client.callTool({ name: "execute_typescript", arguments: { code: rmIn("scratch") } });
  expect(third.isError).toBeFalsy();
  expect(world.exists("scratch/victim.txt")).toBe(false);
  expect(questions).toHaveLength(2);
});
