// The events every action logs (its request, the policy's decision, its result) are written as
// text by encoders (runner/audit/events.ts) rather than as objects made canonical, which cost a
// loop of reads several µs a read. Each must be exactly canonicalJson of the same event, or a
// log would fail to verify; and agent text in them (a path, a refusal) must stay a value, never
// end a string early and add keys. Checked here against canonicalJson with hostile text, and
// through the real CLI: reads of files named to break out of the JSON, a refused read and a read
// through a link, logged by `tacit run --audit-log`, verify, and parse back to the events they were.

import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { canonicalJson } from "../../runner/audit/digest.js";
import { actionResultJson, policyDecisionJson, requestedJson } from "../../runner/audit/events.js";
import { runCli, unchecked } from "../helpers.js";
import { auditHome, readLines, verifyJson, workAndLog } from "./fixtures.js";

/** Text a script controls (a path, a refusal naming it) that would break a template not made with JSON.stringify. */
const HOSTILE = [
  "",
  "plain.txt",
  'a"},"type":"decision","x":{"',
  "back\\slash\\",
  "line\nbreak\r\ttab",
  "\u2028\u2029",
  "\u0000\u001f\u007f\u009b2J",
  "lone \ud800 surrogate \udfff",
  "emoji \u{1F600} é",
  "${evaluation}",
];
const NUMBERS = [0, 1, 7, 12.5, 0.1 + 0.2, 1234.567, 1e21, 2 ** 53 + 2, Number.NaN, Number.POSITIVE_INFINITY];

describe("the encoders equal canonicalJson of the event", () => {
  it("action-requested, with and without realPath, for hostile patterns, paths and evaluations", () => {
    for (const text of HOSTILE) {
      for (const realPath of [null, `/real/${text}`]) {
        const event = { type: "action-requested", evaluation: `ev ${text}`, action: 3, kind: "FsRead", pattern: `fs.read /w/${text}`, tier: "allow", ...(realPath === null ? {} : { realPath }) };
        expect(requestedJson(3, `ev ${text}`, "FsRead", `fs.read /w/${text}`, realPath, "allow")).toBe(canonicalJson(event));
      }
    }
    expect(requestedJson(9, "e", "Print", "print", null, "always-ask")).toBe(canonicalJson({ action: 9, evaluation: "e", kind: "Print", pattern: "print", tier: "always-ask", type: "action-requested" }));
  });

  it("the policy's decision, allow and deny with a hostile reason", () => {
    for (const text of HOSTILE) {
      expect(policyDecisionJson(5, text, null)).toBe(canonicalJson({ type: "decision", evaluation: text, action: 5, decision: "allow", answer: null, via: "policy", reason: null }));
      expect(policyDecisionJson(5, "e", `refused: ${text}`)).toBe(canonicalJson({ type: "decision", evaluation: "e", action: 5, decision: "deny", answer: null, via: "policy", reason: `refused: ${text}` }));
    }
  });

  it("action-result, plain and with each extra, for awkward numbers", () => {
    for (const number of NUMBERS) {
      for (const ok of [true, false]) {
        const plain = { type: "action-result", evaluation: "e", action: number, ok, digest: "sha256:ab", size: number, durationMs: number };
        expect(actionResultJson(number, "sha256:ab", number, "e", ok, number, null)).toBe(canonicalJson(plain));
      }
    }
    const extras = [
      { commandProgress: "killed", redirects: null, requestProgress: null, ranOutOfTime: { limit: "command-timeout", ms: 200 } },
      { commandProgress: null, redirects: ['GET http://x/"}', "GET http://y/"], requestProgress: "answered", ranOutOfTime: null },
      { commandProgress: "not-started", redirects: null, requestProgress: null, ranOutOfTime: null },
    ] as const;
    for (const extra of extras) {
      const event = {
        type: "action-result", evaluation: "e", action: 2, ok: false, digest: "sha256:cd", size: 10, durationMs: 1.5,
        ...(extra.commandProgress === null ? {} : { commandProgress: extra.commandProgress }),
        ...(extra.redirects === null ? {} : { redirects: extra.redirects }),
        ...(extra.requestProgress === null ? {} : { requestProgress: extra.requestProgress }),
        ...(extra.ranOutOfTime === null ? {} : { timeLimitMs: extra.ranOutOfTime.ms, timedOut: extra.ranOutOfTime.limit }),
      };
      expect(actionResultJson(2, "sha256:cd", 1.5, "e", false, 10, { ...extra, redirects: extra.redirects === null ? null : [...extra.redirects] })).toBe(canonicalJson(event));
    }
  });
});

