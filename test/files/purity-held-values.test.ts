// A map function on a Classified value that captures a printer, a capability or a function held
// by a `const` (`const p = println`, `const { access } = fs`, `const box = { fs }`, `const trim =
// (v) => v.trim()`) passed the checks: the same function using `println`, `fs` or a helper declared
// with `function` is refused at check time, naming the identifier. It failed at the call instead
// (a TypeError at run time), after every effect the script had made before it: the file written
// ahead of the map below was there though the script could never have run as written. Now each is
// refused before anything runs (exit 3, [impure-map]), naming the identifier; plain data held by a
// const is still handed over.

import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { realTempDir, tacit, writeTree } from "./fixtures.js";

let root: string;
/** The allowed root the scripts run in; the secure output lies beside it, outside. */
let work: string;
let cleanup: () => void;

beforeAll(() => {
  ({ dir: root, cleanup } = realTempDir("tacit-files-purity-held-"));
  work = path.join(root, "work");
  writeTree(work, { ".env": "TOKEN=held-canary-5c1d\n", "plain.txt": "plain\n" });
});
afterAll(() => cleanup());

/** Each script writes `marker` first, then maps the secret with a function using `identifier`. */
const HELD: Array<{ what: string; identifier: string; declare: string; use: string }> = [
  { what: "println held by a const", identifier: "say", declare: "const say = println;", use: "say(v)" },
  { what: "a name for a name for printf", identifier: "out", declare: "const say = printf; const out = say;", use: "out(v)" },
  { what: "the capability held by a const", identifier: "files", declare: "const files = fs;", use: "files.access(v).exists" },
  { what: "a method taken apart from the capability", identifier: "access", declare: "const { access } = fs;", use: "access(v).exists" },
  { what: "the capability inside an object", identifier: "box", declare: "const box = { fs };", use: "box.fs.access(v).exists" },
  { what: "the capability inside an array", identifier: "held", declare: "const held = [fs];", use: "held[0]!.access(v).exists" },
  { what: "an arrow function held by a const", identifier: "trim", declare: "const trim = (text: string) => text.trim();", use: "trim(v)" },
  { what: "a function expression held by a let never assigned again", identifier: "upper", declare: "let upper = function (text: string) { return text.toUpperCase(); };", use: "upper(v)" },
  { what: "a class held by a const", identifier: "Box", declare: "const Box = class { constructor(readonly text: string) {} };", use: "new Box(v).text" },
];

describe("a classified map function capturing a printer, capability or function held by a const", () => {
  it.each(HELD)("$what is refused at check time, naming it, and nothing runs", async ({ identifier, declare, use }) => {
    const marker = `marker-${identifier}.txt`;
    const script = `requestFileSystem(".", (fs) => {
  fs.access(${JSON.stringify(marker)}).write("ran");
  ${declare}
  const secret = fs.readClassified(".env");
  println(secret.map((v) => ${use}));
});
println("ran");
`;
    const r = await tacit(work, script);
    expect(r.stderr).toMatch(new RegExp(`^script\\.ts:\\d+:\\d+ error \\[impure-map\\] .*\`${identifier}\``, "m"));
    expect(r.code).toBe(3);
    expect(r.stdout).toBe("");
    expect(existsSync(path.join(work, marker))).toBe(false);
  });

  it("plain data held by a const (or read from a file) is still handed over", async () => {
    const sink = path.join(root, "held-sink.txt");
    const script = `requestFileSystem(".", (fs) => {
  const n = 2;
  const table = { a: [1, n] };
  const list = [n, "x"];
  const text = fs.access("plain.txt").read().trim();
  const alias = table;
  const secret = fs.readClassified(".env");
  println(secret.map((v) => v.trim().length + ":" + n + table.a[1] + list[1] + text + alias.a[0]));
});
`;
    const r = await tacit(work, script, ["--secure-output", sink]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("Classified(***)\n");
    expect(readFileSync(sink, "utf8")).toBe("22:22xplain1\n");
  });
});
