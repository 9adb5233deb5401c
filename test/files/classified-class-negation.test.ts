// A classified pattern's "[!…]" class, as gitignore reads it: every character but those
// listed. picomatch 4 read "[!e]" as the class of "!" and "e", so an operator's
// --classified-paths ".env,.env.[!e]*" (every .env.* but the committed .env.example) classified
// .env.example and left .env.production, and every other .env.*, readable as plain text by
// read(), grep() and grepRecursive(). Through the real CLI, with a real Deno; and at unit level.

import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClassifiedPaths } from "../../runner/fs/classified-paths.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, makeCanary, realTempDir, tacit } from "./fixtures.js";

let root: string;
let cleanup: () => void;
const production = makeCanary();
const local = makeCanary();

beforeAll(() => {
  ({ dir: root, cleanup } = realTempDir("tacit-classified-class-"));
  writeFileSync(path.join(root, ".env.production"), `TOKEN=${production}\n`);
  writeFileSync(path.join(root, ".env.local"), `TOKEN=${local}\n`);
  writeFileSync(path.join(root, ".env.example"), "TOKEN=put-yours-here\n");
});
afterAll(() => cleanup());

describe('a classified pattern with "[!…]"', () => {
  it("classifies every name but those the class leaves out: .env.production stays secret, .env.example is readable", async () => {
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("read production", () => fs.access(".env.production").read());
  attempt("grep local", () => fs.grep(".env.local", "TOKEN"));
  attempt("classified flags", () => [".env.production", ".env.local", ".env.example"].map((name) => fs.access(name).isClassified));
  attempt("read example", () => fs.access(".env.example").read());
  attempt("grepRecursive", () => fs.grepRecursive(".", "TOKEN").map((m) => m.file.slice(fs.root.length + 1) + ":" + m.line));
  attempt("readClassified production", () => String(fs.readClassified(".env.production")));
});
`;
    const r = await tacit(root, script, ["--classified-paths", ".env,.env.[!e]*", "--quiet"]);
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    expect(attemptOf(found, "read production").status).toBe("SecurityError");
    expect(attemptOf(found, "grep local").status).toBe("SecurityError");
    expect(attemptOf(found, "classified flags")).toEqual({ status: "ok", value: [true, true, false] });
    expect(attemptOf(found, "read example")).toEqual({ status: "ok", value: "TOKEN=put-yours-here\n" });
    expect(attemptOf(found, "grepRecursive")).toEqual({ status: "ok", value: [".env.example:TOKEN=put-yours-here"] });
    expect(attemptOf(found, "readClassified production")).toEqual({ status: "ok", value: "Classified(***)" });
    for (const canary of [production, local]) {
      expect(r.stdout).not.toContain(canary);
      expect(r.stderr).not.toContain(canary);
    }
  }, 60_000);

  it("reads [!…] and [^…] alike, and leaves a class without '!' as it was (unit)", () => {
    for (const pattern of [".env.[!e]*", ".env.[^e]*"]) {
      const classified = new ClassifiedPaths([pattern]);
      expect(classified.matches("/p/.env.production"), pattern).toBe(true);
      expect(classified.matches("/p/.env.example"), pattern).toBe(false);
    }
    const anchored = new ClassifiedPaths(["srv/[!p]*/keys"]);
    expect(anchored.matches("/srv/app/keys/k")).toBe(true);
    expect(anchored.matches("/srv/public/keys/k")).toBe(false);
    // A class's text is still a name it matches (picomatch's exact-text match), so nothing is classified less.
    const plain = new ClassifiedPaths(["[id]"]);
    expect(["/a/[id]", "/a/i", "/a/x"].map((p) => plain.matches(p))).toEqual([true, true, false]);
  });
});
