// REPL sessions through the real MCP SDK client: bindings across snippets, failures that
// leave the session as it was, effects performed once, limits and deletion.

import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { APART_FROM_CHARS } from "../../runner/split-check.js";
import { connectServeProcess, createSession, runInSession, slowToCheck } from "../helpers.js";
import { parentOf } from "../processes.js";
import { expectProgressThenCancel } from "./progress.js";

let dir: string;
let client: Client;
let serverPid: number;

/**
 * The Deno processes the server has started and not yet ended (its spare, sessions' sandboxes);
 * with `anyProgram`, every child, also one that has not yet become Deno (a sandbox starts as
 * setpriv, which then runs deno; a warm spare stopped while a snippet ran stays so until it ends).
 */
function denoChildren(anyProgram = false, server: number = serverPid): number[] {
  const children: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const [, comm, rest] = /^\d+ \((.*)\) (.*)$/s.exec(stat)!;
      const parent = Number(rest!.split(" ")[1]);
      // Where the sandbox has a PID namespace, Deno is the child of the unshare the server spawns
      // (runner/namespaced-program.ts): the sandbox is counted by the process spawned.
      const grandparent = parent === server ? server : parentOf(parent);
      if (anyProgram ? parent === server : comm!.startsWith("deno") && grandparent === server) children.push(parent === server ? Number(entry) : parent);
    } catch {
      // Gone while we looked.
    }
  }
  return children;
}

/** Waits (up to 5 s) for the server's Deno processes to number `count`; returns the last count seen. */
async function settleAt(count: number): Promise<number> {
  const until = Date.now() + 5000;
  for (;;) {
    const now = denoChildren().length;
    if (now === count || Date.now() > until) return now;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The Deno processes the server (this file's, or the one whose pid is `server`) starts while `work` runs (sampled every 20 ms). */
async function sandboxesStartedDuring(work: () => Promise<void>, server: number = serverPid): Promise<number> {
  // Every child that exists before, whatever it runs yet: a spare started earlier and stopped
  // before it ran deno (warm-spare.ts) became Deno only once the snippet before `work` ended, and
  // was counted as a sandbox `work` started (the rebuild test saw 2 where one was started).
  const before = new Set(denoChildren(true, server));
  const started = new Set<number>();
  const poll = setInterval(() => {
    for (const pid of denoChildren(false, server)) if (!before.has(pid)) started.add(pid);
  }, 20);
  try {
    await work();
  } finally {
    clearInterval(poll);
  }
  return started.size;
}

/** Sends `code` to the session and cancels the call after `afterMs`; resolves once the cancellation is seen. */
async function cancelledAfter(session: string, code: string, afterMs: number, on: Client = client): Promise<void> {
  const abort = new AbortController();
  const call = on
    .callTool({ name: "execute_in_session", arguments: { session_id: session, code } }, undefined, { signal: abort.signal })
    .catch(() => "cancelled");
  await new Promise((resolve) => setTimeout(resolve, afterMs));
  abort.abort("the test cancels it");
  expect(await call).toBe("cancelled");
}

async function connect(args: string[]): Promise<Client> {
  return (await serverOfItsOwn(args)).client;
}

/** A `tacit serve <args>` of the test's own, and its pid (whose Deno processes denoChildren reads). */
function serverOfItsOwn(args: string[]): Promise<{ client: Client; pid: number }> {
  return connectServeProcess(args, dir);
}

const create = (on: Client = client) => createSession(on);
const run = (session: string, code: string, on: Client = client) => runInSession(on, session, code);

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "tacit-sessions-"));
  writeFileSync(path.join(dir, "config.json"), JSON.stringify({ maxSessions: 3 }));
  ({ client, pid: serverPid } = await connectServeProcess(["--exec-timeout-ms", "3000", "--memory-limit-mb", "128", "--config", "config.json"], dir));
});

afterAll(async () => {
  await client.close();
  rmSync(dir, { recursive: true, force: true });
});

async function remove(session: string): Promise<void> {
  await client.callTool({ name: "delete_repl_session", arguments: { session_id: session } });
}

/** Runs `body` with a new session, deleted afterwards (the server allows 3 at once). */
async function withSession(body: (session: string) => Promise<void>): Promise<void> {
  const session = await create();
  try {
    await body(session);
  } finally {
    await remove(session);
  }
}

