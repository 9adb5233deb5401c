// Attacks on the runtime rather than the world: raw writes to the protocol channel, exiting
// the runtime, trapping or sending signals, code from strings, and storage that could outlive
// an evaluation. Each is rejected by the validator through a real `tacit serve` (exit 3 in its
// answer; one serve for all, at the end of the file) and, with the validator bypassed, still cannot do harm.

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { adoptSandboxNetwork, type SandboxNetwork, sandboxNetwork } from "../../runner/network-namespace.js";
import { defaultConfig } from "../../runner/config.js";
import { SANDBOX_HOME } from "../../runner/sandbox-process.js";
import { spawn, spawnSync } from "node:child_process";
import { commandLineOf, descendantsOf, expectToDieWith } from "../processes.js";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expectNoneLeft, runBypassed, runScript, tacitBin, tempDir, watchProcesses } from "../helpers.js";
import { type AttackWorld, createWorld, expectWorldUntouched, lit, NODE_PRELUDE, seenOf } from "./fixtures.js";
import { servedValidator } from "./served-validator.js";

let world: AttackWorld;
beforeEach(async () => {
  world = await createWorld();
});
afterEach(async () => {
  await world.cleanup();
});

/**
 * The validator's refusals of this file's attacks, each registered where its attack is defined
 * (`attempts` gives each script and the rules its refusal must name) and checked as a test of its
 * own at the end of the file, through one real `tacit serve` (served-validator.ts) rather than a
 * `tacit run` each (a Node start, about 0.4 s of CPU, for a refusal that takes the validator
 * milliseconds). At the end, in a describe of its own, so that no test that watches this process's
 * descendants (watchProcesses, expectNoneLeft) runs while the serve and its warm spare do. That a
 * refusal makes `tacit run` exit 3 is test/cli/run.test.ts's.
 */
const refusals: { title: string; attempts: (ctx: AttackWorld["ctx"]) => [code: string, rules: string[]][] }[] = [];
function refusedByTheValidator(title: string, attempts: (ctx: AttackWorld["ctx"]) => [code: string, rules: string[]][]): void {
  refusals.push({ title, attempts });
}

describe("raw writes to the protocol channel (stdout)", () => {
  const GARBAGE = "garbage-from-the-script";
  const denoWrite = `println("before");\nDeno.stdout.writeSync(new TextEncoder().encode(${lit(GARBAGE + "\n")}));\nprintln("after");`;
  const nodeWrite = `${NODE_PRELUDE}const p = await import("node:process");\np.stdout.write(${lit(GARBAGE + "\n")});\nawait new Promise((r) => setTimeout(r, 100));\nprintln("after");`;
  // Valid JSON, but a request for an action that does not exist.
  const forged = `Deno.stdout.writeSync(new TextEncoder().encode(${lit(JSON.stringify({ type: "request", id: 1, action: { kind: "Exec", command: "touch" } }) + "\n")}));\nprintln("after");`;

  refusedByTheValidator("raw writes to the protocol channel (stdout)", () => [
    [denoWrite, ["ambient-authority"]],
    [nodeWrite, ["dynamic-import"]],
  ]);

  it("Deno.stdout.writeSync ends the evaluation as a protocol error", async () => {
    const result = await runBypassed(denoWrite, { keepRuntime: true });
    expect(result.outcome, result.error ?? "").toBe("protocol-error");
    expect(result.exitCode).toBe(1);
    expect(result.error).toMatch(/protocol/);
    expect(result.stdout).not.toContain(GARBAGE);
    expect(result.stdout).not.toContain("after");
  });

  it("node:process stdout.write ends the evaluation as a protocol error", async () => {
    const result = await runBypassed(nodeWrite, { keepRuntime: true });
    expect(result.outcome, result.error ?? "").toBe("protocol-error");
    expect(result.exitCode).toBe(1);
    expect(result.error).toMatch(/protocol/);
    expect(result.stdout).not.toContain(GARBAGE);
  });

  it("node:process stdout.write with Deno hidden writes nothing and does not succeed", async () => {
    const result = await runBypassed(nodeWrite);
    expect(result.exitCode).not.toBe(0);
    expect(result.stdout).not.toContain(GARBAGE);
    expect(result.error ?? "").not.toContain(GARBAGE);
  });

  it("a forged request frame for an unknown action ends the evaluation", async () => {
    const result = await runBypassed(forged, { keepRuntime: true });
    expect(result.outcome, result.error ?? "").toBe("protocol-error");
    expect(result.error).toMatch(/protocol/);
    expect(result.stdout).not.toContain("after");
    await expectWorldUntouched(world, seenOf(result));
  });
});

