// A map result that holds a lone surrogate (half of a UTF-16 pair, which UTF-8 cannot encode)
// was written by writeClassified as U+FFFD (EF BF BD), without a word: the file held other text
// than the value, and a lone surrogate made from the secret ("\uD800" after its first half of a
// pair, say) was silently replaced. The write now fails out of sight, as a value that could not
// be computed does: the file is left empty, the reason goes to the secure output, and the
// script sees nothing of it (its output is the same as for a good value).

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { makeCanary, realTempDir, tacit } from "./fixtures.js";

let root: string;
let work: string;
let cleanup: () => void;
const canary = makeCanary();

beforeAll(() => {
  ({ dir: root, cleanup } = realTempDir("tacit-classified-lone-surrogate-"));
  work = path.join(root, "work");
  mkdirSync(work);
  writeFileSync(path.join(work, ".env"), `TOKEN=${canary}`);
});
afterAll(() => cleanup());

const SCRIPT = `requestFileSystem(".", (fs) => {
  const secret = fs.readClassified(".env");
  fs.writeClassified(".env.high", secret.map((v) => v + "\\uD800"));
  fs.writeClassified(".env.low", secret.map((v) => "\\uDC00" + v));
  fs.writeClassified(".env.pair", secret.map((v) => v + "\\uD834\\uDD1E"));
  fs.writeClassified(".env.good", secret.map((v) => v + "!"));
  println("written");
});
`;

it("writeClassified of a value holding a lone surrogate writes nothing of it, noted in the secure output only", async () => {
  const sink = path.join(root, "sink.txt");
  const r = await tacit(work, SCRIPT, ["--secure-output", sink], { TACIT_HOME: path.join(root, "home") });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toBe("written\n");
  expect(r.stdout + r.stderr).not.toContain(canary);
  // A well-formed pair is a character: written as its four bytes.
  expect(readFileSync(path.join(work, ".env.pair"), "utf8")).toBe(`TOKEN=${canary}\u{1D11E}`);
  expect(readFileSync(path.join(work, ".env.good"), "utf8")).toBe(`TOKEN=${canary}!`);
  for (const name of [".env.high", ".env.low"]) {
    const bytes = readFileSync(path.join(work, name));
    // Not the value with U+FFFD in the surrogate's place: nothing at all.
    expect(bytes.includes(Buffer.from([0xef, 0xbf, 0xbd])), `${name} holds U+FFFD`).toBe(false);
    expect(bytes.length, `${name} holds ${JSON.stringify(bytes.toString("utf8"))}`).toBe(0);
    expect(readFileSync(sink, "utf8")).toContain(`${path.join(work, name)}: writeClassified() wrote nothing: the value holds a lone surrogate`);
  }
}, 60_000);
