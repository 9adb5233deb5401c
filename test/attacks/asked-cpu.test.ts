// The time limit stops while a person is asked: the stub waits, blocked, for each reply, so the
// time is the person's. Code that has the raw channel need not wait: an eleventh security review
// wrote a request a rule asks about straight to the protocol channel and went on computing, and
// the sandbox ran on a core, uncounted, for as long as the person took (up to five minutes a
// question), then the rest of its limit. A sandbox that uses CPU while a person is asked about
// its request now ends, as one does between a session's snippets.

import { once } from "node:events";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { expect, it } from "vitest";
import { defaultConfig } from "../../runner/config.js";
import { evaluate } from "../../runner/evaluate.js";
import type { Answer, ApprovalQuestion } from "../../runner/approval/askers.js";
import { createOversight } from "../../runner/approval/oversight.js";
import { pureEvaluatorPath } from "../../runner/paths.js";
import { childrenOf, commandLineOf, cpuMsOf, descendantsOf } from "../processes.js";
import { runBypassed, tempDir } from "../helpers.js";
import { lit } from "./fixtures.js";

// The three run together (it.concurrent): each mostly waits for its person, who takes a fixed
// time, with its own oversight, server and sandbox. The first counts the CPU of every pure
// evaluator this process has; the other two start none (a pure evaluator starts at a map's
// request, and neither maps: a raw frame, and chats, which the host asks of the model itself),
// so only its own are counted (by the evaluator's script: a sandbox is not one). The others'
// sandboxes read no processes.
it.concurrent("the pure evaluator computes nothing while a person is asked, and goes on after the answer", async () => {
  // Map functions run in the pure evaluator while the script goes on, and no limit counted
  // them while a person was asked: a twelfth security review queued maps before a request a
  // rule always asks about, and the evaluator used 5.6 s of CPU during a 6 s question (the
  // time limit is 3 s), up to five minutes a question. It is now stopped while a person is
  // asked, its limits paused, and a map stopped in the middle still gives its value after.
  const { dir, cleanup } = tempDir("tacit-pure-asked-");
  try {
    const sink = path.join(dir, "secure-output.txt");
    const config = {
      ...defaultConfig,
      typeCheck: false,
      executionTimeoutMs: 3000,
      library: { ...defaultConfig.library, secureOutput: sink },
      policy: { rules: [{ action: "fs.open" as const, tier: "always-ask" as const }] },
    };
    let cpuWhileAsked = -1;
    const oversight = await createOversight(config, process.cwd(), {
      ask: () => {
        // Every pure evaluator of this process: CPU used from when it is first seen in the question.
        // Its Deno and what runs it, not only the child tacit spawned: where the sandbox has
        // namespaces that child is unshare, whose own CPU stays at 0 whatever Deno under it does.
        // Found by the evaluator's script: every sandbox's unshare names dist/pure too (its mount
        // setup hides it), and the second test's sandbox spins through its own question.
        const seen = new Map<number, { first: number; last: number }>();
        const sample = (): void => {
          for (const child of childrenOf(process.pid).filter((child) => commandLineOf(child).includes(pureEvaluatorPath))) {
            for (const pid of [child, ...descendantsOf(child)]) {
              const cpu = cpuMsOf(pid);
              if (cpu !== null) seen.set(pid, { first: seen.get(pid)?.first ?? cpu, last: cpu });
            }
          }
        };
        sample();
        const sampler = setInterval(sample, 100);
        return new Promise<Answer>((resolve) =>
          setTimeout(() => {
            clearInterval(sampler);
            sample();
            cpuWhileAsked = [...seen.values()].reduce((sum, { first, last }) => sum + last - first, 0);
            resolve({ answer: "no", via: "test", fromPerson: true });
          }, 6000),
        );
      },
    });
    const code = `
const value = classify("PURE");
const slow = value.map((x) => { let n = 0; for (let i = 0; i < 3e8; i++) n += i & 1; return n > 0 ? x + "-COMPUTED" : x; });
for (let i = 0; i < 2; i++) value.map(() => { for (;;) {} });
try { requestFileSystem(".", () => {}); } catch { println("refused"); }
println(slow);
`;
    const result = await evaluate({ code, displayName: "script.ts", config, input: { kind: "unavailable", reason: "no input in this test" }, oversight });
    expect(result.outcome, result.error ?? "").toBe("ok");
    expect(result.stdout).toBe("refused\nClassified(***)\n");
    // The bad thing: the functions ran through the question (seconds of CPU, past the time limit).
    expect(cpuWhileAsked).toBeGreaterThanOrEqual(0);
    expect(cpuWhileAsked).toBeLessThan(1000);
    // The map stopped during the question was not ended by its own 5 s limit.
    expect(readFileSync(sink, "utf8")).toContain("refused\nPURE-COMPUTED\n");
  } finally {
    cleanup();
  }
}, 30_000);