describe("raw descriptors (process.binding(\"pipe_wrap\") opens any descriptor by its number)", () => {
  // Writes a "done" frame on fd 0, the sandbox's input: were the host to read it as the
  // protocol, the script would end as a success. The host reads its end of fd 0 only to refuse.
  const onInput = `${NODE_PRELUDE}const { Pipe, constants } = (globalThis as any).process.binding("pipe_wrap");
const { WriteWrap } = (globalThis as any).process.binding("stream_wrap");
const input = new Pipe(constants.SOCKET);
println("opened", input.open(0));
const request = new WriteWrap();
request.oncomplete = () => undefined;
input.writeUtf8String(request, ${lit(JSON.stringify({ type: "done" }) + "\n")});
// Waits to be ended: the host's refusal, not this script, decides how it ends.
await new Promise(() => setInterval(() => undefined, 1_000));`;

  refusedByTheValidator("raw descriptors (a write on fd 0)", () => [[onInput, ["ambient-authority"]]]);

  it("a write on fd 0 ends the evaluation as a protocol error, not as the success it claims", async () => {
    const result = await runBypassed(onInput, { keepRuntime: true });
    expect(result.stdout, result.error ?? "").toContain("opened 0");
    expect(result.outcome, result.error ?? "").toBe("protocol-error");
    expect(result.exitCode).toBe(1);
    expect(result.error).toContain("something wrote back on the sandbox's input");
    await expectWorldUntouched(world, seenOf(result));
  });
});

/**
 * Runs raw-channel `code` (validator bypassed, Deno kept) whose readInput waits for ever: a
 * pipe its producer keeps open, as a request that waits (a person being asked) would.
 */
function runWithInputThatNeverComes(code: string): ReturnType<typeof runBypassed> {
  return runBypassed(code, {
    config: { executionTimeoutMs: 10_000 },
    input: { kind: "piped", read: () => new Promise<string>(() => undefined) },
    keepRuntime: true,
  });
}

describe("requests sent ahead of their answers (the raw channel)", () => {
  const frameOf = (id: number, action: object): string => JSON.stringify({ type: "request", id, action }) + "\n";
  const writeAll = "const w = (b) => { for (let o = 0; o < b.length; ) o += Deno.stdout.writeSync(b.subarray(o)); };\n";

  it("a second request before the first is answered ends the evaluation; it is never carried out", async () => {
    const canary = `AHEAD-${Date.now()}`;
    const code = `${writeAll}w(new TextEncoder().encode(${lit(frameOf(1, { kind: "Print", parts: ["first\n"] }) + frameOf(2, { kind: "Print", parts: [canary] }))}));\nDeno.stdin.readSync(new Uint8Array(1 << 16));\nprintln("after");`;
    const result = await runBypassed(code, { keepRuntime: true });
    expect(result.outcome, result.error ?? "").toBe("protocol-error");
    expect(result.error).toMatch(/before its previous request was answered/);
    expect(result.stdout).not.toContain(canary);
    expect(result.stdout).not.toContain("after");
  });

  it("a flood of requests behind one that waits (readInput on an open pipe) is refused at once, not held by the host", async () => {
    // Each held request was parsed and kept until its turn: behind a request that waits (here
    // readInput on a pipe its producer keeps open; a person being asked, with the clock paused,
    // waits longer) the host grew by the flood's size until it ran out of memory.
    const flood = `${writeAll}const enc = new TextEncoder();\nw(enc.encode(${lit(frameOf(1, { kind: "ReadInput" }))}));\nconst big = enc.encode(JSON.stringify({ type: "request", id: 2, action: { kind: "Print", parts: ["x".repeat(2_000_000)] } }) + "\\n");\nfor (let i = 0; i < 150; i++) w(big);\nDeno.stdin.readSync(new Uint8Array(1 << 16));`;
    // Refused at once, not held: the input never comes, so the first request is still waiting
    // when the refusal comes (ordering, not a duration). Held, the flood would sit behind it
    // until the 10 s limit (outcome "timeout") or the host's memory ran out.
    const result = await runWithInputThatNeverComes(flood);
    expect(result.outcome, result.error ?? "").toBe("protocol-error");
    expect(result.error).toMatch(/sent request 2 before its previous request was answered/);
  });
});

