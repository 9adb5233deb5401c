// Isolation between what one tacit serve runs, through the real SDK client: a hostile agent
// controls every snippet and every tool argument, and may read and rewrite the frames its
// sandbox exchanges with the host (JSON.parse and JSON.stringify can be replaced from agent
// code, so capability tokens and classified handles are not secret from it). What holds is
// the host's: each session and each execute_typescript call has capabilities and classified
// values of its own, revoked or released when its snippet or session ends.

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectServe, createSession, fileOnce, runInSession, tempDir, type ToolResult } from "../helpers.js";
import { commandLineOf, descendantsOf, isRunning } from "../processes.js";

let dir: string;
let cleanup: () => void;
let client: Client;
let canary: string;
const logs: string[] = [];

beforeAll(async () => {
  ({ dir, cleanup } = tempDir("tacit-isolation-"));
  canary = `canary-${crypto.randomUUID()}`;
  writeFileSync(path.join(dir, ".env"), `TOKEN=${canary}\n`);
  writeFileSync(path.join(dir, "victim.txt"), `victim ${canary}\n`);
  client = await connectServe(
    ["--exec-timeout-ms", "20000", "--secure-output", "secure.log", "--record", "record", "--command-permissions", "sh"],
    dir,
  );
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void logs.push(JSON.stringify(notification.params)));
  await client.setLoggingLevel("debug");
});

afterAll(async () => {
  await client.close();
  cleanup();
});

const remove = (session: string) => client.callTool({ name: "delete_repl_session", arguments: { session_id: session } });

async function oneShot(code: string): Promise<ToolResult> {
  return (await client.callTool({ name: "execute_typescript", arguments: { code } })).structuredContent as unknown as ToolResult;
}

/** The processes of the server this test started that run the deleted session's command (their command lines name its marker). */
function commandProcesses(): number[] {
  const server = (client.transport as StdioClientTransport).pid;
  if (server === null) throw new Error("the server has no pid");
  return descendantsOf(server).filter((pid) => commandLineOf(pid).includes("echo x > marker.txt") && isRunning(pid));
}

/** Resolves once `file` in the test's directory exists (the work that makes it has started). */
async function appears(file: string): Promise<void> {
  while (!existsSync(path.join(dir, file))) await new Promise((resolve) => setTimeout(resolve, 20));
}

/**
 * Code that sends every request of the block it is put before with `token` as its scope
 * (rewriting the frame as JSON.stringify encodes it): what a script that took another
 * evaluation's token could send.
 */
const sendingScope = (token: string) =>
  [
    "const stringify = JSON.stringify;",
    "Reflect.set(JSON, \"stringify\", (value: any, ...rest: any[]) =>",
    `  value?.type === "request" && typeof value.action?.scope === "string" ? stringify({ ...value, action: { ...value.action, scope: ${JSON.stringify(token)} } }, ...rest) : stringify(value, ...rest));`,
  ].join("\n");

/**
 * Lines of a snippet that set `marker` to how the library marks a Classified value's place in
 * what it formats (learnt through Deno.customInspect, which runs agent code while a value is
 * formatted): the marker holds a word drawn in each sandbox, so a forged one must be made from it.
 */
const learnMarker = [
  'const own = classify("x");',
  'let marker = "";',
  // Formatted to nothing, so that nothing is printed (the secure output is compared whole).
  'print({ [Symbol.for("Deno.customInspect")]() { marker = (own as any)[Symbol.for("Deno.customInspect")](); return ""; } });',
];

