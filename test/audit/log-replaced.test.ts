// A file renamed over the audit log while tacit wrote it went unseen: the writer checks the size
// of the file it holds open, and went on writing (and signing) the old, now unlinked, file, while
// the file at the log's path never got the lines, and tacit exited 0. The writer now compares the
// file at the path with the one it holds at each signed head, at close, and right before each
// action with an effect (which is then not carried out): tacit says so on stderr and exits 2, as
// for a log that was written to or cut under it.

import { spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { childEnv, tacitBin, tempDirWithHome } from "../helpers.js";
import { EXIT_2_SAID, serveWithAuditLog } from "./fixtures.js";

// The tests run concurrently (each with its own tacit, log, directory and home; the tacit run
// test waits some 5 s for the timed signed head), so what they made is removed after the file:
// a test's afterEach would remove the directories of tests still running.
const cleanups: Array<() => void> = [];
afterAll(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});


/** Puts a copy of the log (as it is now) in its place by rename, as a rotation or another process might: the writer's file is unlinked. */
function replaceByRename(log: string): void {
  const copy = `${log}.new`;
  copyFileSync(log, copy);
  renameSync(copy, log);
}

/** The one line of stderr that says the log was replaced, checked to say what to do and that tacit exits 2. */
function saidReplaced(stderr: string, log: string): void {
  const said = stderr.split("\n").filter((line) => line.includes("was replaced"));
  expect(said, stderr).toHaveLength(1);
  expect(said[0]).toContain(`tacit: the audit log ${log} was replaced while this tacit was writing it: another file is there now`);
  expect(said[0]).toContain("tacit audit verify");
  expect(said[0]).toMatch(new RegExp(`${EXIT_2_SAID}$`));
}

const serveWithLog = () => serveWithAuditLog("tacit-audit-replaced-", cleanups);

const writeFile = (id: number, name: string) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "execute_typescript", arguments: { code: `requestFileSystem(".", (fs) => fs.access(${JSON.stringify(name)}).write("1"));` } },
});

describe.concurrent("an audit log replaced by rename while tacit writes it", () => {
  it("tacit serve, replaced after its last call: said at close, exit 2", async () => {
    const { client, log, stderr, exited } = await serveWithLog();
    client.send(writeFile(2, "first.txt"));
    expect((await client.answer(2)).result?.structuredContent?.exitCode, stderr()).toBe(0);
    replaceByRename(log);
    client.child.stdin.end();
    // The bad thing: exit 0, the log's path naming a file this tacit never wrote its end to.
    expect(await exited, stderr()).toBe(2);
    saidReplaced(stderr(), log);
  }, 60_000);

  it("tacit serve, moved away after its last call (no file at its path): said at close, exit 2", async () => {
    const { client, log, stderr, exited } = await serveWithLog();
    client.send(writeFile(2, "first.txt"));
    expect((await client.answer(2)).result?.structuredContent?.exitCode, stderr()).toBe(0);
    renameSync(log, `${log}.moved`);
    client.child.stdin.end();
    expect(await exited, stderr()).toBe(2);
    const said = stderr().split("\n").filter((line) => line.includes("was replaced"));
    expect(said, stderr()).toHaveLength(1);
    expect(said[0]).toContain(`tacit: the audit log ${log} was replaced while this tacit was writing it: there is no file there any more`);
    expect(said[0]).toMatch(new RegExp(`${EXIT_2_SAID}$`));
  }, 60_000);

  it("tacit serve, replaced before a call: its write is not carried out, the call is told, exit 2", async () => {
    const { client, work, log, stderr, exited } = await serveWithLog();
    client.send(writeFile(2, "first.txt"));
    expect((await client.answer(2)).result?.structuredContent?.exitCode, stderr()).toBe(0);
    replaceByRename(log);
    const atPath = readFileSync(log, "utf8");
    client.send(writeFile(3, "second.txt"));
    const second = (await client.answer(3)).result?.structuredContent;
    expect(second?.exitCode, stderr()).toBe(2);
    // Its lines went to the file tacit held open, not to the one at the path: that one is as it was put there.
    expect(readFileSync(log, "utf8")).toBe(atPath);
    // The bad thing: the write carried out, its decision only in a file no longer at the log's path
    // (checked at the call's signed head, after it).
    expect(existsSync(path.join(work, "second.txt"))).toBe(false);
    // A call after it runs nothing.
    client.send(writeFile(4, "third.txt"));
    expect((await client.answer(4)).result?.structuredContent?.exitCode, stderr()).toBe(2);
    expect(existsSync(path.join(work, "third.txt"))).toBe(false);
    client.child.stdin.end();
    expect(await exited, stderr()).toBe(2);
    expect(stderr()).toContain(`the audit log ${log} was replaced while this tacit was writing it: another file is there now`);
  }, 60_000);

  it("tacit serve, deleted before a call: its write is not carried out (its decision would be lost with the unlinked file), exit 2", async () => {
    const { client, work, log, stderr, exited } = await serveWithLog();
    client.send(writeFile(2, "first.txt"));
    expect((await client.answer(2)).result?.structuredContent?.exitCode, stderr()).toBe(0);
    rmSync(log);
    client.send(writeFile(3, "second.txt"));
    expect((await client.answer(3)).result?.structuredContent?.exitCode, stderr()).toBe(2);
    expect(existsSync(path.join(work, "second.txt"))).toBe(false);
    client.child.stdin.end();
    expect(await exited, stderr()).toBe(2);
    expect(stderr()).toContain(`the audit log ${log} was replaced while this tacit was writing it: there is no file there any more`);
  }, 60_000);

  it("tacit run, replaced while its script waits for its input: said at its end, exit 2", async () => {
    const { dir, env, cleanup } = tempDirWithHome("tacit-audit-replaced-run-");
    cleanups.push(cleanup);
    const log = path.join(dir, "audit.jsonl");
    const work = path.join(dir, "work");
    mkdirSync(work);
    const script = path.join(dir, "script.ts");
    writeFileSync(script, 'println("read", readInput().length);\n');
    const child = spawn(process.execPath, [tacitBin, "run", "--no-check", "--audit-log", log, script], { cwd: work, env: childEnv(env), stdio: ["pipe", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
    // The script is under way once its readInput() request is in the file: the writer batches lines, so it is there by the
    // timed signed head (5 s) at the latest, which also shows that heads before the replacement find nothing amiss.
    // Whether the script's print then comes before or after a signed head finds the replacement, tacit ends the same way.
    while (!(existsSync(log) && readFileSync(log, "utf8").includes('"ReadInput"')) && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 20));
    replaceByRename(log);
    child.stdin.end("data");
    expect(await closed, stderr).toBe(2);
    saidReplaced(stderr, log);
  }, 60_000);
});