describe("frames the host reads spinning (the raw channel)", () => {
  it("a request whose first piece comes at once after a reply and the rest later is answered whole, once", async () => {
    // After a reply the host reads the sandbox's stdout itself for a few µs (runner/spin-read.ts):
    // the first piece comes then, the rest through the event loop.
    const canary = `SPLIT-${Date.now()}`;
    const frameOf = (id: number, action: object): string => JSON.stringify({ type: "request", id, action }) + "\n";
    const second = frameOf(2, { kind: "Print", parts: [`${canary}\n`] });
    const code = `
const enc = new TextEncoder();
const w = (b) => { for (let o = 0; o < b.length; ) o += Deno.stdout.writeSync(b.subarray(o)); };
const buf = new Uint8Array(1 << 16);
const reply = () => { let text = ""; while (!text.includes("\\n")) text += new TextDecoder().decode(buf.subarray(0, Deno.stdin.readSync(buf))); return JSON.parse(text); };
w(enc.encode(${lit(frameOf(1, { kind: "Print", parts: ["one\n"] }))}));
reply();
w(enc.encode(${lit(second.slice(0, 12))}));
const end = Date.now() + 200;
while (Date.now() < end) {}
w(enc.encode(${lit(second.slice(12))}));
println(reply().ok);
`;
    const result = await runBypassed(code, { keepRuntime: true });
    expect(result.outcome, result.error ?? "").toBe("ok");
    expect(result.stdout).toBe(`one\n${canary}\ntrue\n`);
  });

  it("two requests sent at once after a reply, read by the host spinning, end the evaluation; the second is never carried out", async () => {
    const canary = `AHEAD-SPUN-${Date.now()}`;
    const frameOf = (id: number, action: object): string => JSON.stringify({ type: "request", id, action }) + "\n";
    const code = `
const enc = new TextEncoder();
const w = (b) => { for (let o = 0; o < b.length; ) o += Deno.stdout.writeSync(b.subarray(o)); };
const buf = new Uint8Array(1 << 16);
w(enc.encode(${lit(frameOf(1, { kind: "Print", parts: ["one\n"] }))}));
let text = "";
while (!text.includes("\\n")) text += new TextDecoder().decode(buf.subarray(0, Deno.stdin.readSync(buf)));
w(enc.encode(${lit(frameOf(2, { kind: "Print", parts: ["two\n"] }) + frameOf(3, { kind: "Print", parts: [canary] }))}));
Deno.stdin.readSync(buf);
println("after");
`;
    const result = await runBypassed(code, { keepRuntime: true });
    expect(result.outcome, result.error ?? "").toBe("protocol-error");
    expect(result.error).toMatch(/sent request 3 before its previous request was answered/);
    expect(result.stdout).not.toContain(canary);
    expect(result.stdout).not.toContain("after");
  });
});

describe("posts: printing without waiting (the raw channel)", () => {
  const writeAll = "const w = (b) => { for (let o = 0; o < b.length; ) o += Deno.stdout.writeSync(b.subarray(o)); };\n";
  const postOf = (action: object): string => JSON.stringify({ type: "post", action }) + "\n";

  it("a post naming a classified handle that was never issued ends the evaluation", async () => {
    const code = `${writeAll}w(new TextEncoder().encode(${lit(postOf({ kind: "Print", parts: ["forged ", { classified: "c999" }, "\n"] }))}));\nawait new Promise((r) => setTimeout(r, 200));\nprintln("after");`;
    const result = await runBypassed(code, { keepRuntime: true });
    expect(result.outcome, result.error ?? "").toBe("protocol-error");
    expect(result.error).toMatch(/posted a Print the host refused: not a Classified value from this evaluation/);
    expect(result.stdout).not.toContain("after");
  });

  it("a post while a request is unanswered ends the evaluation; it is never carried out", async () => {
    const canary = `POSTED-AHEAD-${Date.now()}`;
    const request = JSON.stringify({ type: "request", id: 1, action: { kind: "ReadInput" } }) + "\n";
    const code = `${writeAll}w(new TextEncoder().encode(${lit(request + postOf({ kind: "Print", parts: [canary] }))}));\nDeno.stdin.readSync(new Uint8Array(1 << 16));\nprintln("after");`;
    const result = await runWithInputThatNeverComes(code);
    expect(result.outcome, result.error ?? "").toBe("protocol-error");
    expect(result.error).toMatch(/sent a post while a request was unanswered/);
    expect(result.stdout).not.toContain(canary);
  });

  it("posts of nothing behind a slow value queue nothing per post for the secure sink", async () => {
    // The sink's share counted what was printed in bytes and queued a job per print; a print
    // of no parts counts 0 bytes, and posts come without waiting. Behind a value taking 4 s,
    // 3.5 s of such posts grew the host by about 360 MB (a job of about 600 bytes each, some
    // 160,000 a second): for a time limit and a chain of slow values, gigabytes. The value
    // waits (Atomics.wait) rather than spins: pending all the same, and the posts get a core.
    const { dir, cleanup } = tempDir("tacit-post-sink-");
    try {
      const sink = path.join(dir, "secure-output.txt");
      const posts = postOf({ kind: "Print", parts: [] }).repeat(4096);
      const code = `
const slow = classify("SINK-VALUE").map((x) => { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 4000); return x; });
println("first:", slow);
const frames = new TextEncoder().encode(${lit(posts)});
const end = Date.now() + 3500;
while (Date.now() < end) for (let o = 0; o < frames.length; ) o += Deno.stdout.writeSync(frames.subarray(o));
println("after the posts");
`;
      let peak = 0;
      const base = process.memoryUsage().rss;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss - base)), 20);
      const result = await runBypassed(code, { keepRuntime: true, config: { executionTimeoutMs: 20_000, library: { ...defaultConfig.library, secureOutput: sink } } });
      clearInterval(sampler);
      expect(result.outcome, `${result.error} (host grew ${peak} bytes)`).toBe("ok");
      expect(result.stdout).toBe("first: Classified(***)\nafter the posts\n");
      expect(readFileSync(sink, "utf8")).toBe("first: SINK-VALUE\nafter the posts\n");
      expect(peak).toBeLessThan(200 * 1024 * 1024);
    } finally {
      cleanup();
    }
  }, 30_000);
});

