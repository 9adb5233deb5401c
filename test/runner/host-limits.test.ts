// Limits on the host's own work, through the real CLI: a killed evaluation stops its host-side
// work at once (classified jobs, requests waiting on them, a readInput() on a pipe that never
// ends), and the classified store holds a bounded amount of plaintext, refusing visibly only
// what the agent can tell about by itself.

import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { expectNoneLeft, runScript, tacitBin, tempDir, unchecked } from "../helpers.js";
import { commandLineOf, descendantsOf } from "../processes.js";
import { CLASSIFIED_PRINTED_NOWHERE } from "../../runner/monitor.js";

/**
 * The runs' time limit. What a run must do before it (start its sandbox, reach the wait) is
 * asserted each time (a line printed, a file made, the "waiting in readInput()" in the message),
 * so a limit too short fails the test rather than passing it for nothing. The clock starts when
 * the script is sent, while the sandbox may still be booting: 1.5 s passed at load 16 but left
 * CI (one run, two workers, often load 15-20) too little margin for a failure that loses it.
 */
const LIMIT_MS = 3000;
/** Generous: the run must end near its limit, not after the work it abandoned (about 48 s here). */

let base: string;
/** Where scripts run (the allowed root); the secure sinks lie outside it, in `base`. */
let dir: string;
let cleanup: () => void;
beforeAll(() => {
  ({ dir: base, cleanup } = tempDir("tacit-host-limits-"));
  dir = path.join(base, "work");
  mkdirSync(dir);
});
afterAll(() => cleanup());

interface TimedRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The CLI process's peak resident memory (VmHWM), last seen while it ran; null where /proc is missing. */
  peakRssKb: number | null;
  /**
   * The processes of this run (the CLI and its descendants), by pid, with their command lines,
   * seen while it ran. Only its own, not all of this file's (helpers.ts watchProcesses): the
   * tests that look at them run concurrently, and another test's are not this run's leftovers.
   */
  seen: Map<number, string>;
}

/**
 * `tacit run <args>` in `dir`; `stdin` is written and closed, or with "held open" never
 * closed while tacit runs (a producer that has not finished).
 */
function timedRun(args: string[], stdin: string | "held open", onTestFinished: TestContext["onTestFinished"]): Promise<TimedRun> {
  return new Promise((resolve, reject) => {
    // Unchecked: these tests are of the host's work, not of the check, whose time counts
    // against the same limit (at load ~27 the check of reads-all.ts alone passed the 3 s limit:
    // exit 3, check-time-limit, where the test waited for the script's own outcome).
    const child = spawn(process.execPath, [tacitBin, ...unchecked(["run", ...args])], { cwd: dir, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let peakRssKb: number | null = null;
    const seen = new Map<number, string>();
    const look = (): void => {
      if (child.pid === undefined) return;
      // Read again each time: a child seen between its fork and its exec still has its parent's.
      for (const pid of [child.pid, ...descendantsOf(child.pid)]) {
        const line = commandLineOf(pid).replace(/\0/g, " ");
        if (line !== "" || !seen.has(pid)) seen.set(pid, line);
      }
    };
    look();
    const poll = setInterval(look, 20);
    const status = `/proc/${child.pid}/status`;
    const watch = setInterval(() => {
      try {
        const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(status, "utf8"));
        if (hwm) peakRssKb = Number(hwm[1]);
      } catch {
        // Gone, or no /proc here.
      }
    }, 50);
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      clearInterval(watch);
      clearInterval(poll);
      resolve({ code, stdout, stderr, peakRssKb, seen });
    });
    child.stdin.on("error", () => undefined);
    if (stdin === "held open") child.once("close", () => child.stdin.destroy());
    else child.stdin.end(stdin);
    // A run that waits past the test's timeout (what these tests catch) ends with the test (the
    // test's own onTestFinished: the file's tests run concurrently, see below).
    onTestFinished(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    });
  });
}

function script(name: string, code: string): string {
  writeFileSync(path.join(dir, name), code);
  return name;
}