describe("REPL sessions", () => {
  it("keep bindings across snippets and echo a final expression", () =>
    withSession(async (s) => {
      expect(await run(s, "const x = 42")).toMatchObject({ stdout: "", exitCode: 0 });
      expect(await run(s, "x * 2")).toMatchObject({ stdout: "84\n", exitCode: 0 });
      expect(await run(s, "let n = 1;\nfunction get(): number { return n; }")).toMatchObject({ exitCode: 0 });
      expect(await run(s, "n = 5")).toMatchObject({ exitCode: 0 });
      expect(await run(s, "get()")).toMatchObject({ stdout: "5\n", exitCode: 0 });
      expect(await run(s, 'class Greeter { hi() { return "hi"; } }\nnew Greeter().hi()')).toMatchObject({ stdout: '"hi"\n' });
      // Output of earlier snippets is not shown again.
      expect(await run(s, 'println("printed once")')).toMatchObject({ stdout: "printed once\n" });
      expect(await run(s, "x")).toMatchObject({ stdout: "42\n" });
    }));

  it("share live bindings: earlier closures see later assignments, in every form", () =>
    withSession(async (s) => {
      expect(await run(s, "let count = 0;\nconst bump = () => ++count;\nlet [a, { b }] = [1, { b: 2 }];")).toMatchObject({ exitCode: 0 });
      expect(await run(s, "count += 10; count++; [a, b] = [b, a]; bump()")).toMatchObject({ stdout: "12\n", exitCode: 0 });
      expect(await run(s, "`${count} ${a} ${b}`")).toMatchObject({ stdout: '"12 2 1"\n' });
      // A function kept in a let and replaced by a later snippet is the new one everywhere.
      expect(await run(s, "let twice = (v: number): number => v * 2;\nconst useTwice = () => twice(21);")).toMatchObject({ exitCode: 0 });
      expect(await run(s, "twice = (v: number) => v * 3;\nuseTwice()")).toMatchObject({ stdout: "63\n", exitCode: 0 });
      // Imports from "tacit" carry over, aliases included.
      expect(await run(s, 'import { println as say } from "tacit";')).toMatchObject({ exitCode: 0 });
      expect(await run(s, 'say("via alias")')).toMatchObject({ stdout: "via alias\n", exitCode: 0 });
      // An enum and a destructured const too.
      expect(await run(s, "enum Color { Red, Green }\nconst { length } = [1, 2, 3];")).toMatchObject({ exitCode: 0 });
      expect(await run(s, "`${Color.Green} ${length}`")).toMatchObject({ stdout: '"1 3"\n' });
    }));

  it("refuse assigning an earlier snippet's const, saying which binding", () =>
    withSession(async (s) => {
      await run(s, "const fixed = 1");
      const assigned = await run(s, "fixed = 2");
      // The type checker sees the whole program and says it first.
      expect(assigned.exitCode).toBe(3);
      expect(assigned.error).toContain("fixed");
      // Reached at run time (the checker cannot see through a function's parameter), it throws.
      await run(s, "function setFixed(f: (v: number) => void) { f(3); }");
      const hidden = await run(s, "setFixed((v) => { (fixed as any) = v; })");
      expect(hidden.exitCode).toBe(1);
      expect(hidden.error).toContain("Assignment to constant variable `fixed`");
      expect(await run(s, "fixed")).toMatchObject({ stdout: "1\n", exitCode: 0 });
    }));

  it("type-check each snippet as the whole program would, whether the checker is given it apart or whole", () =>
    withSession(async (s) => {
      // Checked apart from the earlier snippets (runner/split-check.ts) once they are long
      // enough, while no name comes twice.
      expect(await run(s, `// ${"-".repeat(APART_FROM_CHARS)}`)).toMatchObject({ exitCode: 0 });
      expect(await run(s, "interface Row { id: number }\nconst rows: Row[] = [{ id: 1 }];")).toMatchObject({ exitCode: 0 });
      const misspelt = await run(s, "const first = rows[0]!;\nfirst.idd");
      expect(misspelt.exitCode).toBe(3);
      expect(misspelt.error).toContain("script.ts:2:7 error TS2339: Property 'idd' does not exist on type 'Row'");
      // In the middle of the one program, a snippet's opening // @ts-nocheck is a comment like any other.
      const unchecked = await run(s, "// @ts-nocheck\nconst label: string = rows.length;");
      expect(unchecked.exitCode).toBe(3);
      expect(unchecked.error).toContain("script.ts:2:7 error TS2322: Type 'number' is not assignable to type 'string'");
      expect(await run(s, "rows[0]!.id")).toMatchObject({ stdout: "1\n", exitCode: 0 });
      // A name declared again is the whole program's to judge: refused, or merged.
      expect((await run(s, "const rows = 2;")).error).toContain("Cannot redeclare block-scoped variable 'rows'");
      expect(await run(s, "{ var total = 1; }")).toMatchObject({ exitCode: 0 });
      expect((await run(s, 'var total = "all";')).error).toContain("Subsequent variable declarations must have the same type");
      // (rows was written without a name, so this is the whole program's error too.)
      expect((await run(s, "interface Row { name: string }")).error).toContain("Property 'name' is missing");
      expect(await run(s, "interface Point { x: number }")).toMatchObject({ exitCode: 0 });
      expect(await run(s, "interface Point { y: number }")).toMatchObject({ exitCode: 0 });
      expect((await run(s, "const p: Point = { x: 1 };")).error).toContain("Property 'y' is missing");
      // A global shadowed by a snippet stays shadowed in the snippets after it.
      expect(await run(s, "const escape = 5;")).toMatchObject({ exitCode: 0 });
      expect(await run(s, "escape + 1")).toMatchObject({ stdout: "6\n", exitCode: 0 });
    }));

  it("type-check a plain import of tacit's names as the name itself, in the snippets after it", () =>
    withSession(async (s) => {
      expect(await run(s, 'import { println } from "tacit";\nconst greeting = "hi";')).toMatchObject({ exitCode: 0 });
      expect(await run(s, "println(greeting)")).toMatchObject({ stdout: "hi\n", exitCode: 0 });
      expect((await run(s, "println(greeting.toFixed())")).error).toContain("script.ts:1:18 error TS2551: Property 'toFixed' does not exist on type '\"hi\"'");
      const again = await run(s, "const println = 1;");
      expect(again.exitCode).toBe(3);
      expect(again.error).toContain("println");
    }));

  it("run in one live sandbox: a value read from the clock is kept as it was shown", () =>
    withSession(async (s) => {
      const first = await run(s, "const t = Date.now();\nprintln(t)");
      expect(first.exitCode).toBe(0);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await run(s, "t")).toMatchObject({ stdout: first.stdout, exitCode: 0 });
      expect(await run(s, "Date.now() > t")).toMatchObject({ stdout: "true\n", exitCode: 0 });
    }));

  it("Math.random draws the same numbers when a rebuilt sandbox replays earlier snippets", () =>
    withSession(async (s) => {
      const first = await run(s, "const r = Math.random();\nprintln(r)");
      expect(first.exitCode).toBe(0);
      const shown = Number(first.stdout.trim());
      expect(shown).toBeGreaterThanOrEqual(0);
      expect(shown).toBeLessThan(1);
      // A failure ends the sandbox; the rebuilt one replays the first snippet.
      expect((await run(s, 'throw new Error("rebuild")')).exitCode).toBe(1);
      expect(await run(s, "r")).toMatchObject({ stdout: `${first.stdout.trim()}\n`, exitCode: 0 });
      // Later draws continue the sequence rather than repeat it.
      expect(await run(s, "Math.random() === r")).toMatchObject({ stdout: "false\n", exitCode: 0 });
      // Another session draws other numbers.
      await withSession(async (other) => expect((await run(other, "Math.random()")).stdout).not.toBe(first.stdout));
    }));

  it("a rebuild whose replay comes out differently (the clock) ends the session with a message that says why", () =>
    withSession(async (s) => {
      expect((await run(s, "const t = Date.now();\nprintln(t)")).exitCode).toBe(0);
      await new Promise((resolve) => setTimeout(resolve, 5));
      expect((await run(s, 'throw new Error("rebuild")')).exitCode).toBe(1);
      const replayed = await run(s, "t");
      expect(replayed.exitCode).not.toBe(0);
      expect(replayed.error).toContain("depends on something that changes between runs");
      expect(replayed.error).toContain("create a new session");
    }));

  it.concurrent("a failing, ill-typed or timed-out snippet leaves the earlier bindings intact, undoing what it changed", () =>
    withSession(async (s) => {
      await run(s, "const kept = 7;\nlet counter = 1;\nconst read = () => counter;");
      const thrown = await run(s, 'const lost = 1;\ncounter = 99;\nthrow new Error("boom")');
      expect(thrown.exitCode).toBe(1);
      expect(thrown.error).toContain("script.ts:3:7");
      expect(await run(s, "read()")).toMatchObject({ stdout: "1\n", exitCode: 0 });
      const typed = await run(s, 'const bad: number = "s";');
      expect(typed.exitCode).toBe(3);
      expect(typed.error).toContain("script.ts:1:7 error TS2322");
      // Timed out waiting (Atomics.wait, for ever), not spinning a core through the 3 s limit.
      expect((await run(s, "counter = 50;\nAtomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);")).exitCode).toBe(124);
      expect(await run(s, "kept + read()")).toMatchObject({ stdout: "8\n", exitCode: 0 });
      const stalled = await run(s, "counter = 60;\nawait new Promise(() => {});");
      expect(stalled.exitCode).toBe(1);
      expect(stalled.error).toContain("top-level await never settled");
      expect(await run(s, "read()")).toMatchObject({ stdout: "1\n", exitCode: 0 });
      expect((await run(s, "lost")).exitCode).not.toBe(0);
    }));

  // Beside the test above (it.concurrent): it mostly waits on timers, and its server is its own
  // (the file's, with the same flags), so that the sandboxes it counts are its own.
  it.concurrent("a snippet cancelled while the session's sandbox is rebuilt never runs, and leaves the rebuilt sandbox to the next one", async () => {
    const own = await serverOfItsOwn(["--exec-timeout-ms", "3000", "--memory-limit-mb", "128", "--config", "config.json"]);
    try {
      const s = await create(own.client);
      // Two seconds of waiting make each rebuild (a replay of it) last long enough to cancel a snippet waiting for one
      // (on a timer: a busy loop spun a core through the run and the replay). Only the replay waits: the snippet reads
      // the clock (not an effect, so not answered from the recording) and waits once it is past `waitFrom`, which the
      // test lets pass before the rebuild. The first run, in the sandbox the snippet before it started, is sent before
      // then; run late on a loaded machine, it waits too, which changes nothing of what is tested.
      expect((await run(s, "const warm = 1;", own.client)).exitCode).toBe(0);
      const waitFrom = Date.now() + 1000;
      const waiting = `if (Date.now() > ${waitFrom}) await new Promise((resolve) => setTimeout(resolve, 2000));\nlet marker = 1;`;
      expect((await run(s, waiting, own.client)).exitCode).toBe(0);
      while (Date.now() <= waitFrom) await new Promise((resolve) => setTimeout(resolve, 50));
      const started = await sandboxesStartedDuring(async () => {
        expect((await run(s, 'throw new Error("rebuild")', own.client)).exitCode).toBe(1);
        await cancelledAfter(s, "marker = 2", 300, own.client);
        expect(await run(s, "marker", own.client)).toMatchObject({ stdout: "1\n", exitCode: 0 });
      }, own.pid);
      // One sandbox for the rebuild: the cancelled snippet did not end it and make a second.
      expect(started).toBe(1);
    } finally {
      await own.client.close();
    }
  });

  // The run is prepared while types are checked: nothing of a rejected snippet may reach the
  // session's sandbox (its first program frame starts the sandbox; any later one is "next").
  it("a session whose first snippets are refused (ill-typed, invalid) starts with the next one", () =>
    withSession(async (s) => {
      expect(await run(s, 'const early: number = "s";')).toMatchObject({ exitCode: 3 });
      expect(await run(s, 'import fs from "node:fs";')).toMatchObject({ exitCode: 3 });
      expect(await run(s, "const first = 1")).toMatchObject({ exitCode: 0 });
      expect(await run(s, "const second: string = first;")).toMatchObject({ exitCode: 3 });
      expect(await run(s, "first + 1")).toMatchObject({ stdout: "2\n", exitCode: 0 });
      expect((await run(s, "early")).exitCode).not.toBe(0);
    }));

  it("watches memory in every snippet (the watchdog rests between them): a later bomb is killed, the session goes on", async () => {
    // A server of its own, with a time limit the bomb cannot reach first: filling the 384 MB it
    // may hold costs page faults, and on a loaded machine that took longer than the 3 s of
    // this file's server (the snippet then ended as a timeout, 124). What is tested is that
    // the watchdog ends it, whatever the clock.
    const own = await connect(["--exec-timeout-ms", "30000", "--memory-limit-mb", "128"]);
    try {
      const s = await create(own);
      await run(s, "const kept = 5;", own);
      await run(s, "kept + 1", own);
      const bomb = await run(s, "const hoard: Uint8Array[] = [];\nwhile (true) { const b = new Uint8Array(64 * 1024 * 1024); b.fill(7); hoard.push(b); }", own);
      expect(bomb.exitCode).toBe(125);
      expect(bomb.error).toMatch(/memory/);
      expect(await run(s, "kept * 2", own)).toMatchObject({ stdout: "10\n", exitCode: 0 });
    } finally {
      await own.close();
    }
  });

  it("ends a snippet only when its timers have run: nothing of it spills into the next", () =>
    withSession(async (s) => {
      const first = await run(s, 'setTimeout(() => println("late"), 150);\nprintln("early")');
      expect(first).toMatchObject({ stdout: "early\nlate\n", exitCode: 0 });
      expect(await run(s, "1")).toMatchObject({ stdout: "1\n", exitCode: 0 });
    }));

  it("a snippet cannot fake its own end (the end of a snippet is the event loop running dry) to carry work into the next", () =>
    withSession(async (s) => {
      const faked = await run(
        s,
        [
          'requestFileSystem(".", async (fs) => {',
          "  await new Promise((resolve) => setTimeout(resolve, 300));",
          '  fs.access("carried.txt").write("carried");',
          "});",
          'setTimeout(() => dispatchEvent(new Event("beforeunload", { cancelable: true })), 0);',
        ].join("\n"),
      );
      expect(faked.exitCode).toBe(3);
      expect(faked.error).toContain("`dispatchEvent` is not available");
      expect(await run(s, "await new Promise((resolve) => setTimeout(resolve, 400));\n1")).toMatchObject({ stdout: "1\n", exitCode: 0 });
      expect(existsSync(path.join(dir, "carried.txt"))).toBe(false);
    }));

  it("a long snippet reports progress to a client that asks; a cancellation ends it and the session goes on", () =>
    withSession(async (s) => {
      await run(s, "const before = 3");
      await expectProgressThenCancel(client, "execute_in_session", { session_id: s });
      expect(await run(s, "before * 2")).toMatchObject({ stdout: "6\n", exitCode: 0 });
    }));

  it("runs snippets sent together one after another, in the order they came", () =>
    withSession(async (s) => {
      const [first, second, third] = await Promise.all([
        run(s, "let q = 1;\nawait new Promise((resolve) => setTimeout(resolve, 200));\nq = 2;"),
        run(s, "q * 10"),
        run(s, "q = q + 1"),
      ]);
      expect(first).toMatchObject({ exitCode: 0 });
      expect(second).toMatchObject({ stdout: "20\n", exitCode: 0 });
      expect(third).toMatchObject({ stdout: "3\n", exitCode: 0 });
    }));

  it("names an earlier snippet's frames in a stack trace by the snippet's number", () =>
    withSession(async (s) => {
      await run(s, "const one = 1;");
      await run(s, 'function fails(): never {\n  throw new Error("from snippet two");\n}');
      const thrown = await run(s, "fails();");
      expect(thrown.exitCode).toBe(1);
      expect(thrown.error).toContain("snippet-2.ts:2:9");
      expect(thrown.error).toContain("script.ts:1:1");
    }));

  it("a snippet cancelled during its type check never runs, and leaves the session's sandbox as it was", () =>
    withSession(async (s) => {
      expect((await run(s, "let marker = 1;")).exitCode).toBe(0);
      const started = await sandboxesStartedDuring(async () => {
        // Seconds of type-checking: cancelled while the checker works on it.
        await cancelledAfter(s, `${slowToCheck(2)}marker = 2;`, 500);
        expect(await run(s, "marker")).toMatchObject({ stdout: "1\n", exitCode: 0 });
      });
      // The session's sandbox was not ended, so none was started to rebuild it.
      expect(started).toBe(0);
    }));

  it("performs each effect once: a rebuilt sandbox's replay is answered from the recording", () =>
    withSession(async (s) => {
      await run(s, 'requestFileSystem(".", (fs) => fs.access("count.txt").append("x"));');
      await run(s, "const y = 1");
      expect((await run(s, 'throw new Error("rebuild")')).exitCode).toBe(1);
      expect(await run(s, "y + 1")).toMatchObject({ stdout: "2\n", exitCode: 0 });
      expect(readFileSync(path.join(dir, "count.txt"), "utf8")).toBe("x");
    }));

  it("refuses a capability kept from an earlier snippet: its scope ended with that snippet", () =>
    withSession(async (s) => {
      writeFileSync(path.join(dir, "kept.txt"), "secret-ish");
      await run(s, 'let saved: FileSystem | undefined;\nrequestFileSystem(".", (fs) => { saved = fs; });');
      const reused = await run(s, 'saved!.access("kept.txt").read()');
      expect(reused.exitCode).toBe(1);
      expect(reused.error).toContain("outside its requestFileSystem scope");
      expect(reused.stdout).not.toContain("secret-ish");
    }));

  it("keeps one live Deno process per session, and deleting the session ends it", async () => {
    const before = await settleAt(1); // the warm spare
    expect(before).toBe(1);
    const s = await create();
    await run(s, "const a = 1");
    await run(s, "a + 1");
    expect(await settleAt(before + 1)).toBe(before + 1); // the session's sandbox and a new spare
    await remove(s);
    expect(await settleAt(before)).toBe(before);
  });

  it("lists, deletes, refuses past the limit, and explains an unknown id", async () => {
    for (let i = 0; i < 3; i++) await create();
    const listed = await client.callTool({ name: "list_sessions", arguments: {} });
    const before = (listed.structuredContent as { sessions: Array<{ session_id: string }> }).sessions;
    expect(before.length).toBe(3);
    const refused = await client.callTool({ name: "create_repl_session", arguments: {} });
    expect(refused.isError).toBe(true);
    expect((refused.content as Array<{ text: string }>)[0]!.text).toContain("too many live sessions (3)");
    const victim = before[0]!.session_id;
    const deleted = await client.callTool({ name: "delete_repl_session", arguments: { session_id: victim } });
    expect(deleted.isError).toBeFalsy();
    const gone = await client.callTool({ name: "execute_in_session", arguments: { session_id: victim, code: "1" } });
    expect(gone.isError).toBe(true);
    expect((gone.content as Array<{ text: string }>)[0]!.text).toContain("create_repl_session");
    expect(typeof (await create())).toBe("string");
  });

  it("holds the limit against calls sent together: 10 at once under a limit of 3 make 3", async () => {
    const listSessions = async () =>
      (((await client.callTool({ name: "list_sessions", arguments: {} })).structuredContent as { sessions: Array<{ session_id: string }> }).sessions);
    for (const { session_id } of await listSessions()) await remove(session_id);
    const answers = await Promise.all(Array.from({ length: 10 }, () => client.callTool({ name: "create_repl_session", arguments: {} })));
    try {
      expect(answers.filter((answer) => !answer.isError)).toHaveLength(3);
      expect((await listSessions()).length).toBe(3);
    } finally {
      for (const { session_id } of await listSessions()) await remove(session_id);
    }
  });

  it("--no-session hides the session tools", async () => {
    const plain = await connect(["--no-session"]);
    const { tools } = await plain.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["execute_typescript", "show_interface"]);
    // Called anyway, a hidden tool is an unknown one.
    await expect(plain.callTool({ name: "create_repl_session", arguments: {} })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('unknown tool "create_repl_session"; this server\'s tools are execute_typescript, show_interface'),
    });
    await plain.close();
  });
});