let cleanup: (() => void) | null = null;
afterEach(() => {
  cleanup?.();
  cleanup = null;
});

it("a run's reads of files named to break out of the JSON, a refused read and a read through a link: the log verifies and holds each name as a value", async () => {
  const ctx = auditHome();
  cleanup = ctx.cleanup;
  const { work, log } = workAndLog(ctx.dir);
  // Names a file system takes (no "/" or NUL) that would end a string in a template not made with JSON.stringify.
  const names = ['a"},"type":"decision","x":{"', "b\\\\", "c\nd", "e\u2028\u009b2J", "f ${evaluation}"];
  for (const name of names) writeFileSync(path.join(work, name), `content of ${JSON.stringify(name)}\n`);
  mkdirSync(path.join(ctx.dir, "elsewhere"));
  writeFileSync(path.join(ctx.dir, "elsewhere", "target.txt"), "outside\n");
  mkdirSync(path.join(work, "real"));
  writeFileSync(path.join(work, "real", "inside.txt"), "inside\n");
  symlinkSync(path.join(work, "real"), path.join(work, "link"));
  const script = path.join(ctx.dir, "s.ts");
  writeFileSync(
    script,
    `requestFileSystem(".", (fs) => {\n` +
      `  for (const name of ${JSON.stringify(names)}) println(fs.access(name).read().length);\n` +
      `  println(fs.access("link/inside.txt").read());\n` +
      `  try { fs.access(${JSON.stringify(path.join(ctx.dir, "elsewhere", "target.txt"))}).read(); println("READ OUTSIDE"); } catch (e) { println("refused"); }\n` +
      `});\n`,
  );
  const run = await runCli(unchecked(["run", "--audit-log", log, script]), { cwd: work, env: ctx.env });
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).toContain("refused");
  expect(run.stdout).not.toContain("READ OUTSIDE");

  const verified = await verifyJson(log, ctx.env);
  expect(verified.report.ok, verified.result.stdout).toBe(true);
  expect(verified.report.problems).toEqual([]);

  const events = readLines(log).map((line) => line.event);
  const reads = events.filter((event) => event.type === "action-requested" && event.kind === "FsRead");
  expect(reads).toHaveLength(names.length + 2);
  for (const [i, name] of names.entries()) {
    // The name whole, as the script gave it, and no key beyond a read's own.
    expect(reads[i]!.pattern).toBe(`fs.read ${path.join(work, name)}`);
    expect(Object.keys(reads[i]!).sort()).toEqual(["action", "evaluation", "kind", "pattern", "tier", "type"]);
  }
  const linked = reads[names.length]!;
  expect(linked.pattern).toBe(`fs.read ${path.join(work, "link", "inside.txt")}`);
  expect(linked.realPath).toBe(path.join(work, "real", "inside.txt"));
  // Every read's decision and result carry only their own keys; the refused one says why.
  const decisions = events.filter((event) => event.type === "decision");
  for (const decision of decisions) expect(Object.keys(decision).sort()).toEqual(["action", "answer", "decision", "evaluation", "reason", "type", "via"]);
  const denied = decisions.filter((decision) => decision.decision === "deny");
  expect(denied).toHaveLength(1);
  expect(String(denied[0]!.reason)).toContain("target.txt");
  const results = events.filter((event) => event.type === "action-result");
  for (const result of results) expect(Object.keys(result).sort()).toEqual(["action", "digest", "durationMs", "evaluation", "ok", "size", "type"]);
  expect(results.filter((result) => result.ok === false)).toHaveLength(1);
});