describe("replies the sandbox never reads (the raw channel)", () => {
  it("a request is not answered until the previous reply has gone to the sandbox, so unread replies cannot pile up in the host", async () => {
    // The stub reads each reply whole before it sends its next request. Code with the raw
    // channel could send a request, leave the reply unread, and send the next once the host had
    // answered: every reply (here a 4 MB file's text) was queued in the host's pipe buffer
    // for the sandbox's stdin, without bound, for as long as the evaluation lasted.
    const { dir, cleanup } = tempDir("tacit-unread-");
    try {
      writeFileSync(path.join(dir, "big.txt"), "b".repeat(4 * 1024 * 1024));
      const frameOf = (id: number, action: object): string => JSON.stringify({ type: "request", id, action }) + "\n";
      const code = `
const enc = new TextEncoder();
const w = (b) => { for (let o = 0; o < b.length; ) o += Deno.stdout.writeSync(b.subarray(o)); };
w(enc.encode(${lit(frameOf(1, { kind: "FsOpenScope", root: dir }))}));
const buf = new Uint8Array(1 << 16);
let text = "";
while (!text.includes("\\n")) text += new TextDecoder().decode(buf.subarray(0, Deno.stdin.readSync(buf)));
const scope = JSON.parse(text.slice(0, text.indexOf("\\n"))).value.scope;
// Each reply is left unread; the next request goes once the host has had time to answer.
for (let id = 2; id < 60; id++) {
  w(enc.encode(JSON.stringify({ type: "request", id, action: { kind: "FsRead", scope, path: "big.txt", as: "text" } }) + "\\n"));
  const end = Date.now() + 150;
  while (Date.now() < end) {}
}
`;
      let peak = 0;
      const base = process.memoryUsage().rss;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss - base)), 20);
      const result = await runBypassed(code, { keepRuntime: true, config: { executionTimeoutMs: 15_000, library: { ...defaultConfig.library, allowedRoots: [dir] } } });
      clearInterval(sampler);
      expect(result.outcome, `${result.error} (host grew ${peak} bytes)`).toBe("protocol-error");
      expect(result.error).toMatch(/before its previous request was answered/);
      // Unbounded, the host held hundreds of MB of unread replies (one reply is 4 MB).
      expect(peak).toBeLessThan(200 * 1024 * 1024);
    } finally {
      cleanup();
    }
  }, 30_000);
});

describe("exiting the runtime is never reported as success", () => {
  const topLevel = `println("before");\nDeno.exit(0);`;
  const fromTimer = `println("before");\nsetTimeout(() => Deno.exit(0), 10);`;
  const viaNode = `${NODE_PRELUDE}const p = await import("node:process");\np.exit(0);`;

  refusedByTheValidator("exiting the runtime", () => [
    [topLevel, ["ambient-authority"]],
    [viaNode, ["dynamic-import"]],
  ]);

  it("Deno.exit(0) at top level → protocol-error", async () => {
    const result = await runBypassed(topLevel, { keepRuntime: true });
    expect(result.exitCode).not.toBe(0);
    expect(result.outcome, result.error ?? "").toBe("protocol-error");
  });

  it("Deno.exit(0) from a timer, after the module finished → protocol-error", async () => {
    const result = await runBypassed(fromTimer, { keepRuntime: true });
    expect(result.outcome, result.error ?? "").toBe("protocol-error");
    expect(result.exitCode).not.toBe(0);
  });

  it("node:process exit(0) → protocol-error", async () => {
    const result = await runBypassed(viaNode, { keepRuntime: true });
    expect(result.exitCode).not.toBe(0);
    expect(result.outcome, result.error ?? "").toBe("protocol-error");
  });

  it("with Deno hidden, neither route exits successfully", async () => {
    for (const code of [topLevel, viaNode]) {
      const result = await runBypassed(code);
      expect(result.exitCode, code).not.toBe(0);
    }
  });
});

