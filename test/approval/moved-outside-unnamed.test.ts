// A refusal never names a place outside the scope. A path a person was asked about that leads
// elsewhere once they answered is refused (link-swap.test.ts); the refusal said where it now led,
// and where that was outside the scope, it told the script a place it can see nowhere else: here
// the agent's other call moves a link the operator made (ops -> a directory outside the allowed
// root, whose name the script never learns) into the place of docs/ while the person reads the
// question, and the refusal said "it now leads to /tmp/…/outside-<name>/prod.conf". Now it says
// that the path leads outside the scope, not where; a place inside it is still named.

import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { realTempDir } from "../files/fixtures.js";
import { makeWorld, serveAsking, serveSwappingWhileAsked, type World } from "./fixtures.js";

let close: (() => Promise<void>) | null = null;
afterEach(async () => {
  await close?.();
  close = null;
});

/** A world whose work/ holds docs/ and ops, a link to a directory outside work/ named by `secretName`. */
function worldWithOutsideLink(prefix: string, secretName: string): { world: World; outside: string; cleanup: () => void } {
  const temp = realTempDir(prefix);
  const world = makeWorld(temp.dir);
  const outside = path.join(temp.dir, `outside-${secretName}`);
  mkdirSync(outside);
  mkdirSync(world.at("docs"));
  symlinkSync(outside, world.at("ops"));
  return { world, outside, cleanup: temp.cleanup };
}

const text = (response: Record<string, unknown>): string => (response.content as Array<{ text: string }>).map((c) => c.text).join("");

/**
 * Serves `world` under an always-ask rule on writes, whose other call runs `swap` (with the
 * commands it names) while the person is asked about a write to docs/prod.conf; gives the
 * write's answer, its text, the questions asked and what the swap printed.
 */
async function writeWhileSwapped(
  world: World,
  cleanup: () => void,
  commands: string[],
  swap: string,
): Promise<{ response: Record<string, unknown>; output: string; questions: unknown[]; swapOutput: () => string }> {
  const config = world.config([{ action: "fs.write", tier: "always-ask" }], { libraryConfig: { commandPermissions: commands } });
  const { client, questions, swapOutput } = await serveSwappingWhileAsked(
    world,
    config,
    `requestExecPermission(${JSON.stringify(commands)}, (p) => { print(${swap}); });\n`,
  );
  close = async () => {
    await client.close();
    cleanup();
  };
  const response = await client.callTool({
    name: "execute_typescript",
    arguments: { code: `requestFileSystem(".", (fs) => fs.access("docs/prod.conf").write("attacker\\n"));\n` },
  });
  return { response, output: text(response), questions, swapOutput };
}

it("a path moved to lead outside the scope while a person was asked is refused without naming where it leads", async () => {
  const secretName = `SECRETNAME${crypto.randomUUID().slice(0, 8)}`;
  const { world, outside, cleanup } = worldWithOutsideLink("tacit-moved-outside-", secretName);
  const { response, output, questions, swapOutput } = await writeWhileSwapped(world, cleanup, ["rm", "mv"], 'p.exec("rm", ["-r", "docs"]).exitCode, p.exec("mv", ["ops", "docs"]).exitCode');
  expect(swapOutput()).toContain("0 0");
  expect(questions).toHaveLength(1);
  expect(response.isError).toBe(true);
  expect(output).toContain("the path changed while a person was asked");
  expect(output).toContain("it now leads outside this file system scope");
  // The bad things: the refusal names the place outside, or the write went there.
  expect(output).not.toContain(secretName);
  expect(existsSync(path.join(outside, "prod.conf"))).toBe(false);
});

