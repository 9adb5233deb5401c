// A question shows what the script chose with printable()'s escapes (\u000a for a line feed), and
// showed a backslash as itself: a write to a file named "a\nb" and one to a file named "a\u000ab"
// (a backslash, then "u000a") were asked about in the same words, and a person could not tell which
// a yes was for, nor match the question with `tacit approvals list`, which lists a backslash as \\
// (see list-escapes.test.ts). A question now shows a backslash as \\ too, in the pattern and in the
// path the detail names, as the list does. Through tacit serve, the person answering by elicitation,
// and through tacit run on a terminal.

import { afterEach, expect, it } from "vitest";
import { approvals, onTerminal, serveAsking, worlds } from "./fixtures.js";

const world = worlds("tacit-question-backslash-");
let closing: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

/** The line of a question that starts with `prefix` (after its indent), without the prefix. */
function lineOf(question: string, prefix: string): string {
  const line = question.split("\n").find((l) => l.trimStart().startsWith(prefix));
  expect(line, question).toBeDefined();
  return line!.trimStart().slice(prefix.length);
}

it("writes to a file with a line feed and to one with a backslash and its escape's text are asked in different words, each pattern as approvals list shows it", async () => {
  const w = world();
  const config = w.config([{ action: "fs.write", tier: "approve-once" }]);
  const { client, questions } = await serveAsking(w, ["--config", config], () => true);
  closing.push(() => client.close());
  const code = `requestFileSystem(".", (fs) => { fs.access("a\\nb").write("one"); fs.access("a\\\\u000ab").write("two"); });\n`;
  await client.callTool({ name: "execute_typescript", arguments: { code } });
  expect(questions).toHaveLength(2);
  const [control, spelled] = questions as [string, string];

  // The patterns differ, the backslash shown doubled.
  expect(lineOf(control, "pattern: ")).toBe(`fs.write ${w.at("a\\u000ab")}`);
  expect(lineOf(spelled, "pattern: ")).toBe(`fs.write ${w.at("a\\\\u000ab")}`);
  // And so do the lines that say what is done (the path, then the content as a JSON string).
  expect(lineOf(control, "fs.write ")).toBe(`${w.at("a\\u000ab")}, writing (3 characters): "one"`);
  expect(lineOf(spelled, "fs.write ")).toBe(`${w.at("a\\\\u000ab")}, writing (3 characters): "two"`);

  // Each pattern a person was asked about is a line of approvals list, as it was shown.
  const list = await approvals(w, ["list"]);
  expect(list.code, list.stderr).toBe(0);
  const listed = list.stdout.trimEnd().split("\n").map((line) => line.split("\t")[0]!);
  expect(listed.sort()).toEqual([lineOf(control, "pattern: "), lineOf(spelled, "pattern: ")].sort());
});

it("on a terminal, the question about a file with a backslash in its name shows its pattern as approvals list shows it", async () => {
  const w = world();
  const config = w.config([{ action: "fs.write", tier: "approve-once" }]);
  const script = w.script(`requestFileSystem(".", (fs) => fs.access("a\\\\u000ab").write("two"));\n`);
  const run = await onTerminal(w, ["run", "--config", config, script], { answers: ["y"] });
  expect(run.code, run.all).toBe(0);
  expect(run.prompts).toBe(1);
  const shown = `fs.write ${w.at("a\\\\u000ab")}`;
  expect(lineOf(run.stdout, "pattern: ")).toBe(shown);
  expect(lineOf(run.stdout, "fs.write ")).toBe(`${w.at("a\\\\u000ab")}, writing (3 characters): "two"`);
  const list = await approvals(w, ["list"]);
  expect(list.stdout.split("\t")[0]).toBe(shown);
});