/**
 * Fifteen maps of about 4.8 s each in the pure evaluator (each job may take 5 s): about 72 s of
 * work, more than the 60 s the tests below are given. No clock in the tests: a run that waited
 * for this work cannot end in time, and the vitest timeout fails it. Each map waits
 * (Atomics.wait) rather than spins: a job under way all the same, without a core.
 */
const SLOW_CHAIN = `
let value = classify("x");
for (let i = 0; i < 15; i++) value = value.map((s) => { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 4800); return s; });
`;

// Concurrent: each test mostly waits for its run's time limit, with scripts and files of its own.
describe.concurrent("a killed evaluation stops its host-side work", () => {
  it("a request waiting on slow classified work: 124 at the limit, not after the work it waits on", async ({ onTestFinished }) => {
    // The request needs the value (its body) before anything is sent; port 9 is never reached.
    const name = script(
      "waits.ts",
      `${SLOW_CHAIN}\nprintln("waiting");\nrequestNetwork(["127.0.0.1:9"], (net) => net.httpPostClassified("http://127.0.0.1:9/", value));\n`,
    );
    const r = await timedRun(["--exec-timeout-ms", String(LIMIT_MS), "--network-permissions", "127.0.0.1:9", name], "", onTestFinished);
    expect(r.stdout).toBe("waiting\n");
    expect(r.stderr).toContain(`timed out: the script ran longer than ${LIMIT_MS} ms`);
    expect(r.code).toBe(124);
    // The pure evaluator, busy with the rest of the chain, did not outlive tacit either.
    expectNoneLeft(r.seen, "evaluator.js");
  }, 60_000);

  it("pending classified writes of slow values: 124 at the limit, not after the work, the file left empty", async ({ onTestFinished }) => {
    // Then held until the limit: blocked (Atomics.wait, no timeout) as a spin would hold it, without a core.
    const name = script("writes.ts", `${SLOW_CHAIN}\nrequestFileSystem(".", (fs) => fs.writeClassified(".env.out", value));\nAtomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);\n`);
    const r = await timedRun(["--exec-timeout-ms", String(LIMIT_MS), name], "", onTestFinished);
    expect(r.code).toBe(124);
    expect(r.stderr).toContain(`timed out: the script ran longer than ${LIMIT_MS} ms`);
    expectNoneLeft(r.seen, "evaluator.js");
    expect(readFileSync(path.join(dir, ".env.out"), "utf8")).toBe("");
  }, 60_000);

  it("readInput() on a pipe its producer keeps open: 124 at the limit, not after the work it waits on", async ({ onTestFinished }) => {
    const name = script("reads.ts", "println(readInput().length);\n");
    // The pipe is never closed while tacit runs: a run that waited for it would never end (the
    // vitest timeout fails the test); the bound on its time guarded only against that.
    const r = await timedRun(["--exec-timeout-ms", String(LIMIT_MS), name], "held open", onTestFinished);
    // The limit came while readInput() waited, not before the script reached it.
    expect(r.stderr).toContain(`timed out: the script ran longer than ${LIMIT_MS} ms, and when the limit came it was waiting in readInput()`);
    expect(r.code).toBe(124);
    expectNoneLeft(r.seen, "bootstrap.js");
  }, 30_000);

  it("readInput() still reads a pipe that does end", async ({ onTestFinished }) => {
    const name = script("reads-all.ts", "println(readInput().length);\n");
    const r = await timedRun(["--exec-timeout-ms", String(LIMIT_MS), name], "12345", onTestFinished);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("5\n");
    expect(r.code).toBe(0);
  });
});