describe("signals", () => {
  const trapAndSpin = `for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) Deno.addSignalListener(signal, () => println("trapped", signal));\nprintln("trapping");\nwhile (true) {}`;

  refusedByTheValidator("signals: trapping them", () => [[trapAndSpin, ["ambient-authority"]]]);

  it("trapping SIGTERM does not outlive the timeout: SIGKILL, 124, nothing left running", async () => {
    // No bound on durationMs: a trappable signal never ends this loop (the listeners cannot even
    // run), so a kill that is not SIGKILL hangs the test, which the vitest timeout catches; what
    // is left to show is that the sandbox is gone once the evaluation answers.
    const { result, seen } = await watchProcesses(() => runBypassed(trapAndSpin, { keepRuntime: true, config: { executionTimeoutMs: 1500 } }));
    expect(result.stdout).toContain("trapping");
    expect(result.outcome).toBe("timeout");
    expect(result.exitCode).toBe(124);
    expect(result.error).toMatch(/ran longer than 1500 ms/);
    expect(result.stdout).not.toContain("trapped");
    expectNoneLeft(seen, "bootstrap.js");
    const hello = await runBypassed('println("ok")');
    expect(hello).toMatchObject({ outcome: "ok", stdout: "ok\n" });
  });

  it("a sandbox spinning in a loop ends with tacit when tacit is killed with SIGKILL (no exit hook runs)", async () => {
    // A fourth review SIGKILLed `tacit run` (as the OOM killer or a supervisor does) while its
    // script spun in a loop: the Deno sandbox, which reads nothing while it spins, ran on at
    // full CPU with no time limit left (the timer was in the process that had gone).
    const { dir, cleanup } = tempDir("tacit-spin-");
    try {
      writeFileSync(path.join(dir, "spin.ts"), "while (true) {}\n");
      const child = spawn(process.execPath, [tacitBin, "run", "--no-check", "spin.ts"], { cwd: dir, stdio: "ignore" });
      await expectToDieWith(child, "bootstrap.js", "sandboxes", 300);
    } finally {
      cleanup();
    }
  });

  describe("sending signals to the host", () => {
    const received: string[] = [];
    const onTerm = () => received.push("SIGTERM");
    const onWinch = () => received.push("SIGWINCH");
    beforeEach(() => {
      received.length = 0;
      // Listeners turn a delivered signal into a failed assertion instead of a dead worker.
      // SIGWINCH (ignored by default) for the process-group attempt, so nothing else is hurt.
      process.on("SIGTERM", onTerm);
      process.on("SIGWINCH", onWinch);
    });
    afterEach(() => {
      process.off("SIGTERM", onTerm);
      process.off("SIGWINCH", onWinch);
    });

    const denoKill = (c: AttackWorld["ctx"]) => `
for (const [pid, signal] of [[${c.hostPid}, "SIGTERM"], [0, "SIGWINCH"], [${c.victimPid}, "SIGKILL"]]) {
  try { Deno.kill(pid, signal); println("sent", signal); } catch (e) { println("refused:", e.name); }
}`;
    const nodeKill = (c: AttackWorld["ctx"]) => `${NODE_PRELUDE}const p = await import("node:process");
for (const [pid, signal] of [[${c.hostPid}, "SIGTERM"], [0, "SIGWINCH"], [${c.victimPid}, "SIGKILL"]]) {
  try { p.kill(pid, signal); println("sent", signal); } catch (e) { println("refused:", e.name); }
}`;

    refusedByTheValidator("signals: sending them to the host", (ctx) => [
      [denoKill(ctx), ["ambient-authority"]],
      [nodeKill(ctx), ["dynamic-import"]],
    ]);

    for (const keepRuntime of [true, false]) {
      it(`Deno.kill / node:process kill fail and deliver nothing (${keepRuntime ? "Deno kept" : "Deno hidden"})`, async () => {
        for (const code of [denoKill(world.ctx), nodeKill(world.ctx)]) {
          const result = await runBypassed(code, { keepRuntime });
          expect(result.stdout).not.toContain("sent");
          // Each call was made and failed (with Deno hidden, Deno.kill is simply absent).
          if (keepRuntime || code.includes("Deno.kill")) expect(result.stdout.match(/refused:/g)?.length, result.stdout).toBe(3);
          await new Promise((r) => setTimeout(r, 50));
          expect(received, "a signal reached the host").toEqual([]);
          await expectWorldUntouched(world, seenOf(result));
        }
        expect(process.kill(process.pid, 0)).toBe(true);
      });
    }
  });
});

