// Without --secure-output, a printed Classified value's plaintext (and why a value could not be
// computed) went nowhere without a word. tacit now says so once a run, on stderr (and in --json's
// warnings). The warning depends on the print call alone: on which of its values are Classified,
// which the script knows, never on a value's plaintext, on whether it is computed yet, or on
// whether it could be, so it tells the script nothing of a secret.

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { CLASSIFIED_PRINTED_NOWHERE } from "../../runner/monitor.js";
import { makeCanary, realTempDir, tacit } from "./fixtures.js";

let root: string;
let work: string;
let cleanup: () => void;
const canary = makeCanary();

beforeAll(() => {
  ({ dir: root, cleanup } = realTempDir("tacit-classified-printed-"));
  work = path.join(root, "work");
  mkdirSync(work);
});
afterAll(() => cleanup());

const WARNING = `tacit: warning: ${CLASSIFIED_PRINTED_NOWHERE}\n`;
const env = () => ({ TACIT_HOME: path.join(root, "home") });

/**
 * Prints a value computed from the secret by a function that fails for some secrets, one that
 * takes a second for others (waiting, not spinning: as slow, without a core), and one that works
 * for the rest, then the secret itself.
 */
const SCRIPT = `requestFileSystem(".", (fs) => {
  const secret = fs.readClassified(".env");
  const computed = secret.map((v) => {
    if (v.startsWith("fail")) throw new Error("failed on the secret");
    if (v.startsWith("slow")) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000);
    return v.length;
  });
  println("computed:", computed);
  println("secret:", secret);
});
println("done");
`;

it("a Classified value printed with no secure output is said once on stderr, whatever the secret, and whether its value could be computed", async () => {
  const runs = [];
  for (const secret of [`fail-${canary}`, `slow-${canary}`, `works-${canary}`]) {
    writeFileSync(path.join(work, ".env"), secret);
    runs.push(await tacit(work, SCRIPT, [], env()));
  }
  for (const r of runs) {
    expect(r.stderr).toBe(WARNING);
    expect(r.stdout).toBe("computed: Classified(***)\nsecret: Classified(***)\ndone\n");
    expect(r.code).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(canary);
  }
});

it("--json carries it in warnings, counted by the prints that held a Classified value", async () => {
  writeFileSync(path.join(work, ".env"), `fail-${canary}`);
  const r = await tacit(work, SCRIPT, ["--json"], env());
  expect(r.code).toBe(0);
  const result = JSON.parse(r.stdout) as { warnings: string[]; stdout: string };
  expect(result.warnings).toEqual([`${CLASSIFIED_PRINTED_NOWHERE} (given 2 times)`]);
  expect(r.stdout).not.toContain(canary);
});

it("is not said with a secure output (which gets the plaintext), nor for a run that prints no Classified value", async () => {
  writeFileSync(path.join(work, ".env"), `works-${canary}`);
  const sink = path.join(root, "sink.txt");
  const withSink = await tacit(work, SCRIPT, ["--secure-output", sink], env());
  expect(withSink.stderr).toBe("");
  expect(withSink.stdout).toBe("computed: Classified(***)\nsecret: Classified(***)\ndone\n");
  expect(readFileSync(sink, "utf8")).toBe(`computed: ${`works-${canary}`.length}\nsecret: works-${canary}\ndone\n`);
  const plain = await tacit(work, `const secret = classify("x");\nprintln(String(secret).length, "plain");\n`, [], env());
  expect(plain.stderr).toBe("");
  expect(plain.stdout).toBe("15 plain\n");
});