describe("isolation between a tacit serve's sessions and calls", () => {
  it("a capability token that another session holds live is refused in this one and in an execute_typescript call", async () => {
    const holder = await createSession(client);
    const thief = await createSession(client);
    try {
      // The holder reads its own token from the frame of a request it sends in its scope (the
      // replies it reads are parsed with built-ins agent code cannot replace, but what it sends
      // goes through JSON.stringify, which it can), hands it over through a file, and keeps its
      // scope open until the test says so; then it uses the scope itself.
      const holding = runInSession(
        client,
        holder,
        [
          "const stringify = JSON.stringify;",
          'let token = "";',
          'Reflect.set(JSON, "stringify", (value: any, ...rest: any[]) => { if (!token && value?.type === "request" && typeof value.action?.scope === "string") token = value.action.scope; return stringify(value, ...rest); });',
          'await requestFileSystem(".", async (fs) => {',
          '  if (!fs.access("victim.txt").exists) throw new Error("no victim.txt");',
          '  fs.access("token.txt").write(token);',
          '  while (!fs.access("released").exists) await new Promise((resolve) => setTimeout(resolve, 20));',
          '  println(fs.access("victim.txt").read().length > 0 ? "holder read it" : "holder read nothing");',
          "});",
        ].join("\n"),
      );
      // Written, not only there: the host's write opens (creates) the file before it writes the
      // token, and a read in between found it empty.
      const token = await fileOnce(path.join(dir, "token.txt"), (text) => text !== "");
      expect(token).toMatch(/^[A-Za-z0-9_-]{20,}$/);
      const use = `${sendingScope(token)}\nprintln(requestFileSystem(".", (fs) => fs.access("victim.txt").read()));`;
      const inSession = await runInSession(client, thief, use);
      const inCall = await oneShot(use);
      for (const attempt of [inSession, inCall]) {
        expect(attempt.exitCode).toBe(1);
        expect(attempt.error).toContain("not a live capability of this host");
        expect(attempt.stdout).not.toContain(canary);
      }
      writeFileSync(path.join(dir, "released"), "");
      // The token was live all along: its own scope used it after the others were refused.
      expect(await holding).toMatchObject({ stdout: "holder read it\n", exitCode: 0 });
      // And the thief's session goes on.
      expect(await runInSession(client, thief, "1 + 1")).toMatchObject({ stdout: "2\n", exitCode: 0 });
    } finally {
      await remove(holder);
      await remove(thief);
    }
  });

  it("a scope whose async block is still waiting when its snippet ends is revoked then, also after a rebuild replays that snippet", async () => {
    const session = await createSession(client);
    try {
      const first = await runInSession(
        client,
        session,
        [
          "let release: () => void = () => undefined;",
          "const gate = new Promise<void>((resolve) => (release = resolve));",
          'let outcome = "not yet";',
          'requestFileSystem(".", async (fs) => {',
          "  await gate;",
          '  try { fs.access("late.txt").write("late"); outcome = "written"; } catch (error) { outcome = String(error); }',
          "});",
        ].join("\n"),
      );
      expect(first).toMatchObject({ exitCode: 0 });
      // A failed snippet: the sandbox is rebuilt, the first snippet replayed with its recorded
      // token (the block waits on the gate again, holding that token).
      expect((await runInSession(client, session, 'throw new Error("rebuild")')).exitCode).toBe(1);
      const later = await runInSession(client, session, "release();\nawait gate;\nawait new Promise((resolve) => setTimeout(resolve, 0));\noutcome");
      expect(later.exitCode).toBe(0);
      expect(later.stdout).toContain("outside its requestFileSystem scope");
      expect(existsSync(path.join(dir, "late.txt"))).toBe(false);
    } finally {
      await remove(session);
    }
  });

  it("a classified value's handle, read out of its sandbox, shows nothing in another session or call", async () => {
    const owner = await createSession(client);
    const other = await createSession(client);
    try {
      // Deno.customInspect runs agent code while the value is formatted, when it renders as its handle.
      const leaked = await runInSession(
        client,
        owner,
        [
          'const env = requestFileSystem(".", (fs) => fs.readClassified(".env"));',
          'let marked = "";',
          'println({ [Symbol.for("Deno.customInspect")]() { marked = (env as any)[Symbol.for("Deno.customInspect")](); return "x"; } });',
          "println(JSON.stringify(marked));",
        ].join("\n"),
      );
      const handle = /\\u0000[0-9a-f]{16}:([A-Za-z0-9_-]+)\\u0000/.exec(leaked.stdout)?.[1];
      expect(handle, leaked.stdout).toBeDefined();
      const sinkBefore = readFileSync(path.join(dir, "secure.log"), "utf8");
      const print = [...learnMarker, `println(marker.replace(/[A-Za-z0-9_-]+\\u0000$/, "${handle}\\u0000"));`].join("\n");
      for (const attempt of [await runInSession(client, other, print), await oneShot(print)]) {
        expect(attempt.exitCode).not.toBe(0);
        expect(attempt.error).toContain("not a Classified value from this evaluation");
        expect(JSON.stringify(attempt)).not.toContain(canary);
      }
      // Neither put the owner's value in the secure output either.
      expect(readFileSync(path.join(dir, "secure.log"), "utf8")).toBe(sinkBefore);
      expect(await runInSession(client, other, "1 + 1")).toMatchObject({ stdout: "2\n", exitCode: 0 });
    } finally {
      await remove(owner);
      await remove(other);
    }
  });

  it("a session snippet whose print the host refuses fails, even when its report arrives with the print", async () => {
    const session = await createSession(client);
    try {
      expect((await runInSession(client, session, "const kept = 21;")).exitCode).toBe(0);
      // The post and a report in one write, so the host reads both at once: the report used to
      // be taken as the snippet's success (exit 0, the print's refusal lost) while the refusal
      // ended the sandbox behind it.
      const forged = [
        ...learnMarker,
        "const stringify = JSON.stringify;",
        'Reflect.set(JSON, "stringify", (value: any, ...rest: any[]) => (value?.type === "post" ? `${stringify(value, ...rest)}\\n${stringify({ type: "done" })}` : stringify(value, ...rest)));',
        'println(marker.replace(/[A-Za-z0-9_-]+\\u0000$/, "forgedHandle123\\u0000"));',
      ].join("\n");
      const refused = await runInSession(client, session, forged);
      expect(refused.exitCode, JSON.stringify(refused)).not.toBe(0);
      // The refusal, or the stub's own report that follows the forged one, whichever the host reads first: a protocol violation either way.
      expect(refused.error).toMatch(/^protocol violation: .*(not a Classified value from this evaluation|after reporting its result)/);
      // The session goes on with its earlier bindings (its sandbox rebuilt).
      expect(await runInSession(client, session, "kept * 2")).toMatchObject({ stdout: "42\n", exitCode: 0 });
    } finally {
      await remove(session);
    }
  });

  it("deleting a session ends its command; cancelling another's call ends that call; a third session's snippet meanwhile finishes", async ({ signal }) => {
    const deleted = await createSession(client);
    const cancelled = await createSession(client);
    const bystander = await createSession(client);
    try {
      expect((await runInSession(client, deleted, 'const env = requestFileSystem(".", (fs) => fs.readClassified(".env"));')).exitCode).toBe(0);
      expect((await runInSession(client, bystander, "const kept = 21;")).exitCode).toBe(0);
      const waiting = runInSession(
        client,
        bystander,
        'requestFileSystem(".", async (fs) => { while (!fs.access("bystander-go").exists) await new Promise((resolve) => setTimeout(resolve, 20)); });\nkept * 2',
      );
      const running = runInSession(
        client,
        deleted,
        [
          "println(env, env.map((text) => text.toUpperCase()));",
          'requestExecPermission(["sh"], (proc) => proc.exec("sh", ["-c", "touch started; while [ ! -e go ]; do sleep 0.02; done; echo x > marker.txt"]));',
        ].join("\n"),
      );
      const abort = new AbortController();
      // A call that never ends: it waits (Atomics.wait, for ever) rather than spins a core until it is cancelled.
      const spinning = client
        .callTool({ name: "execute_in_session", arguments: { session_id: cancelled, code: "Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);" } }, undefined, { signal: abort.signal })
        .then(() => "answered", () => "cancelled");
      await appears("started");
      // The command's processes (the shell, and whatever runs it), seen while it waits for "go".
      const command = commandProcesses();
      expect(command, "the deleted session's command was not seen running").not.toEqual([]);
      expect(await remove(deleted)).toMatchObject({ content: [{ text: `deleted ${deleted}` }] });
      abort.abort("the test cancels it");
      expect(await spinning).toBe("cancelled");
      const ended = await running;
      expect(ended.exitCode).toBe(1);
      expect(ended.error).toContain("the session ended");
      // The command was ended with its session: released now, it writes nothing.
      writeFileSync(path.join(dir, "go"), "");
      writeFileSync(path.join(dir, "bystander-go"), "");
      expect(await waiting).toMatchObject({ stdout: "42\n", exitCode: 0 });
      expect(await runInSession(client, cancelled, "1 + 1")).toMatchObject({ stdout: "2\n", exitCode: 0 });
      // Once they are gone, whether the command wrote the marker is settled: had it lived on, it
      // would have found "go", written the marker and ended. A fixed 300 ms wait was shorter than a
      // loaded machine may take a live shell to poll and write.
      while (command.some(isRunning) && !signal.aborted) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(command.filter(isRunning), "the deleted session's command did not end").toEqual([]);
      expect(existsSync(path.join(dir, "marker.txt"))).toBe(false);
      // The deleted session's plaintext reached only the secure output.
      const listed = await client.callTool({ name: "list_sessions", arguments: {} });
      expect(JSON.stringify(listed)).not.toContain(deleted);
      const seen = [JSON.stringify(ended), JSON.stringify(listed), readFileSync(path.join(dir, "record", "tacit-record.jsonl"), "utf8"), logs.join("\n")];
      for (const text of seen) expect(text.toLowerCase()).not.toContain(canary.toLowerCase());
      // It lands there after the deletion, which does not wait for what the session left.
      expect(await fileOnce(path.join(dir, "secure.log"), (text) => text.includes(`TOKEN=${canary}`))).toContain(`TOKEN=${canary}`);
    } finally {
      await remove(cancelled);
      await remove(bystander);
    }
  });

  it("an execute_typescript call finds nothing an earlier one left in its sandbox, nor does a session made from the warm spare", async () => {
    // What a script can change of its sandbox's shared objects: the built-ins and their prototypes.
    const leave = [
      'Reflect.set(Math, "leftBehind", "left");',
      'Reflect.set(Array.prototype, "leftBehind", "left");',
      'Reflect.set(JSON, "parse", () => "patched");',
      'println(Reflect.get(Math, "leftBehind"), Reflect.get([], "leftBehind"), JSON.parse("1"));',
    ].join("\n");
    const look = 'println(typeof Reflect.get(Math, "leftBehind"), typeof Reflect.get([], "leftBehind"), JSON.parse("1"));';
    expect(await oneShot(leave)).toMatchObject({ stdout: "left left patched\n", exitCode: 0 });
    expect(await oneShot(look)).toMatchObject({ stdout: "undefined undefined 1\n", exitCode: 0 });
    expect(await oneShot(leave)).toMatchObject({ exitCode: 0 });
    const session = await createSession(client);
    try {
      expect(await runInSession(client, session, look)).toMatchObject({ stdout: "undefined undefined 1\n", exitCode: 0 });
    } finally {
      await remove(session);
    }
  });
});