describe("code from strings (V8 runs with --disallow-code-generation-from-strings)", () => {
  // Each would print "generated" only if the string was compiled and run.
  const attempts = [
    `eval("'gen' + 'erated'")`,
    `(0, eval)("'gen' + 'erated'")`,
    `new Function("return 'gen' + 'erated'")()`,
    `Reflect.construct(Function, ["return 'gen' + 'erated'"])()`,
    `(() => 0).constructor("return 'gen' + 'erated'")()`,
    `await new (async function () {}).constructor("return 'gen' + 'erated'")()`,
    `new (function* () {}).constructor("yield 'gen' + 'erated'")().next().value`,
  ];
  const code = attempts.map((a) => `try { println(${a}); } catch (e) { println(e.name); }`).join("\n");

  refusedByTheValidator("code from strings", () => [[code, ["dynamic-code", "function-constructor"]]]);

  for (const keepRuntime of [true, false]) {
    it(`every route throws EvalError with the validator bypassed (${keepRuntime ? "Deno kept" : "Deno hidden"})`, async () => {
      const result = await runBypassed(code, { keepRuntime });
      expect(result.outcome, result.error ?? "").toBe("ok");
      expect(result.stdout).not.toContain("generated");
      expect(result.stdout.trim().split("\n")).toEqual(attempts.map(() => "EvalError"));
    });
  }

  it("a route the validator cannot see (a computed key) still fails at run time, through the CLI", async () => {
    const hidden = `const F = Reflect.get(Object, "constr" + "uctor") as (source: string) => () => unknown;
try { println(F("return 'gen' + 'erated'")()); } catch (e) { println((e as Error).name); }`;
    const result = await runScript(hidden);
    // Rejecting it would be fine too; running it must not compile the string.
    expect([0, 3], result.stderr).toContain(result.code);
    if (result.code === 0) expect(result.stdout).toBe("EvalError\n");
    expect(result.stdout).not.toContain("generated");
  });

  it("setTimeout with a string does not compile it", async () => {
    const result = await runBypassed(`setTimeout("println('gen' + 'erated')", 0);\nawait new Promise((r) => setTimeout(r, 50));`, { keepRuntime: true });
    expect(result.stdout).not.toContain("generated");
  });
});

describe("storage does not outlive an evaluation (the sandbox can write no file at all)", () => {
  // Each store is tried on its own: one that is refused must not hide whether the others work.
  const attempt = `const attempt = async (what: string, op: () => unknown): Promise<string> => {
  try { return \`\${what} \${String(await op())}\`; } catch { return \`\${what} refused\`; }
};`;
  const store = (secret: string) => `${attempt}
println(await attempt("local", () => { localStorage.setItem("k", ${lit(secret)}); return "stored"; }));
println(await attempt("session", () => { sessionStorage.setItem("k", ${lit(secret)}); return "stored"; }));
println(await attempt("cache", async () => { await (await caches.open("c")).put("http://tacit.invalid/k", new Response(${lit(secret)})); return "stored"; }));`;
  const load = `${attempt}
println(await attempt("local", () => localStorage.getItem("k")));
println(await attempt("session", () => sessionStorage.getItem("k")));
println(await attempt("cache", async () => { const hit = await (await caches.open("c")).match("http://tacit.invalid/k"); return hit ? await hit.text() : "miss"; }));`;

  refusedByTheValidator("storage", () => [[load, ["ambient-authority"]]]);

  for (const keepRuntime of [true, false]) {
    it(`nothing stored by one run reaches the next; persistent storage is refused outright (${keepRuntime ? "Deno kept" : "Deno hidden"})`, async () => {
      const secret = world.ctx.canary;
      const first = await runBypassed(store(secret), { keepRuntime });
      expect(first.outcome, first.error ?? "").toBe("ok");
      // localStorage and the cache API would write under DENO_DIR, where nothing can be
      // created; sessionStorage lives in the process's memory only.
      expect(first.stdout).toBe("local refused\nsession stored\ncache refused\n");
      const second = await runBypassed(load, { keepRuntime });
      expect(second.outcome, second.error ?? "").toBe("ok");
      expect(second.stdout).not.toContain(secret);
      expect(second.stdout).toBe("local refused\nsession null\ncache refused\n");
    });
  }
});

describe("WebGPU (it needs no Deno permission; the sandbox is given no backend)", () => {
  // Each request names what it got: an adapter's description is the driver the sandbox loaded.
  const ask = `const gpu = (navigator as any).gpu;
const adapterOf = async (options?: object): Promise<string> => {
  try {
    const adapter = gpu ? await gpu.requestAdapter(options) : null;
    return adapter === null ? "none" : \`driver \${adapter.info.description || adapter.info.vendor || "unnamed"}\`;
  } catch (e) {
    return \`refused \${(e as Error).name}\`;
  }
};`;
  const mainRealm = `${ask}
println("adapter:", await adapterOf());
println("fallback adapter:", await adapterOf({ forceFallbackAdapter: true }));
println("low-power adapter:", await adapterOf({ powerPreference: "low-power" }));`;
  // A Worker's realm has its own navigator.gpu; the backends are the process's.
  const workerSource = `const gpu = navigator.gpu;
const adapter = gpu ? await gpu.requestAdapter() : null;
postMessage(adapter === null ? "none" : "driver " + (adapter.info.description || adapter.info.vendor || "unnamed"));`;
  const inWorker = `const url = URL.createObjectURL(new Blob([${lit(workerSource)}], { type: "application/javascript" }));
const worker = new Worker(url, { type: "module" });
println("worker adapter:", await new Promise((resolve) => {
  worker.onmessage = (event) => resolve(event.data);
  worker.onerror = (event) => { event.preventDefault(); resolve("worker error " + event.message); };
}));
worker.terminate();`;

  refusedByTheValidator("WebGPU", () => [[mainRealm, ["ambient-authority"]]]);

  for (const keepRuntime of [true, false]) {
    it(`no adapter is found, so no GPU driver is loaded (${keepRuntime ? "Deno kept, and in a Worker" : "Deno hidden"})`, async () => {
      const result = await runBypassed(keepRuntime ? `${mainRealm}\n${inWorker}` : mainRealm, { keepRuntime });
      expect(result.outcome, result.error ?? "").toBe("ok");
      expect(result.stdout).not.toContain("driver");
      const expected = ["adapter: none", "fallback adapter: none", "low-power adapter: none", ...(keepRuntime ? ["worker adapter: none"] : [])];
      expect(result.stdout.trim().split("\n")).toEqual(expected);
      await expectWorldUntouched(world, seenOf(result));
    });
  }
});