describe("values nested deeper than the host can stringify", () => {
  it("a frame that carries one ends the evaluation with a protocol violation, not the host with a stack overflow", async () => {
    // The script replaces its JSON.stringify, so that the map's captured marker goes out nested
    // 200,000 deep: the host crashed stringifying the job for the pure evaluator (an unhandled
    // rejection, which takes `tacit serve` down with every session).
    const r = await runScript(
      `const deep = "[".repeat(200000) + "]".repeat(200000);
const real = JSON.stringify;
(JSON as { stringify: unknown }).stringify = (x: unknown) => {
  const s = real(x);
  return typeof s === "string" && s.includes('"DEEPME"') ? s.replace('"DEEPME"', deep) : s;
};
const marker = "DEEPME";
println(classify("x").map((v) => v + marker));
`,
      ["--no-check"],
      { cwd: dir },
    );
    expect(r.stderr).not.toContain("Maximum call stack");
    expect(r.stderr).toContain("the sandbox sent a frame nested deeper than 1000 levels");
    expect(r.code).toBe(1);
  });
});

describe("plain data for classify() and a map's captures", () => {
  it("deep data is taken up to the host's depth and refused past it with what to do; data shared between branches is taken; a cycle, undefined and a Map are named", async () => {
    // Checked by recursion, 5,000 levels overflowed the sandbox's stack (a bare RangeError), and
    // an object on two branches ([a, a]) was refused as "not a Array".
    const r = await runScript(
      `const nest = (n: number): unknown => { let v: unknown = "leaf"; for (let i = 0; i < n; i++) v = [v]; return v; };
const attempt = (label: string, f: () => unknown) => { try { println(label, String(f())); } catch (e) { println(label, String(e)); } };
attempt("990 deep", () => classify(nest(990)).map((x) => JSON.stringify(x).length));
const captured = nest(985);
attempt("captured 985 deep", () => classify("x").map((v) => v + JSON.stringify(captured).length));
attempt("5,000 deep", () => classify(nest(5000)));
const deeper = nest(5000);
attempt("captured 5,000 deep", () => classify("x").map((v) => v + JSON.stringify(deeper).length));
const a = { x: 1 };
attempt("shared", () => classify([a, a]).map((v) => JSON.stringify(v)));
const cycle: unknown[] = [];
cycle.push(cycle);
attempt("cycle", () => classify(cycle));
attempt("undefined", () => classify([undefined]));
attempt("map", () => classify({ m: new Map() }));
`,
      ["--no-check"],
      { cwd: dir },
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines).toEqual([
      "990 deep Classified(***)",
      "captured 985 deep Classified(***)",
      "5,000 deep TypeError: classify(value): value must be plain data (strings, numbers, arrays, objects), not a value nested more than 990 levels deep (the most the host takes: flatten it, or classify its parts)",
      expect.stringMatching(/^captured 5,000 deep TypeError: map\/flatMap: the function uses `deeper`, which is or holds a value nested more than 990 levels deep .*a map function runs in a pure evaluator/),
      "shared Classified(***)",
      "cycle TypeError: classify(value): value must be plain data (strings, numbers, arrays, objects), not a value that contains itself (JSON cannot hold a cycle)",
      "undefined TypeError: classify(value): value must be plain data (strings, numbers, arrays, objects), not undefined (JSON has no undefined: use null)",
      "map TypeError: classify(value): value must be plain data (strings, numbers, arrays, objects), not a Map",
    ]);
  });
});

