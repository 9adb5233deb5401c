// The time limit stops while a person is asked: the stub waits, blocked, for each reply, so the
// time is the person's. Code that has the raw channel need not wait: an eleventh security review
// wrote a request a rule asks about straight to the protocol channel and went on computing, and
// the sandbox ran on a core, uncounted, for as long as the person took (up to five minutes a
// question), then the rest of its limit. A sandbox that uses CPU while a person is asked about
// its request now ends, as one does between a session's snippets.

import { expect, it } from "vitest";
import { defaultConfig } from "../../runner/config.js";
import { evaluate } from "../../runner/evaluate.js";
import type { Answer, ApprovalQuestion } from "../../runner/approval/askers.js";
import { createOversight } from "../../runner/approval/oversight.js";
import { lit } from "./fixtures.js";

it("a sandbox that computes while a person is asked about its request is ended; the clock stopped for a person only", async () => {
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
  const result = await evaluate({
    code,
    displayName: "script.ts",
    config,
    input: { kind: "unavailable", reason: "no input in this test" },
    unsafeSkipValidation: true,
    unsafeKeepRuntime: true,
    oversight,
  });
  answer({ answer: "no", via: "test", fromPerson: true });
  expect(questions).toHaveLength(1);
  // The bad thing: it ran, uncounted, until the person answered, and then timed out.
  expect(result.outcome, result.error ?? "").toBe("protocol-error");
  expect(result.error).toContain("CPU time while a person was asked about its request");
});