describe("native file I/O no permission covers: node:sqlite's temporary files (the sandbox runs with a file size limit of 0)", () => {
  // Where the host makes it, the sandbox's mount namespace hides these directories and leaves
  // nothing writable (test/attacks/mount-namespace.test.ts), and SQLite refuses before it writes.
  // The file size limit is the layer beneath, for hosts where no mount namespace can be made:
  // these sandboxes are started as there, in the network namespace alone.
  let found: SandboxNetwork | undefined;
  beforeAll(() => {
    found = sandboxNetwork();
    if (found.kind === "own-namespace") adoptSandboxNetwork({ ...found, sandboxArgsBefore: [...found.argsBefore], filesInView: "as on a host without mount namespaces" });
  });
  afterAll(() => {
    if (found !== undefined) adoptSandboxNetwork(found);
  });
  // An in-memory database needs no permission, and SQLite spills a temporary table to a file it
  // creates and unlinks itself, in a directory the script names: 64 MiB written to disk, the
  // sandbox's resident memory unchanged, before the limit.
  const spill = (dir: string, rows: number) =>
    `const db = new DatabaseSync(":memory:");
db.exec(${lit(`PRAGMA temp_store_directory = '${dir}'; PRAGMA temp_store = FILE; PRAGMA cache_size = 10; CREATE TEMP TABLE spill(x BLOB)`)});
db.exec("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${rows}) INSERT INTO spill SELECT randomblob(1048576) FROM n");`;
  const script = (dir: string) => `${NODE_PRELUDE}const { DatabaseSync } = await import("node:sqlite");
println("database made");
${spill(dir, 64)}
println("spilled 64 MiB to disk");`;

  refusedByTheValidator("native file I/O (node:sqlite)", (ctx) => [[script(ctx.dir), ["dynamic-import"]]]);

  for (const keepRuntime of [true, false]) {
    it(`the sandbox is ended at its first write, and says why (${keepRuntime ? "Deno kept" : "Deno hidden"})`, async () => {
      const result = await runBypassed(script(world.ctx.dir), { keepRuntime });
      expect(result.stdout, result.error ?? "").toContain("database made");
      expect(result.stdout).not.toContain("spilled");
      expect(result.outcome).toBe("protocol-error");
      expect(result.error).toContain("the sandbox was ended as it wrote to a file on disk");
      expect(result.error).toContain("requestFileSystem");
      await expectWorldUntouched(world, seenOf(result));
    });
  }

  it("a map function cannot reach node:sqlite to spill plaintext to disk: the map fails out of sight, and nothing is written", async () => {
    const { dir, cleanup } = tempDir("tacit-sqlite-sink-");
    try {
      const sink = path.join(dir, "secure-output.txt");
      // The pure evaluator's realm reached node:sqlite synchronously (process.getBuiltinModule), once
      // a stand-in answered what node:process asks of the Deno global the evaluator deleted: its
      // temporary file ended the evaluator (SIGXFSZ, the file size limit of 0). Map functions now
      // run in a realm of their own, frozen, with the language's built-ins alone: neither the
      // stand-in nor `process` is there.
      const code = `const spilled = classify("SECRET-PLAINTEXT").map((secret) => {
  const stub = (): unknown => new Proxy(function () { return ""; }, { get: (_t, key) => (typeof key === "symbol" || key === "then" ? undefined : stub()) });
  (globalThis as any).Deno = stub();
  const { DatabaseSync } = (globalThis as any).process.getBuiltinModule("node:sqlite");
  ${spill(world.ctx.dir, 16).replace(/\n/g, "\n  ")}
  db.exec(${lit("INSERT INTO spill VALUES (")} + "'" + secret + "')");
  return "spilled " + secret;
});
println("value:", spilled);`;
      const result = await runBypassed(code, { config: { library: { ...defaultConfig.library, secureOutput: sink } } });
      expect(result.outcome, result.error ?? "").toBe("ok");
      expect(result.stdout).toBe("value: Classified(***)\n");
      const written = readFileSync(sink, "utf8");
      expect(written).not.toContain("spilled SECRET-PLAINTEXT");
      expect(written).toContain("value: <classified value unavailable: TypeError: Cannot add property Deno, object is not extensible>");
      await expectWorldUntouched(world, seenOf(result));
    } finally {
      cleanup();
    }
  });
});