it.concurrent("a sandbox that computes while a person is asked about its request is ended; the clock stopped for a person only", async () => {
  const config = { ...defaultConfig, typeCheck: false, executionTimeoutMs: 3000, policy: { rules: [{ action: "fs.open" as const, tier: "always-ask" as const }] } };
  const questions: ApprovalQuestion[] = [];
  let answer: (answer: Answer) => void = () => undefined;
  const oversight = await createOversight(config, process.cwd(), {
    ask: (question) => {
      questions.push(question);
      // The person takes their time (bounded here, so that the test ends either way).
      return new Promise<Answer>((resolve) => {
        answer = resolve;
        setTimeout(() => resolve({ answer: "no", via: "test", fromPerson: true }), 8000);
      });
    },
  });
  const frame = JSON.stringify({ type: "request", id: 1, action: { kind: "FsOpenScope", root: "." } }) + "\n";
  const code = `Deno.stdout.writeSync(new TextEncoder().encode(${lit(frame)}));\nfor (;;) {}\n`;
  const result = await runBypassed(code, { config, keepRuntime: true, oversight });
  answer({ answer: "no", via: "test", fromPerson: true });
  expect(questions).toHaveLength(1);
  // The bad thing: it ran, uncounted, until the person answered, and then timed out.
  expect(result.outcome, result.error ?? "").toBe("protocol-error");
  expect(result.error).toContain("CPU time while a person was asked about its request");
});

it.concurrent("no classified chat waiting for its turn is asked of the model while a person is asked", async () => {
  // Classified chats are asked of the operator's model in the background, a few at a time, and
  // the time limit bounds how many: while a person was asked (the clock stopped), the queue went
  // on. A twelfth security review queued 40 chats behind a question of 4 s, under a 3 s limit,
  // and the model (200 ms an answer) was asked 36 of them during the question (the other four
  // were under way before it): each one billed, and a question may wait five minutes. Those already under way finish; no other starts.
  let asked = 0;
  let askedDuringQuestion = -1;
  const model = createServer((request, response) => {
    asked++;
    request.resume();
    const timer = setTimeout(() => {
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ choices: [{ message: { role: "assistant", content: "answer" } }] }));
    }, 200);
    response.on("close", () => clearTimeout(timer));
  });
  model.listen(0, "127.0.0.1");
  await once(model, "listening");
  try {
    const config = {
      ...defaultConfig,
      typeCheck: false,
      executionTimeoutMs: 3000,
      library: { ...defaultConfig.library, llm: { baseUrl: `http://127.0.0.1:${(model.address() as AddressInfo).port}/v1`, apiKey: "k", model: "m" } },
      policy: { rules: [{ action: "fs.open" as const, tier: "always-ask" as const }] },
    };
    const oversight = await createOversight(config, process.cwd(), {
      ask: () => {
        const before = asked;
        return new Promise<Answer>((resolve) =>
          setTimeout(() => {
            askedDuringQuestion = asked - before;
            resolve({ answer: "no", via: "test", fromPerson: true });
          }, 4000),
        );
      },
    });
    const code = `
const secret = classify("question");
for (let i = 0; i < 40; i++) chat(secret);
try { requestFileSystem(".", () => {}); } catch { println("refused"); }
`;
    const result = await evaluate({ code, displayName: "script.ts", config, input: { kind: "unavailable", reason: "no input in this test" }, oversight });
    expect(result.outcome, result.error ?? "").toBe("ok");
    expect(result.stdout).toBe("refused\n");
    // At most those under way when the question came (CLASSIFIED_CHATS_AT_ONCE); 36 without the change.
    expect(askedDuringQuestion).toBeGreaterThanOrEqual(0);
    expect(askedDuringQuestion).toBeLessThanOrEqual(4);
  } finally {
    model.closeAllConnections();
    model.close();
  }
}, 30_000);