describe("calls too large for one frame", () => {
  it("fail in the script, catchably, saying what to do; nothing is sent, and the evaluation goes on", async () => {
    // Sent, each ended the evaluation as a protocol violation the script could not catch and that
    // named no call: a write of 200 MB, exec input of 5 MB.
    const r = await runScript(
      `const big = "y".repeat(5_000_000);
const attempt = (label: string, f: () => unknown) => { try { println(label, String(f())); } catch (e) { println(label, (e as Error).name, (e as Error).message); } };
requestFileSystem(".", (fs) => {
  attempt("write", () => fs.access("big.txt").write(big));
  attempt("append", () => fs.access("big.txt").append(big));
  attempt("exists", () => fs.access("big.txt").exists);
  attempt("in parts", () => { fs.access("parts.txt").write(big.slice(0, 2_500_000)); fs.access("parts.txt").append(big.slice(2_500_000)); return fs.access("parts.txt").size; });
});
requestExecPermission(["cat"], (p) => attempt("exec input", () => p.exec("cat", [], { input: big }).stdout.length));
attempt("classify", () => classify(big));
println("went on");
`,
      ["--no-check", "--command-permissions", "cat"],
      { cwd: dir },
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    const limit = "more than the 4194304 one call carries to the host; nothing was sent. Instead, ";
    expect(lines[0]).toMatch(new RegExp(`^write Error .*big\\.txt: write\\(\\) of 5000000 characters would be 50001\\d\\d characters as sent .*${limit}write the content in parts: write\\(\\) the first, then append\\(\\) each of the others\\.$`));
    expect(lines[1]).toMatch(/^append Error .*big\.txt: append\(\) of 5000000 characters/);
    expect(lines[2]).toBe("exists false");
    expect(lines[3]).toBe("in parts 5000000");
    expect(lines[4]).toMatch(new RegExp(`^exec input Error exec\\("cat"\\): its arguments and input would be .*${limit}write large input to a file`));
    expect(lines[5]).toMatch(new RegExp(`^classify Error classify\\(value\\): the value would be .*${limit}classify it in parts, or write it to a file and read it with readClassified\\(\\)\\.$`));
    expect(lines[6]).toBe("went on");
    expect(existsSync(path.join(dir, "big.txt"))).toBe(false);
  }, 60_000);

  it("arguments past what the host takes in one action fail in the script, naming the argument, instead of ending the evaluation", async () => {
    // Sent, each ended the evaluation as a protocol violation (the host's frame schemas refuse them).
    const r = await runScript(
      `const attempt = (label: string, f: () => unknown) => { try { println(label, String(f())); } catch (e) { println(label, (e as Error).name, (e as Error).message); } };
requestFileSystem(".", (fs) => {
  attempt("path", () => fs.access("d/".repeat(3000) + "f.txt").write("x"));
  attempt("nul", () => fs.access("a\u0000b").read());
  attempt("glob", () => fs.find(".", "*".repeat(5000)));
  attempt("pattern", () => fs.grep(".", Array.from({ length: 20000 }, (_, i) => "w" + i).join("|")));
});
attempt("hosts", () => requestNetwork(Array.from({ length: 1001 }, (_, i) => "h" + i + ".example"), () => "opened"));
requestExecPermission(["true"], (p) => attempt("arguments", () => p.exec("true", Array.from({ length: 100_001 }, () => "a")).exitCode));
println("went on");
`,
      ["--no-check", "--command-permissions", "true", "--network-permissions", "*.example"],
      { cwd: dir },
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^path Error the path ".*\/d\/d\/d…" is 60\d\d characters, more than the 4096 the host takes; nothing was sent\. Use a shorter path/);
    expect(lines[1]).toMatch(/^nul Error the path ".*a\\u0000b" holds a NUL character, which no path can; nothing was sent\.$/);
    expect(lines[2]).toMatch(/^glob Error the glob "\*+…" is 5000 characters, more than the 4096 the host takes; nothing was sent\. Use a shorter glob\.$/);
    expect(lines[3]).toMatch(/^pattern Error the pattern "w0\|w1.*" is \d+ characters, more than the 65536 the host takes; nothing was sent\. Use a shorter pattern/);
    expect(lines[4]).toBe("hosts Error 1001 hosts are more than the 1000 the host takes in one call; nothing was sent. Ask for fewer hosts in one scope.");
    expect(lines[5]).toMatch(/^arguments Error 100001 arguments are more than the 100000 the host takes in one call; nothing was sent\. Pass fewer at once/);
    expect(lines[6]).toBe("went on");
    expect(existsSync(path.join(dir, "d"))).toBe(false);
  }, 60_000);

  it("an error whose message is longer than a frame is reported, cut, not as a protocol violation", async () => {
    const r = await runScript('throw new Error("x".repeat(3_000_000) + "END");\n', ["--no-check"], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).not.toContain("protocol violation");
    expect(r.stderr).toMatch(/^Error: x{1000}/);
    expect(r.stderr).toMatch(/… \(\d+ more characters not shown\)/);
    expect(r.stderr.length).toBeLessThan(1_000_000);
  }, 60_000);
});

describe("the classified store's plaintext limit", () => {
  it("a loop of classify(big) ends with a refusal that says why, and the host stays bounded", async ({ onTestFinished }) => {
    // The default limit (256 MiB): without it this loop grows the host until it dies.
    const name = script(
      "classify-loop.ts",
      'const big = "x".repeat(1024 * 1024);\nlet n = 0;\nfor (;;) { classify(big + n); n++; }\n',
    );
    const r = await timedRun(["--exec-timeout-ms", "60000", name], "", onTestFinished);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("classify(): refused a value of about 2.0 MiB");
    expect(r.stderr).toContain("of the 256.0 MiB the host keeps for classified values");
    expect(r.stderr).toContain('config "classifiedStoreLimitBytes"');
    if (existsSync("/proc/self/status")) {
      expect(r.peakRssKb).not.toBeNull();
      expect(r.peakRssKb!).toBeLessThan(1024 * 1024); // 1 GiB: 256 MiB held, plus Node and frames in flight
    }
  }, 90_000);

  it("the refusal is an Error a script can catch, and goes on", async () => {
    const config = path.join(dir, "small-store.json");
    writeFileSync(config, JSON.stringify({ classifiedStoreLimitBytes: 1024 * 1024 }));
    const r = await runScript(
      'const big = "x".repeat(300_000);\nlet n = 0;\ntry { for (;;) { classify(big + n); n++; } } catch (e) { println(n, (e as Error).name); }\nprintln(classify("small"));\n',
      ["--no-check", "--config", config],
      { cwd: dir },
    );
    // The one word on stderr: a Classified value printed with no secure output set.
    expect(r.stderr).toBe(`tacit: warning: ${CLASSIFIED_PRINTED_NOWHERE}\n`);
    expect(r.stdout).toBe("1 Error\nClassified(***)\n");
    expect(r.code).toBe(0);
  });

  it("a classified file past what readClassified() reads is unavailable with words that do not send its reader to forEachLine", async () => {
    const secretDir = path.join(base, "big-secret");
    mkdirSync(secretDir, { recursive: true });
    writeFileSync(path.join(secretDir, "key.txt"), "k".repeat(33 * 1024 * 1024));
    const sink = path.join(base, "big-secret.log");
    const r = await runScript(
      `requestFileSystem(${JSON.stringify(secretDir)}, (fs) => println("value:", fs.readClassified("key.txt").map((s) => s.length)));\n`,
      ["--no-check", "--allowed-roots", `${dir},${secretDir}`, "--classified-paths", `${secretDir}/**`, "--secure-output", sink, "--quiet"],
      { cwd: dir },
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("value: Classified(***)\n");
    const text = readFileSync(sink, "utf8");
    expect(text).toContain(`key.txt: ${33 * 1024 * 1024} bytes is more than readClassified() reads into one value (33554432); a classified file this large cannot be read`);
    expect(text).not.toContain("forEachLine");
  }, 60_000);

  it("a map over a 40 MB value is read by the evaluator in one pass, well within its time limit", async () => {
    // The evaluator appended each 64 KiB of a job to one string and searched it again for the
    // line's end: quadratic, 3 s for a 27 MB value, and a map of 40 MB failed at the 5 s limit.
    const sink = path.join(base, "big-map.log");
    // One map over the 40 MB value for its length and last characters, not one for each: a job of
    // 40 MB read in one pass is what is tested, and each such job cost about 0.4 s of CPU.
    const r = await runScript(
      'const big = classify("x").map((s) => s.repeat(40_000_000));\nprintln("length:", big.map((s) => `${s.length} ${s.slice(-3)}`));\n',
      ["--no-check", "--secure-output", sink],
      { cwd: dir },
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("length: Classified(***)\n");
    expect(r.code).toBe(0);
    expect(readFileSync(sink, "utf8")).toBe("length: 40000000 xxx\n");
  }, 60_000);

  it("a computed value over the limit fails out of sight, and classify() is never refused because of it (no oracle)", async () => {
    const config = path.join(dir, "one-mib-store.json");
    writeFileSync(config, JSON.stringify({ classifiedStoreLimitBytes: 1024 * 1024 }));
    // The first value's size stands for one that depends on a secret: whether it fits, and
    // whether the classify() after it is then kept, must look the same to the script.
    const run = (repeat: number, sink: string) =>
      runScript(
        `const v = classify("ab").map((s) => s.repeat(${repeat}));\n` +
          // The map has finished by now (waited on a timer: a busy loop here spun a core for the 1.5 s, in each of three runs).
          "await new Promise((resolve) => setTimeout(resolve, 1500));\n" +
          'const w = classify("z".repeat(200_000));\n' +
          'println("values:", v, w);\n',
        ["--no-check", "--config", config, "--secure-output", sink],
        { cwd: dir },
      );
    const fitsSink = path.join(base, "fits.log");
    const overSink = path.join(base, "over.log");
    const fillsSink = path.join(base, "fills.log");
    // Three runs of their own (a store each), at once: each mostly waits on its timer.
    const [fits, over, fills] = await Promise.all([
      run(10, fitsSink),
      run(1_000_000, overSink), // 4 MB of UTF-16: more than the whole store
      run(230_000, fillsSink), // about 0.9 MiB: fits, and leaves no room for w
    ]);
    for (const r of [fits, over, fills]) {
      expect(r.stderr).toBe("");
      expect(r.stdout).toBe("values: Classified(***) Classified(***)\n");
      expect(r.code).toBe(0);
    }
    expect(readFileSync(fitsSink, "utf8")).toBe(`values: ${"ab".repeat(10)} ${"z".repeat(200_000)}\n`);
    const overText = readFileSync(overSink, "utf8");
    expect(overText).toContain("<classified value unavailable: map: not kept: the classified values of this evaluation or session already fill the 1 MiB");
    expect(overText).toContain(` ${"z".repeat(200_000)}\n`);
    const fillsText = readFileSync(fillsSink, "utf8");
    expect(fillsText).toContain(`values: ${"ab".repeat(230_000)} <classified value unavailable: classify(): not kept:`);
  }, 60_000);

  it("a map's reply longer than the store could keep is not read to its end: the map fails out of sight, and the next one works", async () => {
    // A map function decides how long its reply is: read up to the frame limit (256 Mi
    // characters) whatever the store could keep, several at once could take tacit serve
    // toward running out of memory at a time the plaintext decides. A reply of 5,000,000
    // characters is past what the host reads here (about 3.2 million): read whole, it would be
    // refused as "not kept", which the test tells apart.
    const config = path.join(dir, "one-mib-store-reply.json");
    writeFileSync(config, JSON.stringify({ classifiedStoreLimitBytes: 1024 * 1024 }));
    const sink = path.join(base, "long-reply.log");
    const r = await runScript(
      'const big = classify("x").map((s) => s.repeat(5_000_000));\nconst small = classify("ab").map((s) => s + "!");\nprintln("values:", big, small);\n',
      ["--no-check", "--config", config, "--secure-output", sink],
      { cwd: dir },
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("values: Classified(***) Classified(***)\n");
    expect(r.code).toBe(0);
    const text = readFileSync(sink, "utf8");
    // 64 Ki characters and three for each byte the 1 MiB store has left (classify() took 6);
    // not "not kept" after reading it whole.
    expect(text).toContain(
      `values: <classified value unavailable: the evaluator's reply was longer than the ${64 * 1024 + 3 * (1024 * 1024 - 6)} characters the host reads of one`,
    );
    expect(text).toContain(" ab!\n");
    expect(text).not.toContain("not kept");
  }, 60_000);
});
