// What a map function gives back that is no JSON value (a function or a Symbol, which JSON has
// no text for and the evaluator keeps as null; a BigInt, a cycle, a Proxy or getter that throws
// the secret, a toJSON that throws it, which fail), or what it throws that cannot be read as text
// (an error whose name getter throws, an object without a prototype, a captured Classified value:
// each ended the evaluator in its own error report): nothing of the secret in what the script is
// shown, each failure's file left empty and said in the secure output only, the evaluator still
// up, and the map after them computes as usual.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { runCli } from "../helpers.js";

const dir = mkdtempSync(path.join(tmpdir(), "tacit-map-kinds-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const canary = "KINDS-CANARY-41f9";

/**
 * Function sources, each given the secret `s` (the map is reached through `any`, so the checks do
 * not see a Classified value), and what the file written with its value holds.
 */
const KINDS: Record<string, { source: string; written: string }> = {
  function: { source: "(s) => () => s", written: "null" },
  symbol: { source: "(s) => Symbol(s)", written: "null" },
  bigint: { source: "(s) => BigInt(s.length)", written: "" },
  cycle: { source: "(s) => { const o: any = { s }; o.self = o; return o; }", written: "" },
  proxy: { source: "(s) => new Proxy({}, { ownKeys() { throw new Error(s); }, get() { throw new Error(s); } })", written: "" },
  getter: { source: "(s) => ({ get x() { throw new Error(s); } })", written: "" },
  toJSON: { source: "(s) => ({ toJSON() { throw new Error(s); } })", written: "" },
  "throw with a throwing name": { source: "(s) => { throw Object.create(Error.prototype, { name: { get() { throw new Error(s); } } }); }", written: "" },
  "throw without a prototype": { source: "(s) => { throw Object.assign(Object.create(null), { s }); }", written: "" },
  "throw a Classified value": { source: "(s) => { throw key; }", written: "" },
};

it("a map function's value that is no JSON value, or a throw that cannot be read as text, shows the script nothing; the next map computes", async () => {
  writeFileSync(path.join(dir, ".env"), `${canary}\n`);
  const sink = path.join(dir, "..", `${path.basename(dir)}-sink.txt`);
  const names = Object.keys(KINDS);
  writeFileSync(
    path.join(dir, "kinds.ts"),
    `requestFileSystem(".", (fs) => {
  const secret: any = fs.readClassified(".env");
  const key: any = classify("captured");
${names.map((name, i) => `  const v${i} = secret.map(${KINDS[name]!.source});\n  fs.writeClassified(".env.kind${i}", v${i});\n  println(${JSON.stringify(name)}, v${i}, String(v${i}), JSON.stringify(v${i}));`).join("\n")}
  fs.writeClassified(".env.after", secret.map((s: string) => s.trim().length));
  println("done");
});
`,
  );
  const r = await runCli(["run", "--no-check", "--secure-output", sink, "kinds.ts"], { cwd: dir });
  const secure = readFileSync(sink, "utf8");
  rmSync(sink, { force: true });
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  expect(r.stdout).toBe(names.map((name) => `${name} Classified(***) Classified(***) "Classified(***)"\n`).join("") + "done\n");
  names.forEach((name, i) => expect(readFileSync(path.join(dir, `.env.kind${i}`), "utf8"), name).toBe(KINDS[name]!.written));
  expect(readFileSync(path.join(dir, ".env.after"), "utf8")).toBe(String(canary.length));
  // Each failure is said where the person reads (the secure output), the evaluator's end too.
  expect(secure.match(/^\[tacit\] map failed: /gm)?.length).toBe(names.filter((name) => KINDS[name]!.written === "").length);
  expect(secure.match(/^\[tacit\] map failed: the function threw a value that could not be read as text/gm)?.length).toBe(3);
  expect(secure).not.toContain("the evaluator exited");
});
