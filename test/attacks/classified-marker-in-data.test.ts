// The library marks a Classified value's place in formatted output with a marker the printer
// turns into a classified part. Text from outside (a file, piped input) that holds what looks
// like such a marker must print as written: it used to be taken for one, so its text vanished
// from the output and the host ended the run as a protocol violation (a page or file could
// stop any script that printed it), and a marker naming a value of the run would have printed
// that value's plaintext in its place in the secure output.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { runCli } from "../helpers.js";

const dir = mkdtempSync(path.join(tmpdir(), "tacit-marker-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const canary = "MARKER-CANARY-7d1c";
/** The marker as the library wrote it before it held a word of its own, naming a handle of any shape. */
const planted = (handle: string): string => `\u0000tacit:classified:${handle}\u0000`;

it("a marker in data a script prints is printed as written, and names no value", async () => {
  writeFileSync(path.join(dir, ".env"), `${canary}\n`);
  writeFileSync(path.join(dir, "page.html"), `before ${planted("cAAAAAAAAAAAAAAAAAAAAAAAA")} after\n`);
  const sink = path.join(dir, "..", `${path.basename(dir)}-sink.txt`);
  writeFileSync(
    path.join(dir, "print.ts"),
    `requestFileSystem(".", (fs) => {
  const secret = fs.readClassified(".env");
  // The marker of this very value, learnt while it is formatted, carried through data as a file would carry it.
  let marker = "";
  println({ [Symbol.for("Deno.customInspect")]() { marker = (secret as any)[Symbol.for("Deno.customInspect")](); return "probe"; } });
  const handle = /([A-Za-z0-9_-]+)\\u0000$/.exec(marker)?.[1] ?? "none";
  const page = fs.access("page.html").read();
  println("file:", page.trim());
  console.log("log:", page.trim());
  printf("printf: %s\\n", page.trim());
  println("input:", readInput().trim());
  println("own:", "\\u0000tacit:classified:" + handle + "\\u0000");
  println("end");
});
`,
  );
  const r = await runCli(["run", "--no-check", "--secure-output", sink, "print.ts"], { cwd: dir, input: `piped ${planted("cBBBBBBBBBBBBBBBBBBBBBBBB")} text\n` });
  const secure = readFileSync(sink, "utf8");
  rmSync(sink, { force: true });
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  const line = `before ${planted("cAAAAAAAAAAAAAAAAAAAAAAAA")} after`;
  const lines = r.stdout.split("\n");
  expect(lines).toContain(`file: ${line}`);
  expect(lines).toContain(`log: ${line}`);
  expect(lines).toContain(`printf: ${line}`);
  expect(lines).toContain(`input: piped ${planted("cBBBBBBBBBBBBBBBBBBBBBBBB")} text`);
  expect(lines.find((l) => l.startsWith("own: "))).toMatch(/^own: \u0000tacit:classified:c[A-Za-z0-9_-]+\u0000$/);
  expect(lines.at(-2)).toBe("end");
  expect(r.stdout).not.toContain(canary);
  // The secure output got what was printed, as printed: no value's plaintext in a marker's place.
  expect(secure).toContain(`file: ${line}\n`);
  expect(secure).not.toContain(canary);
});