it("a path moved to lead elsewhere inside the scope while a person was asked is refused naming that place, as inside", async () => {
  const { world, cleanup } = worldWithOutsideLink("tacit-moved-inside-", "unused");
  world.file("deploy/prod.conf", "original\n");
  const { output, swapOutput } = await writeWhileSwapped(world, cleanup, ["rm", "ln"], 'p.exec("rm", ["-r", "docs"]).exitCode, p.exec("ln", ["-s", "deploy", "docs"]).exitCode');
  expect(swapOutput()).toContain("0 0");
  expect(output).toContain(`it now leads elsewhere inside this file system scope, to ${world.at("deploy/prod.conf")}`);
  expect(readFileSync(world.at("deploy/prod.conf"), "utf8")).toBe("original\n");
});

it("a streamed read whose path is moved to lead outside the scope between pieces is refused without naming where it leads", async () => {
  const secretName = `SECRETNAME${crypto.randomUUID().slice(0, 8)}`;
  const { world, outside, cleanup } = worldWithOutsideLink("tacit-stream-outside-", secretName);
  const canary = `canary-${crypto.randomUUID()}`;
  const filler = "harmless line\n".repeat(Math.ceil((1.5 * 1024 * 1024) / 14));
  world.file("docs/notes.txt", filler);
  writeFileSync(path.join(outside, "notes.txt"), `${filler}SECRET ${canary}\n`);
  const config = world.config([{ action: "fs.read", tier: "always-ask" }], { libraryConfig: { commandPermissions: ["rm", "mv"] } });
  const { client } = await serveAsking(world, ["--config", config, "--exec-timeout-ms", "20000"], () => true);
  close = async () => {
    await client.close();
    cleanup();
  };
  const response = await client.callTool({
    name: "execute_typescript",
    arguments: {
      code: `requestFileSystem(".", (fs) => requestExecPermission(["rm", "mv"], (p) => {
  let swapped = false;
  try {
    fs.access("docs/notes.txt").forEachLine((line) => {
      if (!swapped) {
        swapped = true;
        println("swap", p.exec("rm", ["-r", "docs"]).exitCode, p.exec("mv", ["ops", "docs"]).exitCode);
      }
      if (line.startsWith("SECRET")) println(line);
    });
  } catch (error) {
    println("refused:", (error as Error).message);
  }
}));
`,
    },
  });
  const output = text(response);
  expect(output, output).toContain("swap 0 0");
  expect(output).toContain("the path changed since a person approved reading it");
  expect(output).toContain("it now leads outside this file system scope");
  expect(output).not.toContain(canary);
  expect(output).not.toContain(secretName);
});

it("a command's working directory moved to lead outside the allowed roots while a person was asked is refused without naming where", async () => {
  const secretName = `SECRETNAME${crypto.randomUUID().slice(0, 8)}`;
  const { world, outside, cleanup } = worldWithOutsideLink("tacit-cwd-outside-", secretName);
  world.file("docs/build/notes.md");
  mkdirSync(path.join(outside, "build"));
  const config = world.config([{ action: "exec", command: "rm", tier: "always-ask" }], { libraryConfig: { commandPermissions: ["rm", "mv"] } });
  const { client, swapOutput } = await serveSwappingWhileAsked(
    world,
    config,
    `requestExecPermission(["mv"], (p) => { print(p.exec("mv", ["docs", "old-docs"]).exitCode, p.exec("mv", ["ops", "docs"]).exitCode); });\n`,
  );
  close = async () => {
    await client.close();
    cleanup();
  };
  const response = await client.callTool({
    name: "execute_typescript",
    arguments: { code: `requestExecPermission(["rm"], (p) => println("rm", p.exec("rm", ["-r", "build"], { cwd: "docs" }).exitCode));\n` },
  });
  const output = text(response);
  expect(swapOutput()).toContain("0 0");
  expect(response.isError).toBe(true);
  expect(output).toContain("the command's working directory changed while a person was asked");
  expect(output).toContain("it now leads outside the allowed roots");
  expect(output).not.toContain(secretName);
  expect(existsSync(path.join(outside, "build")), output).toBe(true);
});