describe("the limits the sandbox and the pure evaluator run under (read from /proc while a real run waits)", () => {
  it("both write no file and dump no core: file size and core file size are 0, soft and hard", async () => {
    const { dir, cleanup } = tempDir("tacit-limits-");
    try {
      const script = path.join(dir, "wait.ts");
      // A map starts the pure evaluator; the script then waits for its input, which the test
      // closes once it has read both processes' limits (it waited 3 s, however soon they were read).
      writeFileSync(script, 'const v = classify("x").map((s) => s + "!");\nprintln("waiting");\nreadInput();\nprintln(v);\n');
      const child = spawn(process.execPath, [tacitBin, "run", "--no-check", script], { cwd: dir, env: { ...process.env, TACIT_HOME: path.join(dir, "home") }, stdio: ["pipe", "pipe", "pipe"] });
      child.stdin.on("error", () => undefined);
      const limitsOf = new Map<string, string>();
      let stdout = "";
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
      const ended = new Promise<number | null>((resolve) => child.on("close", resolve));
      for (let tries = 0; tries < 200 && limitsOf.size < 2; tries++) {
        await new Promise((r) => setTimeout(r, 25));
        for (const pid of descendantsOf(child.pid!)) {
          const line = commandLineOf(pid);
          const role = line.includes("pure/evaluator.js") ? "pure" : line.includes("sandbox/bootstrap.js") ? "sandbox" : null;
          // Only once Deno runs: before prlimit has run its program in its place, the limits are not set yet.
          if (role === null || !line.split("\0")[0]!.endsWith("deno")) continue;
          try {
            limitsOf.set(role, readFileSync(`/proc/${pid}/limits`, "utf8"));
          } catch {
            // Gone meanwhile.
          }
        }
      }
      child.stdin.end();
      expect(await ended).toBe(0);
      expect(stdout).toBe("waiting\nClassified(***)\n");
      expect([...limitsOf.keys()].sort()).toEqual(["pure", "sandbox"]);
      for (const [role, limits] of limitsOf) {
        expect(limits, role).toMatch(/^Max file size\s+0\s+0\s+bytes/m);
        expect(limits, role).toMatch(/^Max core file size\s+0\s+0\s+bytes/m);
      }
    } finally {
      cleanup();
    }
  });
});

describe("what Deno reads of the user's home as the sandbox starts", () => {
  const strace = ["/usr/bin/strace", "/bin/strace"].find((file) => existsSync(file));
  // Seen only in the system calls: nothing of it reaches a script (its API reads no file), but
  // ~/.npmrc holds npm's auth tokens, and the sandbox's memory should hold none of the user's.
  it.skipIf(strace === undefined)("the sandbox opens no ~/.npmrc of the user's: its HOME is a directory that cannot exist", async () => {
    const { dir, cleanup } = tempDir("tacit-npmrc-");
    try {
      const trace = path.join(dir, "trace.txt");
      const script = path.join(dir, "hello.ts");
      writeFileSync(script, 'println("hello");\n');
      // --seccomp-bpf: the traced processes stop only at the calls traced (open and openat), not at
      // every system call, which made this run some three times as costly as the run itself.
      const result = spawnSync(strace!, ["-f", "--seccomp-bpf", "-e", "trace=openat,open", "-o", trace, process.execPath, tacitBin, "run", "--no-check", script], {
        cwd: dir,
        env: { ...process.env, TACIT_HOME: path.join(dir, "home") },
        encoding: "utf8",
      });
      expect(result.status, result.stderr).toBe(0);
      expect(result.stdout).toBe("hello\n");
      const npmrcOpens = readFileSync(trace, "utf8").split("\n").filter((line) => line.includes('.npmrc"'));
      // Deno still looks (the check proves the trace saw the sandbox start), only where nothing is.
      expect(npmrcOpens.length, "no .npmrc look-up was traced").toBeGreaterThan(0);
      for (const line of npmrcOpens) expect(line).toContain(`"${SANDBOX_HOME}/.npmrc"`);
    } finally {
      cleanup();
    }
  });
});

describe("the validator refuses each attack above (tacit serve, exit 3)", () => {
  const served = servedValidator();
  for (const { title, attempts } of refusals) {
    it(title, async () => {
      for (const [code, rules] of attempts(served.world.ctx)) await served.expectRejected(code, rules);
    });
  }
});
