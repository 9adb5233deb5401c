// --classified-paths splits its list at commas outside braces (cli/main.ts, patternItems), and did
// at a comma inside a class too: `secret[,_]txt` (gitignore's class of "," and "_", as in a config
// file) became the patterns "secret[" and "_]txt", which classify neither secret,txt nor secret_txt,
// and a script read both as text; a "{" in a class (`x[{]`) counted as a brace opened, and a later
// "}" closed it, so the commas between joined two patterns into one. Through the real CLI, with a
// real Deno.

import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, makeCanary, realTempDir, tacit } from "./fixtures.js";

let root: string;
let cleanup: () => void;
const canaries = { comma: makeCanary(), underscore: makeCanary(), brace: makeCanary(), token: makeCanary() };
const files = { comma: "secret,txt", underscore: "secret_txt", brace: "x{", token: "token}" };

beforeAll(() => {
  ({ dir: root, cleanup } = realTempDir("tacit-classified-flag-class-"));
  for (const [label, name] of Object.entries(files)) writeFileSync(path.join(root, name), `TOKEN=${canaries[label as keyof typeof files]}\n`);
  writeFileSync(path.join(root, "plain.txt"), "TOKEN=none\n");
});
afterAll(() => cleanup());

const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  for (const [label, name] of Object.entries(${JSON.stringify(files)})) attempt("read " + label, () => fs.access(name).read());
  attempt("plain", () => fs.access("plain.txt").read().length > 0);
});
`;

describe("--classified-paths with a comma or a brace inside a class", () => {
  it("keeps the class in its pattern: each file it names is classified", async () => {
    const r = await tacit(root, script, ["--classified-paths", ".env,secret[,_]txt,x[{],token[}]", "--quiet"]);
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    for (const label of Object.keys(files)) expect(attemptOf(found, `read ${label}`).status, label).toBe("SecurityError");
    expect(attemptOf(found, "plain")).toEqual({ status: "ok", value: true });
    for (const canary of Object.values(canaries)) expect(r.stdout + r.stderr).not.toContain(canary);
  }, 60_000);

  it("classifies the patterns between a \"[\" and a later \"]\" too, as split at every comma", async () => {
    const { dir, cleanup: done } = realTempDir("tacit-classified-flag-class-split-");
    try {
      const canary = makeCanary();
      writeFileSync(path.join(dir, ".env"), `TOKEN=${canary}\n`);
      const r = await tacit(dir, `${ATTEMPT_PRELUDE}\nrequestFileSystem(".", (fs) => attempt("read", () => fs.access(".env").read()));\n`, [
        "--classified-paths",
        "data[,.env,x]",
        "--quiet",
      ]);
      expect(r.code, r.stderr).toBe(0);
      expect(attemptOf(attempts(r.stdout), "read").status).toBe("SecurityError");
      expect(r.stdout + r.stderr).not.toContain(canary);
    } finally {
      done();
    }
  }, 60_000);
});

